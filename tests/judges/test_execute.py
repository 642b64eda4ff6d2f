"""Execution: retries, typed outcomes, and what the writer commits for each kind."""

import asyncio
import dataclasses
import random
import sqlite3

import numpy as np
import pytest

from multicrop.judges.clock import ManualClock
from multicrop.errors import ImageLoadError
from multicrop.judges.backends import CallFailedError, ConnectionCallError, JudgeBackend, TransientCallError
from multicrop.judges.execute import (FamilyHealth, Outcome, OutcomeKind, RunSummary, call_with_retries,
                                      execute_calls)
from multicrop.judges.panel import Family, Panel
from multicrop.judges.plan import plan_calls
from multicrop.judges.runner import RunConfig
from multicrop.judges.store import CallStore
from multicrop.judges.types import ImageRef, JudgeReply, JudgeRequest

_FAST = RunConfig(concurrency=2, max_retries=2, backoff_base_s=0.0001, max_connection_errors=3)


class Scripted(JudgeBackend):
    """Raises the scripted errors in turn, then answers 4; raises ImageLoadError for images labelled 'bad'."""

    name = "test-scripted"
    description = "scripted test backend"
    needs_network = False

    @dataclasses.dataclass(frozen=True)
    class Options:
        pass

    def __init__(self, *, model, errors=()):
        super().__init__(model=model)
        self.errors = list(errors)
        self.calls = 0

    async def execute(self, request):
        self.calls += 1
        if request.image.label == "bad":
            raise ImageLoadError("bad: not an image Pillow can read")
        if self.errors:
            raise self.errors.pop(0)
        return JudgeReply(text='{"score": 4, "reason": "r"}', model=self.model_id, prompt_tokens=1,
                          completion_tokens=1, cost_usd=0.5)


def _request():
    img = ImageRef(np.zeros((8, 8, 3), np.uint8))
    return JudgeRequest(prompt="p", prompt_kind="holistic", dimension="overall", scale=(1, 10), image=img,
                        temperature=0.3, repetition=0)


@pytest.mark.parametrize("errors, reply, error, attempts, retries, abandoned", [
    ([], True, None, 1, 0, False),
    ([TransientCallError("HTTP 503"), TransientCallError("HTTP 503")], True, None, 3, 2, False),
    ([TransientCallError("HTTP 503")] * 3, False, "gave up after 3 attempts: HTTP 503", 3, 2, False),
    ([CallFailedError("HTTP 400: no")], False, "HTTP 400: no", 1, 0, False),
    ([ConnectionCallError("refused")] * 3, False, None, 3, 2, True),
])
def test_call_with_retries_ends_in_exactly_one_way(errors, reply, error, attempts, retries, abandoned):
    be = Scripted(model="m", errors=errors)
    tried = asyncio.run(call_with_retries(be, _request(), _FAST, random.Random(0), clock=ManualClock()))
    assert (tried.reply is not None, tried.error, tried.attempts, tried.retries, tried.abandoned) == (
        reply, error, attempts, retries, abandoned)
    assert (tried.latency_s is not None) == reply


def test_a_stopped_family_makes_no_attempt():
    health = FamilyHealth(1)
    health.connection_error("refused")
    be = Scripted(model="m")
    tried = asyncio.run(call_with_retries(be, _request(), _FAST, random.Random(0), health, clock=ManualClock()))
    assert tried.abandoned and tried.attempts == 0 and be.calls == 0
    assert health.why_stopped() == "stopped after 1 connection errors in a row with no reply (last: refused)"


def test_every_call_gets_one_outcome_and_the_writer_commits_each_kind(tmp_path):
    images = [ImageRef(np.full((8, 8, 3), i, np.uint8), label=lab) for i, lab in enumerate(["good", "bad"])]
    panel = Panel((Family("f", "test-scripted", "m"),), holistic_repetitions=2, dimension_repetitions=0)
    be = Scripted(model="m", errors=[CallFailedError("HTTP 400: no")])
    plan = plan_calls(images, panel, {"f": be})
    summary, progress, bad = RunSummary(), [], []
    with CallStore(tmp_path / "r.sqlite") as store:
        asyncio.run(execute_calls(
            plan, {"f": be}, store, temperature=0.3, config=dataclasses.replace(_FAST, concurrency=1),
            summary=summary, on_progress=lambda n, failed, cost: progress.append((n, failed, cost)),
            on_bad_image=lambda label, problem: bad.append(label)))
        records = list(store.iter_records())
    con = sqlite3.connect(tmp_path / "r.sqlite")
    try:
        failures = con.execute("SELECT call_key, family, image, error, attempts FROM failures ORDER BY id").fetchall()
    finally:
        con.close()
    # good/0: HTTP 400 (failed), good/1: recorded; bad/0: unreadable (logged once), bad/1: skipped
    assert (summary.performed, summary.failed, summary.skipped, summary.abandoned) == (1, 1, 2, 0)
    assert summary.failures == [(plan[0].key, "HTTP 400: no")] and summary.cost_usd == 0.5
    assert summary.bad_images == [("bad", "bad: not an image Pillow can read")] and bad == ["bad"]
    assert [r.call_key for r in records] == [plan[1].key] and records[0].score == 4.0
    assert failures == [(plan[0].key, "f", "good", "HTTP 400: no", 1),
                        (plan[2].key, "f", "bad", "image unreadable: bad: not an image Pillow can read", 0)]
    assert sum(n for n, _, _ in progress) == 4 and sum(f for _, f, _ in progress) == 1


def test_outcome_failure_row_names_the_call():
    images = [ImageRef(np.zeros((8, 8, 3), np.uint8), label="a.jpg")]
    panel = Panel((Family("f", "test-scripted", "m"),), holistic_repetitions=1, dimension_repetitions=0)
    (call,) = plan_calls(images, panel, {"f": Scripted(model="m")})
    o = Outcome(OutcomeKind.FAILED, call, error="HTTP 500", attempts=3)
    assert o.failure_row() == {"call_key": call.key, "family": "f", "image": "a.jpg", "error": "HTTP 500",
                               "attempts": 3}


def test_the_printed_summary_names_the_parts_of_each_pair_and_leaves_out_the_failure_sample():
    s = RunSummary(planned=3, performed=1, failed=2, cost_usd=0.5, bad_images=[("a.jpg", "truncated")],
                   stopped_families=[("gpt", "401")], failures=[("k1", "timed out")])
    d = s.to_dict()
    assert list(d) == ["planned", "already_done", "performed", "parse_failures", "failed", "skipped", "identical",
                       "collapsed", "abandoned", "done_elsewhere", "retries", "cost_usd", "elapsed_s", "bad_images",
                       "stopped_families"]
    assert d["bad_images"] == [{"image": "a.jpg", "error": "truncated"}]
    assert d["stopped_families"] == [{"family": "gpt", "error": "401"}]
    assert (d["planned"], d["failed"], d["cost_usd"]) == (3, 2, 0.5)
