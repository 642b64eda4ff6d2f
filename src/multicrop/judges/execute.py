"""Perform planned calls: workers make them, one writer records what became of each.

Calls run on one asyncio loop with bounded concurrency, a per-call timeout and
retries with exponential backoff and jitter on 429 / 5xx / timeouts (a
``Retry-After`` header wins; :mod:`multicrop.judges.retries`).  Each worker
turns a planned call into one :class:`~multicrop.judges.outcomes.Outcome`
and puts it on a queue; one writer task takes the outcomes
in small batches and commits each batch in one transaction as it arrives, so
a killed process loses only calls in flight.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import ImageLoadError
from .backends import JudgeBackend
from .clock import SYSTEM_CLOCK, Clock
from .config import RunConfig
from .plan import PlannedCall
from .prompts import ParsedReply, parse_reply, reply_schema, typed_score
from .store import CallRecord, CallStore, new_owner
from .types import JudgeRequest
from .workqueue import WorkQueue
from .outcomes import Outcome, OutcomeKind, RunSummary
from .retries import Attempts, FamilyHealth, call_with_retries

__all__ = ["RunSummary", "OutcomeKind", "Outcome", "Attempts", "FamilyHealth", "call_with_retries",
           "execute_calls", "storable_record", "MAX_RAW_REPLY"]


class _Execution:
    """The state of one execution: workers, the writer, and what they share."""

    def __init__(self, backends: dict[str, JudgeBackend], store: CallStore, *, temperature: float,
                 config: RunConfig, summary: RunSummary,
                 on_progress: Callable[[int, int, float], None] | None,
                 on_bad_image: Callable[[str, str], None] | None, owner: str, run_id: int | None,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self.backends, self.store, self.temperature = backends, store, temperature
        self.clock = clock
        self.owner, self.run_id = owner, run_id
        self.cfg, self.summary = config, summary
        self.on_progress, self.on_bad_image = on_progress, on_bad_image
        self.rng = random.Random()
        self.health = {name: FamilyHealth(config.max_connection_errors) for name in backends}
        self.bad_images: dict[str, str] = {}  # image sha256 -> problem
        self.stopped_reported: set[str] = set()
        self.schemas: dict[tuple[int, int], dict] = {}
        self.queue: asyncio.Queue[Outcome | None] = asyncio.Queue()  # None: no more outcomes
        self.outstanding: Counter[str] = Counter()

    async def run(self, calls: Sequence[PlannedCall]) -> None:
        self.outstanding.update(c.image.sha256 for c in calls)
        todo = WorkQueue(calls, self.store, owner=self.owner, lease_s=self.cfg.lease_s, chunk=self.cfg.concurrency)
        writer = asyncio.create_task(self.write())
        renewer = asyncio.create_task(self.renew(todo))
        workers = [asyncio.create_task(self.work(todo)) for _ in range(min(self.cfg.concurrency, len(calls)))]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        finally:
            renewer.cancel()
            await asyncio.gather(renewer, return_exceptions=True)
            self.queue.put_nowait(None)
            await writer
            todo.release_all()
            self.summary.done_elsewhere += todo.done_elsewhere

    async def renew(self, todo: WorkQueue) -> None:
        """Renew this run's claims every third of a lease, until cancelled."""
        while True:
            await asyncio.sleep(self.cfg.lease_s / 3)
            todo.renew()

    # Workers ---------------------------------------------------------------
    async def work(self, todo: WorkQueue) -> None:
        while (call := await todo.next()) is not None:
            self.queue.put_nowait(await self.perform(call))
            self.done_with(call)

    async def perform(self, call: PlannedCall) -> Outcome:
        """Make one call (or decide not to) and say what became of it."""
        if call.image.sha256 in self.bad_images:
            return Outcome(OutcomeKind.SKIPPED, call)
        health = self.health[call.family.name]
        if health.stopped:
            return Outcome(OutcomeKind.ABANDONED, call)
        backend = self.backends[call.family.name]
        try:
            tried = await call_with_retries(backend, self.request(call, backend), self.cfg, self.rng, health,
                                            clock=self.clock)
        except ImageLoadError as exc:
            return self.image_unreadable(call, str(exc))
        self.summary.retries += tried.retries
        if tried.abandoned:
            if call.family.name not in self.stopped_reported:
                self.stopped_reported.add(call.family.name)
                self.summary.stopped_families.append((call.family.name, health.why_stopped()))
            return Outcome(OutcomeKind.ABANDONED, call)
        if tried.reply is None:
            return Outcome(OutcomeKind.FAILED, call, error=tried.error, attempts=tried.attempts)
        return Outcome(OutcomeKind.RECORDED, call, record=self.record(call, backend, tried), attempts=tried.attempts)

    def request(self, call: PlannedCall, backend: JudgeBackend) -> JudgeRequest:
        p = call.prompt
        schema = None
        if backend.supports_json_schema:
            schema = self.schemas.get(p.scale)
            if schema is None:
                schema = self.schemas[p.scale] = reply_schema(p.scale)
        return JudgeRequest(prompt=p.text, prompt_kind=p.kind, dimension=p.dimension, scale=p.scale,
                            image=call.image, temperature=self.temperature, repetition=call.repetition,
                            json_schema=schema, timeout_s=self.cfg.timeout_s)

    def record(self, call: PlannedCall, backend: JudgeBackend, tried: Attempts) -> CallRecord:
        """The record of a paid answer; always storable (see :func:`storable_record`)."""
        reply, p = tried.reply, call.prompt
        try:
            if reply.error is not None:
                parsed = ParsedReply(math.nan, None, reply.error)
            elif reply.score is not None:
                parsed = typed_score(reply.score, reply.reason, scale=p.scale)
            else:
                parsed = parse_reply(reply.text, scale=p.scale)
        except Exception as exc:  # noqa: BLE001 - a reply we cannot read is a parse failure, never a lost call
            parsed = ParsedReply(math.nan, None, f"reply could not be parsed ({type(exc).__name__}: {exc})")
        return storable_record(
            key_json=call.key_json, family=call.family.name, backend=backend.name, model_requested=backend.model_id,
            model_returned=reply.model, image=call.image.label, image_sha256=call.image.sha256,
            prompt_kind=p.kind, dimension=p.dimension, template=p.template.ref,
            rubric_sha256=call.rubric_sha256, temperature=self.temperature, repetition=call.repetition,
            prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
            cost_usd=reply.cost_usd, latency_s=tried.latency_s, attempts=tried.attempts, raw_reply=reply.text,
            score=None if parsed.error else parsed.score, reason=parsed.reason, parse_error=parsed.error,
        )

    def image_unreadable(self, call: PlannedCall, problem: str) -> Outcome:
        """Skip the call; the first of its image is reported and logged (once per image)."""
        if call.image.sha256 in self.bad_images:
            return Outcome(OutcomeKind.SKIPPED, call)
        self.bad_images[call.image.sha256] = problem
        self.summary.bad_images.append((call.image.label, problem))
        if self.on_bad_image:
            self.on_bad_image(call.image.label, problem)
        return Outcome(OutcomeKind.SKIPPED, call, error=f"image unreadable: {problem}")

    def done_with(self, call: PlannedCall) -> None:
        """Release an image's cached pixels once its last call is done."""
        self.outstanding[call.image.sha256] -= 1
        if self.outstanding[call.image.sha256] == 0:
            call.image.release()

    # Writer ----------------------------------------------------------------
    async def write(self) -> None:
        while True:
            batch: list[Outcome] = []
            item = await self.queue.get()
            while item is not None:
                batch.append(item)
                if self.queue.empty() or len(batch) >= self.cfg.batch_max:
                    break
                item = self.queue.get_nowait()
            self.commit(batch)
            if item is None:
                return

    def commit(self, batch: list[Outcome]) -> None:
        """Record one batch in one transaction and add it to the summary."""
        recorded = [o for o in batch if o.kind is OutcomeKind.RECORDED]
        records = [o.record for o in recorded]
        self.store.record(records, failures=[o.failure_row() for o in batch if o.error is not None],
                          prompts=[o.call.prompt.text for o in recorded], run_id=self.run_id, owner=self.owner,
                          release=[o.call.key for o in batch if o.kind is not OutcomeKind.RECORDED])
        failed = [o for o in batch if o.kind is OutcomeKind.FAILED]
        for o in failed[:max(0, 20 - len(self.summary.failures))]:
            self.summary.failures.append((o.call.key, o.error))
        kinds = Counter(o.kind for o in batch)
        cost = sum(r.cost_usd or 0.0 for r in records)
        s = self.summary
        s.performed += len(records)
        s.parse_failures += sum(r.parse_error is not None for r in records)
        s.failed += len(failed)
        s.skipped += kinds[OutcomeKind.SKIPPED]
        s.abandoned += kinds[OutcomeKind.ABANDONED]
        s.cost_usd += cost
        if self.on_progress and batch:
            self.on_progress(len(batch), len(failed), cost)


