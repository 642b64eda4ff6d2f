"""Run a panel over images: plan every call, perform only the missing ones.

The steps, each in its own module:

1. :mod:`~multicrop.judges.plan` lists every call with its key (a content
   hash of everything that decides the reply);
2. the keys already in the :class:`~multicrop.judges.store.CallStore` are
   left out: a call whose key is recorded is never made again, so re-running
   the same command after a crash performs only the missing calls, and
   images with identical bytes share their calls;
3. :mod:`~multicrop.judges.execute` makes the missing calls (each claimed
   in the store first, so concurrent runs split the work) and commits what
   became of each as it arrives; the run is logged in the store's ``runs``
   table, and every call it made points to it;
4. :func:`scores_table` reads the tidy table of the plan back from the store.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
import time
from collections.abc import Callable, Sequence

from ..schema import TABLE_COLUMNS
from .backends import JudgeBackend
from .clock import Clock
from .config import RunConfig
from .execute import RunSummary, execute_calls
from .panel import Panel
from .plan import PlannedCall, plan_calls
from .rubric import Rubric, load_rubric
from ..hashing import canonical_json
from .store import CallStore, new_owner, redact
from .types import ImageRef

__all__ = ["RunConfig", "PlannedCall", "RunSummary", "TABLE_COLUMNS", "plan_calls", "missing_calls",
           "run_panel", "judge_images", "scores_table"]


def missing_calls(plan: Sequence[PlannedCall], done: set[str]) -> tuple[list[PlannedCall], int]:
    """The calls of ``plan`` whose keys are not in ``done``, each key once, in plan order.

    Identical images (same bytes) share every key, so each missing key is
    paid for once.

    Returns
    -------
    (calls, n_missing)
        ``n_missing`` counts every planned call not in ``done``, shared keys included.
    """
    first: dict[str, PlannedCall] = {}
    n_missing = 0
    for c in plan:
        if c.key not in done:
            n_missing += 1
            first.setdefault(c.key, c)
    return list(first.values()), n_missing


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
    command: str | None = None,
    clock: Clock | None = None,
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
    command : str, optional
        The command line logged with the run (default: this process's
        arguments); user-info in URLs is removed before it is stored.
    clock : Clock, optional
        What retry waits sleep by and ``Retry-After`` dates are measured
        against (default the system's; tests pass a
        :class:`~multicrop.judges.clock.ManualClock`, which never sleeps).

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
    created: dict[str, JudgeBackend] = {}  # filled as it goes: whatever was created is closed
    try:
        for fam in panel.families:
            created[fam.name] = given.get(fam.name) or fam.create()
            created[fam.name].prepare(concurrency=cfg.concurrency)
            if clock is not None:
                created[fam.name].clock = clock
        plan = plan_calls(images, panel, created, rubric)
        done = store.completed_keys()
        missing, n_missing = missing_calls(plan, done)
        deterministic = {name for name, be in created.items() if be.deterministic}
        collapsed = sum(1 for c in plan if c.repetition and c.family.name in deterministic and c.key not in done)
        summary = RunSummary(planned=len(plan), already_done=len(plan) - n_missing,
                             identical=n_missing - len(missing) - collapsed, collapsed=collapsed)
        if on_start:
            on_start(len(missing), summary.already_done)
        owner = new_owner()
        argv = sys.argv if command is None else shlex.split(command)
        run_id = store.begin_run(command=shlex.join(redact(list(argv))), owner=owner,
                                 panel_json=canonical_json(redact(panel.to_dict())))
        status = "failed"
        try:
            if missing:
                await execute_calls(missing, created, store, temperature=panel.temperature, config=cfg,
                                    summary=summary, on_progress=on_progress, on_bad_image=on_bad_image,
                                    owner=owner, run_id=run_id, clock=clock)
            status = "finished"
        except (KeyboardInterrupt, asyncio.CancelledError):
            status = "interrupted"
            raise
        finally:
            store.end_run(run_id, status=status, counts=summary.to_dict())
    finally:
        for be in created.values():
            await be.aclose()
    summary.elapsed_s = time.perf_counter() - t_start
    return summary, plan


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
        parse.  Calls that failed after all retries have no row.  Write it with
        :func:`multicrop.io.tables.write_table`.
    """
    import pandas as pd

    scores = store.scores(c.key for c in plan)  # checks only the records this table reuses
    rows = [(c.image.label, c.family.name, c.prompt.kind, c.prompt.dimension, c.repetition, scores[c.key])
            for c in plan if c.key in scores]
    df = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    df["repetition"] = df["repetition"].astype("int64")
    df["score"] = df["score"].astype("float64")
    return df
