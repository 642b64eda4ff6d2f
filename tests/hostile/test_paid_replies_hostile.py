"""Every paid answer is stored: a reply that cannot be stored as parsed is kept as a parse failure, capped."""

from __future__ import annotations

import asyncio
import dataclasses
import math

import numpy as np
import pytest

from multicrop.judges.clock import ManualClock
from multicrop.errors import InvalidParameterError
from multicrop.judges.backends import JudgeBackend
from multicrop.judges.execute import MAX_RAW_REPLY, RunSummary, execute_calls
from multicrop.judges.panel import Family, Panel, parse_panel
from multicrop.judges.plan import plan_calls
from multicrop.judges.runner import RunConfig
from multicrop.judges.store import CallStore
from multicrop.judges.types import ImageRef, JudgeReply

_FAST = RunConfig(concurrency=1, max_retries=0, backoff_base_s=0.0001, max_connection_errors=3)

BIG = '{"score": 4, "reason": "' + "x" * (3 * MAX_RAW_REPLY) + '"}'
REPLIES = {
    "surrogate": JudgeReply(text='{"score": 5, "reason": "bad \\ud800 half"}', model="m", cost_usd=0.1),
    "surrogate-raw": JudgeReply(text="\ud800 not json", model="m\udc80", cost_usd=0.1),
    "typed-surrogate": JudgeReply(text="", score=6, reason="r\ud83d", model="m", cost_usd=0.1),
    "negative-cost": JudgeReply(text='{"score": 3, "reason": "r"}', model="m", cost_usd=-1.0, prompt_tokens=7),
    "huge-json": JudgeReply(text=BIG, model="m", cost_usd=0.1),
    "good": JudgeReply(text='{"score": 4, "reason": "fine"}', model="m", cost_usd=0.1),
}


class HostileReplies(JudgeBackend):
    """Answers each image (by label) with the reply :data:`REPLIES` holds for it."""

    name = "test-hostile-replies"
    description = "hostile replies"
    needs_network = False

    @dataclasses.dataclass(frozen=True)
    class Options:
        pass

    async def execute(self, request):
        return REPLIES[request.image.label]


def test_no_reply_aborts_the_run_or_loses_a_neighbour(tmp_path):
    images = [ImageRef(np.full((8, 8, 3), i, np.uint8), label=lab) for i, lab in enumerate(REPLIES)]
    panel = Panel((Family("f", "test-hostile-replies", "m"),), holistic_repetitions=1, dimension_repetitions=0)
    be = HostileReplies(model="m")
    plan = plan_calls(images, panel, {"f": be})
    summary = RunSummary()
    with CallStore(tmp_path / "r.sqlite") as store:
        asyncio.run(execute_calls(plan, {"f": be}, store, temperature=0.3, config=_FAST, summary=summary,
                                  clock=ManualClock()))
        records = {r.image: r for r in store.iter_records()}
    assert sorted(records) == sorted(REPLIES) and summary.performed == len(REPLIES) and summary.failed == 0
    assert records["good"].score == 4.0 and records["good"].reason == "fine"
    assert records["surrogate"].score == 5.0 and records["surrogate"].reason == "bad \\ud800 half"
    assert records["surrogate-raw"].raw_reply == "\\ud800 not json" and records["surrogate-raw"].parse_error
    assert records["surrogate-raw"].model_returned == "m\\udc80"
    assert records["typed-surrogate"].score == 6.0 and records["typed-surrogate"].reason == "r\\ud83d"
    neg = records["negative-cost"]
    assert math.isnan(neg.score) and neg.cost_usd is None and neg.prompt_tokens == 7
    assert neg.parse_error.startswith("reply cannot be stored as parsed: cost_usd must be")
    huge = records["huge-json"]
    assert len(huge.raw_reply.encode()) < MAX_RAW_REPLY + 100 and huge.raw_reply.endswith("characters in all]")
    assert huge.score == 4.0  # parsed from the whole reply; only the stored text is capped


@pytest.mark.parametrize("price, field", [({"input": -1.0, "output": 2.0}, "input"),
                                          ({"input": 1.0, "output": float("nan")}, "output"),
                                          ({"input": True}, "input")])
def test_a_panel_with_a_bad_price_is_refused_when_read(price, field):
    doc = {"families": [{"name": "g", "backend": "openai-compatible", "model": "gpt-x",
                         "options": {"api_key_env": ""}}], "prices": {"gpt-x": price}}
    with pytest.raises(InvalidParameterError, match=rf"prices\.'gpt-x'\.{field} must be a finite number >= 0"):
        parse_panel(doc, source="p.toml")


def test_a_negative_price_option_is_refused_when_read():
    doc = {"families": [{"name": "g", "backend": "openai-compatible", "model": "gpt-x",
                         "options": {"api_key_env": "", "price_output_per_mtok": -3}}]}
    with pytest.raises(InvalidParameterError, match="price_output_per_mtok' must be a finite number >= 0"):
        parse_panel(doc, source="p.toml")