#: Longest raw reply kept (UTF-8 bytes), JSON bodies included: a 50 MB answer is not stored 50 MB a call.
MAX_RAW_REPLY = 65536
#: Longest reason or parse error kept (UTF-8 bytes).
MAX_REASON = 8192


def _storable_text(text: Any, limit: int) -> Any:
    """``text`` as SQLite can store it: lone surrogates escaped (``\\ud800``), capped at ``limit`` UTF-8 bytes."""
    if not isinstance(text, str):
        return text
    data = text.encode("utf-8", "backslashreplace")
    if len(data) > limit:
        data = data[:limit]
        return data.decode("utf-8", "ignore") + f" [... cut: {len(text):,} characters in all]"
    return data.decode("utf-8")


def storable_record(**values: Any) -> CallRecord:
    """A :class:`CallRecord` from a reply's values that the store always accepts.

    Text fields are made storable and capped (:data:`MAX_RAW_REPLY`,
    :data:`MAX_REASON`); when the values as parsed cannot make a record (a
    count or cost out of range, a score that is not a number), the call is
    kept as a parse failure whose ``parse_error`` says why, with the values
    that are valid: the answer was paid for, so a rerun must not pay again.
    """
    for name, limit in (("raw_reply", MAX_RAW_REPLY), ("reason", MAX_REASON), ("parse_error", MAX_REASON),
                        ("model_returned", 512), ("image", 4096)):
        values[name] = _storable_text(values.get(name), limit)
    try:
        return CallRecord.new(**values)
    except (ValueError, TypeError, OverflowError) as exc:
        why = _storable_text(f"reply cannot be stored as parsed: {exc}", MAX_REASON)
        counts = ("prompt_tokens", "completion_tokens", "cost_usd")
        fixed = {**values, "score": None, "reason": None, "parse_error": why, **dict.fromkeys(counts)}
        for name in counts:  # keep each count that is valid on its own
            try:
                CallRecord.new(**{**fixed, name: values.get(name)})
            except (ValueError, TypeError, OverflowError):
                continue
            fixed[name] = values.get(name)
        return CallRecord.new(**fixed)


