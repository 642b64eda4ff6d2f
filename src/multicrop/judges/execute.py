"""Perform planned calls: workers make them, one writer records what became of each.

Calls run on one asyncio loop with bounded concurrency, a per-call timeout and
retries with exponential backoff and jitter on 429 / 5xx / timeouts (a
``Retry-After`` header wins).  Each worker turns a planned call into one
:class:`Outcome` and puts it on a queue; one writer task takes the outcomes
in small batches and commits each batch in one transaction as it arrives, so
a killed process loses only calls in flight.
"""

from __future__ import annotations

import asyncio
import enum
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ImageLoadError
from .backends import CallFailedError, ConnectionCallError, JudgeBackend, TransientCallError
from .clock import SYSTEM_CLOCK, Clock
from .config import RunConfig
from .plan import PlannedCall
from .prompts import ParsedReply, parse_reply, reply_schema, typed_score
from .store import CallRecord, CallStore, new_owner
from .types import JudgeReply, JudgeRequest
from .workqueue import WorkQueue

__all__ = ["RunSummary", "OutcomeKind", "Outcome", "Attempts", "FamilyHealth", "call_with_retries",
           "execute_calls", "storable_record", "MAX_RAW_REPLY"]


@dataclass
class RunSummary:
    """What a run did."""

    planned: int = 0
    already_done: int = 0
    performed: int = 0
    parse_failures: int = 0
    failed: int = 0
    retries: int = 0
    cost_usd: float = 0.0
    elapsed_s: float = 0.0
    skipped: int = 0  # calls not made because their image could not be read
    identical: int = 0  # missing calls shared with an identical image (same bytes), made once
    collapsed: int = 0  # missing repetitions of a deterministic family's prompt, served by its one call
    abandoned: int = 0  # calls not made because their family was stopped
    done_elsewhere: int = 0  # missing calls another run over the same store recorded meanwhile
    stopped_families: list[tuple[str, str]] = field(default_factory=list)  # (family, why)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (call_key, error), first 20
    bad_images: list[tuple[str, str]] = field(default_factory=list)  # (image label, problem), each once

    def to_dict(self) -> dict[str, Any]:
        """The summary as ``multicrop judge --json`` prints it.

        Written by hand, not by :mod:`multicrop.serialize`: the printed form
        names the parts of each pair (``{"image", "error"}``), leaves out the
        sample of failures, and keeps the counts in the order users read.
        """
        d: dict[str, Any] = {k: getattr(self, k) for k in (
            "planned", "already_done", "performed", "parse_failures", "failed", "skipped", "identical", "collapsed",
            "abandoned", "done_elsewhere", "retries", "cost_usd", "elapsed_s")}
        d["bad_images"] = [{"image": label, "error": err} for label, err in self.bad_images]
        d["stopped_families"] = [{"family": f, "error": err} for f, err in self.stopped_families]
        return d


class OutcomeKind(enum.Enum):
    """What became of one planned call."""

    RECORDED = "recorded"  # a reply came back (parsed or not): a completed call
    FAILED = "failed"  # no reply after every retry, or a permanent error: logged, stays missing
    SKIPPED = "skipped"  # its image cannot be read: not made, stays missing
    ABANDONED = "abandoned"  # its family was stopped: not made, stays missing


@dataclass(frozen=True)
class Outcome:
    """What became of one planned call; each worker sends one per call to the writer.

    Attributes
    ----------
    kind : OutcomeKind
    call : PlannedCall
    record : CallRecord or None
        The completed call (``RECORDED`` only).
    error : str or None
        Logged in the store's ``failures`` table when set: why a ``FAILED``
        call failed, or, on the first ``SKIPPED`` call of an image, why the
        image cannot be read (logged once per image).
    attempts : int
        Attempts made (0 for calls not made).
    """

    kind: OutcomeKind
    call: PlannedCall
    record: CallRecord | None = None
    error: str | None = None
    attempts: int = 0

    def failure_row(self) -> dict[str, Any]:
        """The ``failures`` row this outcome logs (see :meth:`CallStore.record`)."""
        return {"call_key": self.call.key, "family": self.call.family.name, "image": self.call.image.label,
                "error": self.error, "attempts": self.attempts}


@dataclass(frozen=True)
class Attempts:
    """How the attempts at one call ended.

    Exactly one of: a ``reply``; an ``error`` (gave up, or failed for good);
    ``abandoned`` (the family was stopped before or during the call).
    """

    reply: JudgeReply | None
    error: str | None
    abandoned: bool
    attempts: int
    latency_s: float | None
    retries: int


class FamilyHealth:
    """Consecutive connection errors of one family; stops it at a threshold."""

    __slots__ = ("limit", "streak", "stopped", "last")

    def __init__(self, limit: int) -> None:
        self.limit, self.streak, self.stopped, self.last = limit, 0, False, ""

    def connection_error(self, message: str) -> None:
        self.streak += 1
        self.last = message
        if self.streak >= self.limit:
            self.stopped = True

    def reply(self) -> None:
        self.streak = 0

    def why_stopped(self) -> str:
        return f"stopped after {self.streak} connection errors in a row with no reply (last: {self.last})"


def _backoff_s(exc: TransientCallError | TimeoutError, attempt: int, cfg: RunConfig, rng: random.Random) -> float:
    retry_after = getattr(exc, "retry_after", None)
    if retry_after is not None:
        return min(retry_after, cfg.retry_after_max_s)
    return rng.uniform(0.0, min(cfg.backoff_max_s, cfg.backoff_base_s * 2 ** (attempt - 1)))


async def call_with_retries(backend: JudgeBackend, request: JudgeRequest, cfg: RunConfig, rng: random.Random,
                            health: FamilyHealth | None = None, *, clock: Clock = SYSTEM_CLOCK) -> Attempts:
    """Run ``request``, retrying transient failures; never raises for a failed call.

    The waits between attempts are ``clock.sleep`` (:mod:`multicrop.judges.clock`).

    ``health`` counts the family's connection errors; once it says the family
    is stopped (by this call's or another call's errors) the call is abandoned.

    Raises
    ------
    JudgeError
        The backend became unusable (e.g. authentication failed).
    ImageLoadError
        The request's image cannot be read.
    """
    health = health or FamilyHealth(cfg.max_connection_errors)
    attempt = 0
    while True:
        if health.stopped:
            return Attempts(None, None, True, attempt, None, max(attempt - 1, 0))
        attempt += 1
        t0 = time.perf_counter()
        try:
            async with asyncio.timeout(cfg.timeout_s * 1.5 + 1.0):
                reply = await backend.execute(request)
            health.reply()
            return Attempts(reply, None, False, attempt, time.perf_counter() - t0, attempt - 1)
        except (TransientCallError, TimeoutError) as exc:
            if isinstance(exc, ConnectionCallError):
                health.connection_error(str(exc))
                if health.stopped:
                    continue
            if attempt > cfg.max_retries:
                msg = str(exc) or f"timed out after {cfg.timeout_s:g} s"
                return Attempts(None, f"gave up after {attempt} attempts: {msg}", False, attempt, None, attempt - 1)
            await clock.sleep(_backoff_s(exc, attempt, cfg, rng))
        except CallFailedError as exc:
            health.reply()  # the service answered
            return Attempts(None, str(exc), False, attempt, None, attempt - 1)


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
