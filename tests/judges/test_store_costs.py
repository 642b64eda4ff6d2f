"""CallStore.costs: the logged cost of given calls, looked up by key (no store scan)."""

import pytest

from multicrop.judges.store import CallRecord, CallStore


def _rec(i, cost):
    key = {"backend": "measured", "model": "m", "repetition": i, "image_sha256": f"sha256:{i:064x}"}
    return CallRecord.new(
        key_fields=key, family="fam", backend="measured", model_requested="m", model_returned="m",
        image=f"im{i}.jpg", image_sha256=f"sha256:{i:064x}", prompt_kind="holistic", dimension="overall",
        template="holistic@1", rubric_sha256="sha256:" + "ab" * 32, temperature=0.3, repetition=i,
        prompt_tokens=10, completion_tokens=2, cost_usd=cost, latency_s=0.1, attempts=1,
        raw_reply='{"score": 4}', score=4.0, reason=None, parse_error=None)


def test_costs_of_the_given_keys_only(tmp_path):
    recs = [_rec(i, c) for i, c in enumerate([0.25, None, 0.125, 1.0])]
    missing = "sha256:" + "cd" * 32
    with CallStore(tmp_path / "s.sqlite") as store:
        store.record(recs)
        got = store.costs([recs[0].call_key, recs[1].call_key, recs[2].call_key, missing])
    # the 4th stored call is not asked for; the missing key is absent; no logged cost reads 0.0
    assert got == {recs[0].call_key: 0.25, recs[1].call_key: 0.0, recs[2].call_key: 0.125}


def test_costs_many_keys_in_chunks(tmp_path):
    recs = [_rec(i, 0.001 * (i + 1)) for i in range(1203)]
    with CallStore(tmp_path / "s.sqlite") as store:
        store.record(recs)
        got = store.costs({r.call_key for r in recs[:1201]})
        assert store.costs([]) == {}
    assert len(got) == 1201
    assert sum(got.values()) == pytest.approx(sum(0.001 * (i + 1) for i in range(1201)))
