"""Run a panel over images: plan every call, perform only the missing ones.

Every call has a key: the prefix-named SHA-256 of the canonical JSON of the
backend (and its version and reply-changing options), model, prompt template
and version, dimension, rubric SHA-256, image SHA-256, temperature and
repetition index.  A call whose key is in the store is never made again, so
re-running the same command after a crash performs only the missing calls.

Calls run on one asyncio loop with bounded concurrency, a per-call timeout and
retries with exponential backoff and jitter on 429 / 5xx / timeouts (a
``Retry-After`` header wins).  One writer task commits completed calls in
small batches as they arrive: a killed process loses only calls in flight.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ImageLoadError, InvalidParameterError
from ..hashing import canonical_json, hash_text
from .store import CallRecord, CallStore
from .backends import CallFailedError, ConnectionCallError, JudgeBackend, TransientCallError
from .panel import Family, Panel, check_distinct_families
from .prompts import (DIMENSION_TEMPLATE, HOLISTIC_TEMPLATE, ParsedReply, Prompt, build_prompt, parse_reply,
                      reply_schema)
from .rubric import Rubric, load_rubric
from ..schema import TABLE_COLUMNS
from .types import ImageRef, JudgeRequest

__all__ = ["RunConfig", "PlannedCall", "RunSummary", "TABLE_COLUMNS", "plan_calls", "run_panel",
           "judge_images", "scores_table", "write_table"]



@dataclass(frozen=True)
class RunConfig:
    """Execution settings (none of them enters a call key).

    Attributes
    ----------
    concurrency : int
        Calls in flight at once.
    timeout_s : float
        Per-call timeout.
    max_retries : int
        Retries of a transient failure before the call is logged as failed.
    backoff_base_s, backoff_max_s : float
        Exponential backoff ``base * 2**attempt`` with full jitter, capped.
    retry_after_max_s : float
        Longest ``Retry-After`` honoured.
    batch_max : int
        Most calls committed in one transaction by the writer.
    max_connection_errors : int
        A family whose endpoint cannot be reached this many times in a row
        (attempts, retries included, with no successful reply in between) is
        stopped: its remaining calls are not made (they stay missing for a
        rerun), it is listed in ``RunSummary.stopped_families``, and the other
        families run on.
    """

    concurrency: int = 16
    timeout_s: float = 60.0
    max_retries: int = 5
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    retry_after_max_s: float = 120.0
    batch_max: int = 256
    max_connection_errors: int = 20

    def __post_init__(self) -> None:
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise InvalidParameterError(f"concurrency must be an integer >= 1, got {self.concurrency!r}")
        if not self.timeout_s > 0:
            raise InvalidParameterError(f"timeout_s must be > 0, got {self.timeout_s!r}")
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise InvalidParameterError(f"max_retries must be an integer >= 0, got {self.max_retries!r}")
        if not isinstance(self.max_connection_errors, int) or self.max_connection_errors < 1:
            raise InvalidParameterError(
                f"max_connection_errors must be an integer >= 1, got {self.max_connection_errors!r}")


@dataclass(frozen=True)
class PlannedCall:
    """One call of the plan (``rubric_sha256`` is the one inside ``key_json``)."""

    key: str
    key_json: str
    family: Family
    image: ImageRef
    prompt: Prompt
    repetition: int
    rubric_sha256: str


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
    abandoned: int = 0  # calls not made because their family was stopped
    stopped_families: list[tuple[str, str]] = field(default_factory=list)  # (family, why)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (call_key, error), first 20
    bad_images: list[tuple[str, str]] = field(default_factory=list)  # (image label, problem), each once

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in ("planned", "already_done", "performed", "parse_failures",
                                            "failed", "skipped", "identical", "abandoned", "retries", "cost_usd",
                                            "elapsed_s")}
        d["bad_images"] = [{"image": label, "error": err} for label, err in self.bad_images]
        d["stopped_families"] = [{"family": f, "error": err} for f, err in self.stopped_families]
        return d


_IMG, _REP = "\u0000image\u0000", -987654321
_SKIPPED = object()  # queue marker: a call skipped because its image is unreadable
_ABANDONED = object()  # queue marker: a call not made because its family was stopped


class _FamilyHealth:
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


def plan_calls(images: Sequence[ImageRef], panel: Panel, backends: dict[str, JudgeBackend],
               rubric: Rubric | None = None) -> list[PlannedCall]:
    """Every call of ``panel`` over ``images``, image-major, with its key.

    ``backends`` maps family names to created backends (their versions and
    reply-changing options enter the keys).

    Raises
    ------
    InvalidParameterError
        Two families would make the same calls (same backend, version, model
        and key options): their records would collide in the store.
    """
    rubric = rubric or load_rubric()
    identities = {f.name: backends[f.name].identity(backends[f.name].model_id, backends[f.name].options)
                  for f in panel.families}
    check_distinct_families(identities)
    prompts = [build_prompt(HOLISTIC_TEMPLATE, rubric)] * (panel.holistic_repetitions > 0)
    if panel.dimension_repetitions > 0:
        prompts += [build_prompt(DIMENSION_TEMPLATE, rubric, d) for d in rubric.dimension_ids]
    # Canonical JSON with placeholders, filled per image and repetition: the
    # same bytes as canonical_json() of the full dict, at a fraction of the cost.
    templates = []
    for fam in panel.families:
        be = backends[fam.name]
        for p in prompts:
            reps = panel.holistic_repetitions if p.kind == HOLISTIC_TEMPLATE.id else panel.dimension_repetitions
            fields = {
                **identities[fam.name], "template": p.template.ref, "dimension": p.dimension,
                "rubric_sha256": rubric.sha256, "image_sha256": _IMG, "temperature": panel.temperature,
                "repetition": _REP,
            }
            tpl = canonical_json(fields)
            head, rest = tpl.split(f'"{_IMG}"'.replace("\u0000", "\\u0000"))
            mid, tail = rest.split(str(_REP))
            templates.append((fam, p, reps, head, mid, tail))
    plan: list[PlannedCall] = []
    for img in images:
        sha = f'"{img.sha256}"'
        for fam, p, reps, head, mid, tail in templates:
            pre = head + sha + mid
            for r in range(reps):
                kj = f"{pre}{r}{tail}"
                plan.append(PlannedCall(hash_text(kj), kj, fam, img, p, r, rubric.sha256))
    return plan


async def _call_with_retries(backend: JudgeBackend, req: JudgeRequest, cfg: RunConfig, rng: random.Random,
                             health: _FamilyHealth | None = None):
    """Returns ``(reply | None, error | None, attempts, latency_s, retries)``.

    ``error`` is ``_ABANDONED`` when ``health`` says the family was stopped
    (by this call's or another call's connection errors).
    """
    health = health or _FamilyHealth(cfg.max_connection_errors)
    attempt = 0
    while True:
        if health.stopped:
            return None, _ABANDONED, attempt, None, max(attempt - 1, 0)
        attempt += 1
        t0 = time.perf_counter()
        try:
            async with asyncio.timeout(cfg.timeout_s * 1.5 + 1.0):
                reply = await backend.execute(req)
            health.reply()
            return reply, None, attempt, time.perf_counter() - t0, attempt - 1
        except (TransientCallError, TimeoutError) as exc:
            if isinstance(exc, ConnectionCallError):
                health.connection_error(str(exc))
                if health.stopped:
                    continue
            if attempt > cfg.max_retries:
                msg = str(exc) or f"timed out after {cfg.timeout_s:g} s"
                return None, f"gave up after {attempt} attempts: {msg}", attempt, None, attempt - 1
            retry_after = getattr(exc, "retry_after", None)
            if retry_after is not None:
                delay = min(retry_after, cfg.retry_after_max_s)
            else:
                delay = rng.uniform(0.0, min(cfg.backoff_max_s, cfg.backoff_base_s * 2 ** (attempt - 1)))
            await asyncio.sleep(delay)
        except CallFailedError as exc:
            health.reply()  # the service answered
            return None, str(exc), attempt, None, attempt - 1


async def run_panel(
    images: Sequence[ImageRef],
    panel: Panel,
    store: CallStore,
    *,
    config: RunConfig | None = None,
    rubric: Rubric | None = None,
    on_progress: Callable[[int, int, float], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_bad_image: Callable[[str, str], None] | None = None,
    backends: dict[str, JudgeBackend] | None = None,
) -> tuple[RunSummary, list[PlannedCall]]:
    """Perform the missing calls of ``panel`` over ``images``, recording each in ``store``.

    Parameters
    ----------
    on_start : callable(total_missing, already_done), optional
    on_progress : callable(n_newly_recorded, n_failed, cost_usd), optional
        Called by the writer after each committed batch.
    on_bad_image : callable(image_label, problem), optional
        Called once per image that cannot be read; its calls are skipped
        (``summary.skipped``), the other images run on.
    backends : dict, optional
        Family name -> backend already created with ``Family.create()`` (so a
        caller can fail on credentials before opening anything); closed at
        the end like the ones created here.

    Returns
    -------
    (RunSummary, plan)

    Raises
    ------
    JudgeError
        A backend became unusable (e.g. authentication failed); completed
        calls are committed before it propagates.
    """
    cfg = config or RunConfig()
    rubric = rubric or load_rubric()
    t_start = time.perf_counter()
    given = dict(backends or {})
    backends = {}
    try:
        for fam in panel.families:
            backends[fam.name] = given.get(fam.name) or fam.create()
            backends[fam.name].prepare(concurrency=cfg.concurrency)
        plan = plan_calls(images, panel, backends, rubric)
        done = store.completed_keys()
        # Identical images (same bytes) share every key: each missing key is paid for once.
        first: dict[str, PlannedCall] = {}
        n_missing = 0
        for c in plan:
            if c.key not in done:
                n_missing += 1
                first.setdefault(c.key, c)
        missing = list(first.values())
        summary = RunSummary(planned=len(plan), already_done=len(plan) - n_missing,
                             identical=n_missing - len(missing))
        if on_start:
            on_start(len(missing), summary.already_done)
        if missing:
            await _execute(missing, backends, panel, store, cfg, summary, on_progress, on_bad_image)
    finally:
        for be in backends.values():
            await be.aclose()
    summary.elapsed_s = time.perf_counter() - t_start
    return summary, plan


async def _execute(missing, backends, panel, store, cfg, summary, on_progress, on_bad_image) -> None:
    rng = random.Random()
    bad: dict[str, str] = {}  # image sha256 -> problem
    health = {name: _FamilyHealth(cfg.max_connection_errors) for name in backends}
    queue: asyncio.Queue = asyncio.Queue()
    outstanding = Counter(c.image.sha256 for c in missing)
    schemas: dict[tuple[int, int], dict] = {}

    async def writer() -> None:
        stop = False
        while not stop:
            items = [await queue.get()]
            while not queue.empty() and len(items) < cfg.batch_max:
                items.append(queue.get_nowait())
            records, failures, skipped, abandoned = [], [], 0, 0
            for it in items:
                if it is None:
                    stop = True
                elif it is _SKIPPED:
                    skipped += 1
                elif it is _ABANDONED:
                    abandoned += 1
                elif isinstance(it, CallRecord):
                    records.append(it)
                else:
                    failures.append(it)
            store.record(records, failures=[
                {"call_key": call.key, "family": call.family.name, "image": call.image.label, "error": err,
                 "attempts": attempts} for call, err, attempts in failures
            ])
            for call, err, attempts in failures:
                if attempts and len(summary.failures) < 20:
                    summary.failures.append((call.key, err))
            failures = [f for f in failures if f[2]]  # attempts == 0: an unreadable image, counted apart
            cost = sum(r.cost_usd or 0.0 for r in records)
            summary.performed += len(records)
            summary.parse_failures += sum(r.parse_error is not None for r in records)
            summary.failed += len(failures)
            summary.skipped += skipped
            summary.abandoned += abandoned
            summary.cost_usd += cost
            if on_progress and (records or failures or skipped or abandoned):
                on_progress(len(records) + len(failures) + skipped + abandoned, len(failures), cost)

    it = iter(missing)
    stopped_reported: set[str] = set()

    async def worker() -> None:
        for call in it:
            be = backends[call.family.name]
            p = call.prompt
            if call.image.sha256 in bad:
                queue.put_nowait(_SKIPPED)
                _done_with(call)
                continue
            fam_health = health[call.family.name]
            if fam_health.stopped:
                queue.put_nowait(_ABANDONED)
                _done_with(call)
                continue
            if be.supports_json_schema and p.scale not in schemas:
                schemas[p.scale] = reply_schema(p.scale)
            req = JudgeRequest(
                prompt=p.text, prompt_kind=p.kind, dimension=p.dimension, scale=p.scale, image=call.image,
                temperature=panel.temperature, repetition=call.repetition,
                json_schema=schemas.get(p.scale) if be.supports_json_schema else None, timeout_s=cfg.timeout_s,
            )
            try:
                reply, err, attempts, latency, retries = await _call_with_retries(be, req, cfg, rng, fam_health)
            except ImageLoadError as exc:
                queue.put_nowait(_SKIPPED)
                if call.image.sha256 not in bad:
                    bad[call.image.sha256] = str(exc)
                    summary.bad_images.append((call.image.label, str(exc)))
                    queue.put_nowait((call, f"image unreadable: {exc}", 0))
                    if on_bad_image:
                        on_bad_image(call.image.label, str(exc))
                _done_with(call)
                continue
            summary.retries += retries
            if err is _ABANDONED:
                if call.family.name not in stopped_reported:
                    stopped_reported.add(call.family.name)
                    summary.stopped_families.append((call.family.name, (
                        f"stopped after {fam_health.streak} connection errors in a row with no reply "
                        f"(last: {fam_health.last})")))
                queue.put_nowait(_ABANDONED)
            elif reply is None:
                queue.put_nowait((call, err, attempts))
            else:
                parsed = (parse_reply(reply.text, scale=p.scale) if reply.error is None
                          else ParsedReply(math.nan, None, reply.error))
                queue.put_nowait(CallRecord.new(
                    key_json=call.key_json, family=call.family.name, backend=be.name, model_requested=be.model_id,
                    model_returned=reply.model, image=call.image.label, image_sha256=call.image.sha256,
                    prompt_kind=p.kind, dimension=p.dimension, template=p.template.ref,
                    rubric_sha256=call.rubric_sha256, temperature=panel.temperature, repetition=call.repetition,
                    prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
                    cost_usd=reply.cost_usd, latency_s=latency, attempts=attempts, raw_reply=reply.text,
                    score=None if parsed.error else parsed.score, reason=parsed.reason,
                    parse_error=parsed.error,
                ))
            _done_with(call)

    def _done_with(call: PlannedCall) -> None:
        outstanding[call.image.sha256] -= 1
        if outstanding[call.image.sha256] == 0:
            call.image.release()

    wtask = asyncio.create_task(writer())
    workers = [asyncio.create_task(worker()) for _ in range(min(cfg.concurrency, len(missing)))]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
    finally:
        queue.put_nowait(None)
        await wtask


def judge_images(images: Sequence[ImageRef], panel: Panel, store: CallStore, *,
                 config: RunConfig | None = None, **kwargs) -> tuple[RunSummary, list[PlannedCall]]:
    """Synchronous :func:`run_panel` (runs its own event loop)."""
    return asyncio.run(run_panel(images, panel, store, config=config, **kwargs))


def scores_table(plan: Sequence[PlannedCall], store: CallStore):
    """The tidy table of ``plan``'s completed calls.

    Returns
    -------
    pandas.DataFrame
        Exactly :data:`TABLE_COLUMNS`; ``score`` is NaN for replies that did not
        parse.  Calls that failed after all retries have no row.
    """
    import pandas as pd

    scores = store.scores()
    rows = [(c.image.label, c.family.name, c.prompt.kind, c.prompt.dimension, c.repetition, scores[c.key])
            for c in plan if c.key in scores]
    df = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    df["repetition"] = df["repetition"].astype("int64")
    df["score"] = df["score"].astype("float64")
    return df


def write_table(df, path: str | Path) -> None:
    """Write the table as CSV or Parquet, chosen by the extension (atomically).

    :func:`multicrop.io.tables.write_table`: an unparsed score is ``NaN`` in CSV.
    """
    from ..io.tables import write_table as _write

    _write(df, path)