async def execute_calls(calls: Sequence[PlannedCall], backends: dict[str, JudgeBackend], store: CallStore, *,
                        temperature: float, config: RunConfig, summary: RunSummary,
                        on_progress: Callable[[int, int, float], None] | None = None,
                        on_bad_image: Callable[[str, str], None] | None = None, owner: str | None = None,
                        run_id: int | None = None, clock: Clock | None = None) -> None:
    """Make ``calls`` (each key once), recording every outcome in ``store`` and ``summary``.

    Each call is claimed in the store before it is made
    (:class:`~multicrop.judges.workqueue.WorkQueue`): a call that another run
    over the same store holds or has recorded is not made here
    (``summary.done_elsewhere`` counts those recorded meanwhile).

    Parameters
    ----------
    calls : sequence of PlannedCall
        The calls to make, none of them in the store yet.
    backends : dict
        Family name -> prepared backend.
    temperature : float
        The panel's temperature (sent with every request and recorded).
    on_progress : callable(n_calls, n_failed, cost_usd), optional
        Called by the writer after each committed batch.
    on_bad_image : callable(image_label, problem), optional
        Called once per image that cannot be read.
    owner : str, optional
        This run's name in the store's claims (default: a new one).
    run_id : int, optional
        The ``runs`` row the recorded calls point to.

    Raises
    ------
    JudgeError
        A backend became unusable; completed calls are committed before it propagates.
    """
    run = _Execution(backends, store, temperature=temperature, config=config, summary=summary,
                     on_progress=on_progress, on_bad_image=on_bad_image, owner=owner or new_owner(),
                     run_id=run_id, clock=clock or SYSTEM_CLOCK)
    await run.run(calls)
