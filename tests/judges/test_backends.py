"""Backend registry contract, option validation, credentials, and the
openai-compatible backend against a real loopback HTTP server."""

import asyncio
import dataclasses
import email.utils
import math
import sqlite3

import numpy as np
import pytest

from multicrop.judges.clock import ManualClock
from multicrop.errors import InvalidParameterError, JudgeError, MissingCredentialsError, RegistryError
from multicrop.judges.backends import JUDGE_BACKENDS, JudgeBackend
from multicrop.judges.backends.openai_compatible import retry_after_s
from multicrop.judges.panel import Family, Panel
from multicrop.judges.runner import RunConfig, judge_images, plan_calls, scores_table
from multicrop.judges.types import ImageRef, JudgeRequest
from multicrop.judges.store import CallStore

def _minimal_options(name, toy_head):
    """The fewest options each built-in backend needs (the embedding judge needs a head file)."""
    if name == "embedding":
        return {"head": str(toy_head())}
    return {"openai-compatible": {"api_key_env": ""}}.get(name, {})


@pytest.mark.parametrize("name", JUDGE_BACKENDS.names())
def test_backend_contract(name, toy_head):
    _MINIMAL_OPTIONS = {name: _minimal_options(name, toy_head)}
    cls = JUDGE_BACKENDS.get(name)
    assert issubclass(cls, JudgeBackend) and cls.name == name
    for flag in ("supports_json_schema", "supports_images", "needs_network", "deterministic", "reads_prompt"):
        assert isinstance(getattr(cls, flag), bool)
    assert isinstance(cls.version, str) and cls.version
    assert dataclasses.is_dataclass(cls.Options)
    be = JUDGE_BACKENDS.create(name, model="some-model", **_MINIMAL_OPTIONS[name])
    assert be.model_id == "some-model"
    assert isinstance(be.key_options(be.options), dict)
    with pytest.raises(InvalidParameterError, match="unknown key.*'colour'.*allowed"):
        JUDGE_BACKENDS.create(name, model="m", **{**_MINIMAL_OPTIONS[name], "colour": 1})
    with pytest.raises(InvalidParameterError, match="model must be a non-empty string"):
        JUDGE_BACKENDS.create(name, model="", **_MINIMAL_OPTIONS[name])


def test_wrong_option_types_and_values_fail():
    with pytest.raises(InvalidParameterError, match="max_side: expected int, got '512'"):
        JUDGE_BACKENDS.create("openai-compatible", model="m", api_key_env="", max_side="512")
    with pytest.raises(InvalidParameterError, match="structured_output"):
        JUDGE_BACKENDS.create("openai-compatible", model="m", api_key_env="", structured_output="xml")
    be = JUDGE_BACKENDS.create("openai-compatible", model="m", api_key_env="", price_input_per_mtok=1)
    assert be.options.price_input_per_mtok == 1.0


def test_duplicate_backend_registration_is_an_error():
    with pytest.raises(RegistryError, match="already registered"):
        JUDGE_BACKENDS.register(JUDGE_BACKENDS.get("measured"))


def test_missing_key_says_how_to_fix_it(monkeypatch):
    monkeypatch.delenv("MULTICROP_TEST_NO_SUCH_KEY", raising=False)
    with pytest.raises(MissingCredentialsError, match=r"export MULTICROP_TEST_NO_SUCH_KEY=.*api_key_env"):
        JUDGE_BACKENDS.create("openai-compatible", model="gpt-x", api_key_env="MULTICROP_TEST_NO_SUCH_KEY")


def _panel(server, *models, reps=(1, 1), **opts):
    fams = tuple(Family(m, "openai-compatible", m, {"base_url": server.base_url, "api_key_env": "",
                                                     "max_side": 64, **opts}) for m in models)
    return Panel(fams, holistic_repetitions=reps[0], dimension_repetitions=reps[1])


def _refs(n=2, seed=0):
    rng = np.random.default_rng(seed)
    return [ImageRef((rng.random((40, 50, 3)) * 255).astype(np.uint8), label=f"im{i}") for i in range(n)]


_FAST = RunConfig(concurrency=8, timeout_s=2.0, max_retries=2, backoff_base_s=0.01)


def test_execute_sends_image_prompt_schema_and_parses_usage(fake_server):
    be = JUDGE_BACKENDS.create("openai-compatible", model="ok", base_url=fake_server.base_url, api_key_env="", max_side=64, price_input_per_mtok=2.0, price_output_per_mtok=10.0)
    img = _refs(1)[0]
    req = JudgeRequest(prompt="rate it as a whole", prompt_kind="holistic", dimension="overall", scale=(1, 10),
                       image=img, temperature=0.3, repetition=0, json_schema={"type": "object"})

    async def go():
        try:
            return await be.execute(req)
        finally:
            await be.aclose()

    reply = asyncio.run(go())
    assert reply.model == "ok-served" and reply.prompt_tokens == 1000 and reply.completion_tokens == 20
    assert reply.cost_usd == pytest.approx((1000 * 2.0 + 20 * 10.0) / 1e6)
    body = fake_server.bodies[-1]
    assert body["temperature"] == 0.3 and body["model"] == "ok"
    content = body["messages"][0]["content"]
    assert content[0] == {"type": "text", "text": "rate it as a whole"}
    assert content[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert body["response_format"]["type"] == "json_schema"


def test_scores_parsed_and_failures_recorded_as_data(fake_server, tmp_path):
    panel = _panel(fake_server, "ok", "malformed", "wrongtype", "outofrange")
    with CallStore(tmp_path / "r.sqlite") as store:
        summary, plan = judge_images(_refs(2), panel, store, config=_FAST, clock=ManualClock())
        df = scores_table(plan, store)
        recs = {r.call_key: r for r in store.iter_records()}
    assert summary.planned == 4 * 2 * 6 and summary.performed == 48 and summary.failed == 0
    assert summary.parse_failures == 36
    by = df.groupby("family")["score"]
    assert by.count()["ok"] == 12 and by.count()["malformed"] == 0
    ok = df[df.family == "ok"]
    assert ok[ok.prompt_kind == "holistic"].score.between(1, 10).all()
    assert ok[ok.prompt_kind == "dimension"].score.between(1, 5).all()
    for c in plan:
        r = recs[c.key]
        assert (r.parse_error is None) == (c.family.name == "ok")
        if r.parse_error is not None:
            assert math.isnan(r.score) and r.raw_reply is not None
        assert r.model_returned == f"{c.family.name}-served" and r.model_requested == c.family.name
        assert r.prompt_tokens == 1000 and r.temperature == 0.3 and r.latency_s > 0
    kinds = {recs[c.key].parse_error.split(":")[0] for c in plan if c.family.name == "wrongtype"}
    assert kinds == {"field 'score' is not a number"}


def test_429_with_retry_after_is_retried_until_success(fake_server, tmp_path):
    panel = _panel(fake_server, "429:2", reps=(1, 0))
    with CallStore(tmp_path / "r.sqlite") as store:
        summary, plan = judge_images(_refs(1), panel, store, config=_FAST, clock=ManualClock())
        rec = next(store.iter_records())
    assert summary.performed == 1 and summary.failed == 0 and summary.retries == 2
    assert fake_server.requests == 3 and rec.attempts == 3 and not math.isnan(rec.score)  # a parsed score


def test_retry_after_is_honoured(fake_server, tmp_path):
    panel = _panel(fake_server, "429ms:400", reps=(1, 0))
    clock = ManualClock()
    with CallStore(tmp_path / "r.sqlite") as store:
        summary, _ = judge_images(_refs(1), panel, store, config=_FAST, clock=clock)
    assert summary.performed == 1 and summary.retries == 1 and fake_server.requests == 2
    assert clock.waits == [0.4]  # waited as told, not the 10 ms backoff (and no real sleep)


def test_retry_after_header_forms():
    assert retry_after_s({"retry-after": "3"}) == 3.0
    assert retry_after_s({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    now = 1_767_225_600.0  # a fixed instant: the date is measured from the clock given, not the wall clock
    future = email.utils.formatdate(now + 30, usegmt=True)
    assert retry_after_s({"retry-after": future}, now=now) == 30.0
    assert retry_after_s({"retry-after": email.utils.formatdate(now - 30, usegmt=True)}, now=now) == 0.0
    assert retry_after_s({"retry-after": "soon"}) is None and retry_after_s({}) is None


def test_authentication_failure_stops_the_run_and_keeps_completed_calls(fake_server, tmp_path):
    panel = Panel((Family("m", "measured", "measured-v1"),) + _panel(fake_server, "401").families,
                  holistic_repetitions=1, dimension_repetitions=0)
    cfg = RunConfig(concurrency=1, timeout_s=2.0, max_retries=3)
    with CallStore(tmp_path / "r.sqlite") as store:
        with pytest.raises(JudgeError, match="authentication failed"):
            judge_images(_refs(3), panel, store, config=cfg, clock=ManualClock())
        assert fake_server.requests == 1  # not retried
        assert len(store) >= 1 and {r.family for r in store.iter_records()} == {"m"}


def test_persistent_500_stops_after_max_retries_and_is_retried_on_resume(fake_server, tmp_path):
    panel = _panel(fake_server, "500:always", reps=(1, 0))
    cfg = RunConfig(concurrency=2, timeout_s=2.0, max_retries=3, backoff_base_s=0.001)
    with CallStore(tmp_path / "r.sqlite") as store:
        s1, _ = judge_images(_refs(1), panel, store, config=cfg, clock=ManualClock())
        assert fake_server.requests == 4 and s1.failed == 1 and len(store) == 0
        assert "gave up after 4 attempts: HTTP 500" in s1.failures[0][1]
        assert store.stats().n_failures == 1
        s2, _ = judge_images(_refs(1), panel, store, config=cfg, clock=ManualClock())  # failed calls are still missing
    assert fake_server.requests == 8 and s2.already_done == 0


def test_timeouts_become_failures(fake_server, tmp_path):
    panel = _panel(fake_server, "hang", reps=(1, 0))
    cfg = RunConfig(concurrency=4, timeout_s=0.3, max_retries=1, backoff_base_s=0.001)
    with CallStore(tmp_path / "r.sqlite") as store:
        summary, _ = judge_images(_refs(1), panel, store, config=cfg, clock=ManualClock())
        assert len(store) == 0
    assert summary.failed == 1 and fake_server.by_model["hang"] == 2
    assert summary.failures[0][1].startswith("gave up after 2 attempts: timed out")


def test_unreadable_200_bodies_are_recorded_as_parse_failures(fake_server, tmp_path):
    # An HTTP 200 the protocol cannot read is an answer, not a failed call: it
    # is recorded once (raw body, parse error, NaN score) and never retried.
    panel = _panel(fake_server, "badbody", "nochoices", "numcontent", reps=(1, 0))
    cfg = RunConfig(concurrency=4, timeout_s=2.0, max_retries=3, backoff_base_s=0.001)
    with CallStore(tmp_path / "r.sqlite") as store:
        summary, plan = judge_images(_refs(1), panel, store, config=cfg, clock=ManualClock())
        recs = {r.family: r for r in store.iter_records()}
        again, _ = judge_images(_refs(1), panel, store, config=cfg, clock=ManualClock())
    assert summary.failed == 0 and summary.performed == 3 and summary.parse_failures == 3
    assert again.already_done == 3 and again.performed == 0
    assert fake_server.requests == 3  # one attempt each, none repeated by the resume
    bb = recs["badbody"]
    assert bb.raw_reply == "<html>this is not json" and math.isnan(bb.score) and bb.attempts == 1
    assert bb.parse_error.startswith("HTTP 200 body is not JSON")
    assert recs["nochoices"].parse_error == "reply has no choices[0].message"
    assert recs["nochoices"].model_returned == "nochoices-served"
    assert recs["numcontent"].parse_error.startswith("choices[0].message.content is not text: 7")
    assert recs["numcontent"].prompt_tokens == 1000 and math.isnan(recs["numcontent"].score)


def test_endpoint_enters_the_call_key_but_not_the_family_name():
    def keys(name, base_url):
        panel = Panel((Family(name, "openai-compatible", "qwen-vl", {"base_url": base_url, "api_key_env": ""}),))
        return [c.key for c in plan_calls(_refs(1), panel, {f.name: f.create() for f in panel.families})]

    local = keys("local", "http://localhost:8000/v1")
    assert keys("renamed", "http://localhost:8000/v1/") == local  # rename + trailing slash: same calls
    assert not set(keys("local", "https://openrouter.ai/api/v1")) & set(local)
    be = JUDGE_BACKENDS.create("openai-compatible", model="m", api_key_env="", base_url="http://h:1/v1/")
    assert be.key_options(be.options)["base_url"] == "http://h:1/v1" and be.version == "2"


def test_options_that_change_replies_change_keys_and_others_do_not(monkeypatch):
    monkeypatch.setenv("OTHER_KEY", "sk-other")

    def key_fields(**opts):
        be = JUDGE_BACKENDS.create("openai-compatible", model="m", **{"api_key_env": "", **opts})
        return be.key_options(be.options)

    base = key_fields()
    # A lower max_tokens can truncate a reply; a smaller image shows the judge less.
    assert key_fields(max_tokens=20) != base
    assert key_fields(max_side=256) != base
    # The name of the environment variable holding the key changes no reply.
    assert key_fields(api_key_env="OTHER_KEY") == base


def test_api_key_is_sent_but_never_stored_or_logged(fake_server, tmp_path, monkeypatch, caplog, capsys):
    secret = "sk-test-Zq9secret-0123456789"
    monkeypatch.setenv("MULTICROP_TEST_KEY", secret)
    panel = _panel(fake_server, "ok", "malformed", api_key_env="MULTICROP_TEST_KEY")
    db = tmp_path / "r.sqlite"
    with caplog.at_level("DEBUG"), CallStore(db) as store:
        judge_images(_refs(1), panel, store, config=_FAST, clock=ManualClock())
        store.export(tmp_path / "e.jsonl")
        open_blobs = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())  # incl. the WAL
    assert fake_server.auth_headers == {f"Bearer {secret}"}
    blobs = open_blobs + b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert secret.encode() not in blobs
    assert secret not in caplog.text
    out = capsys.readouterr()
    assert secret not in out.out + out.err
    con = sqlite3.connect(db)
    try:
        dump = "\n".join(con.iterdump())
    finally:
        con.close()
    assert secret not in dump
