"""rank_crops: the panel's choice among each crop's shortlist, the z-scored mean, the store, spend."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from multicrop.judges.panel import parse_panel
from multicrop.ranking import rank_crops, z_panel_mean
from multicrop.ranking.combine import PANEL_MEAN

from .conftest import SHARP, SPOILED, alternatives


def _panel(*families, holistic=1, dimension=0, prices=None):
    doc = {"holistic_repetitions": holistic, "dimension_repetitions": dimension, "families": list(families)}
    if prices:
        doc["prices"] = prices
    return parse_panel(doc)


MEASURED = {"name": "measured", "backend": "measured", "model": "measured-v1"}


def test_the_panel_keeps_the_sharp_alternative_over_the_composition_scorers_spoiled_choice(spoiled_first,
                                                                                          measured_panel):
    ranked = rank_crops(spoiled_first, measured_panel)
    (crop,) = ranked.ranking["crops"]
    assert crop["chosen"] == 1 and ranked.crops[0].box == SHARP
    spoiled, sharp = crop["alternatives"]
    assert sharp["holistic"]["measured"] > spoiled["holistic"]["measured"]
    # one family, two alternatives: z-scores are -1 and +1
    assert (spoiled["panel_score"], sharp["panel_score"]) == pytest.approx((-1.0, 1.0))
    assert ranked.shortlists[0][0].box == SHARP and ranked.shortlists[0][1].box == SPOILED
    assert ranked.ranking["changed"] == 1 and ranked.ranking["combiner"] == {"name": PANEL_MEAN}
    assert ranked.versions["ranking"] == "1" and "judge" in ranked.timings
    assert ranked.to_dict()["ranking"]["crops"][0]["alternatives"][1]["box"] == {"x": 256, "y": 0, "w": 256, "h": 256}


def test_a_sharp_first_choice_is_kept(base_result, measured_panel):
    ranked = rank_crops(alternatives(base_result, [(SHARP, 2.0), (SPOILED, 1.0)]), measured_panel)
    assert ranked.ranking["crops"][0]["chosen"] == 0 and ranked.crops[0].box == SHARP
    assert ranked.ranking["changed"] == 0


def test_equal_scores_keep_the_composition_scorers_choice_without_dividing_by_zero(base_result, measured_panel):
    # the same box twice: one family, equal scores, standard deviation 0
    ranked = rank_crops(alternatives(base_result, [(SPOILED, 2.0), (SPOILED, 1.0)]), measured_panel)
    crop = ranked.ranking["crops"][0]
    assert crop["chosen"] == 0 and [a["panel_score"] for a in crop["alternatives"]] == [0.0, 0.0]
    # identical renders share their call: one call made for two alternatives
    assert ranked.ranking["calls_made"] == 1 and ranked.ranking["calls_planned"] == 2


def test_z_scored_mean_matches_a_hand_computation_with_scipy(spoiled_first, base_result):
    # two families that see the crops at different sizes, three alternatives
    panel = _panel(MEASURED, {"name": "small", "backend": "measured", "model": "measured-v1",
                              "options": {"max_side": 48}})
    res = alternatives(base_result, [(SPOILED, 3.0), (SHARP, 2.0), ((SHARP.__class__)(128, 0, 256, 256), 1.0)])
    ranked = rank_crops(res, panel)
    alts = ranked.ranking["crops"][0]["alternatives"]
    h = np.array([[a["holistic"]["measured"], a["holistic"]["small"]] for a in alts])
    assert np.ptp(h, axis=0).min() > 0  # both families rank: neither is left out
    expected = stats.zscore(h, axis=0, ddof=0).mean(axis=1)
    assert [a["panel_score"] for a in alts] == pytest.approx(expected.tolist(), abs=1e-9)
    assert ranked.ranking["crops"][0]["chosen"] == int(np.argmax(expected))


def test_z_panel_mean_leaves_a_constant_family_out_and_a_row_nobody_scored_nan():
    import pandas as pd

    h = pd.DataFrame({"a": [6.0, 8.0, 7.0, np.nan], "b": [5.0, 5.0, 5.0, np.nan]}, index=list("wxyz"))
    got = z_panel_mean(h)
    want = stats.zscore(np.array([6.0, 8.0, 7.0]))
    assert got.iloc[:3].tolist() == pytest.approx(want.tolist()) and math.isnan(got.iloc[3])
    assert z_panel_mean(pd.DataFrame({"a": [5.0, 5.0]})).tolist() == [0.0, 0.0]


def test_a_rerun_over_the_same_store_makes_no_call(spoiled_first, measured_panel, tmp_path):
    store = tmp_path / "calls.sqlite"
    first = rank_crops(spoiled_first, measured_panel, store=store)
    again = rank_crops(spoiled_first, measured_panel, store=store)
    assert (first.ranking["calls_made"], first.ranking["calls_reused"]) == (2, 0)
    assert (again.ranking["calls_made"], again.ranking["calls_reused"]) == (0, 2)
    assert again.ranking["crops"] == first.ranking["crops"]


def test_top_limits_the_alternatives_judged(spoiled_first, measured_panel):
    ranked = rank_crops(spoiled_first, measured_panel, top=1)
    assert ranked.ranking["alternatives"] == 1 and ranked.crops[0].box == SPOILED


def test_a_vlm_familys_spend_comes_from_the_stores_logged_costs(spoiled_first, fake_server, tmp_path):
    # the loopback server reports 1000 prompt and 20 completion tokens per call
    panel = _panel({"name": "vlm", "backend": "openai-compatible", "model": "ok",
                    "options": {"base_url": fake_server.base_url, "api_key_env": "", "max_side": 64}},
                   holistic=2, prices={"ok": {"input": 2.0, "output": 10.0}})
    store = tmp_path / "calls.sqlite"
    ranked = rank_crops(spoiled_first, panel, store=store)
    per_call = 1000 * 2.0 / 1e6 + 20 * 10.0 / 1e6
    r = ranked.ranking
    assert (r["calls_made"], r["calls_reused"], fake_server.answered) == (4, 0, 4)
    assert r["spend_usd"] == pytest.approx(4 * per_call) and r["cost_usd"] == pytest.approx(4 * per_call)
    again = rank_crops(spoiled_first, panel, store=store).ranking
    assert (again["calls_made"], again["spend_usd"], fake_server.answered) == (0, 0.0, 4)
    assert again["cost_usd"] == pytest.approx(4 * per_call)


def test_spend_counts_the_calls_made_now_and_cost_every_call_behind_the_scores(spoiled_first, fake_server,
                                                                                tmp_path, monkeypatch):
    from multicrop.judges.store.store import CallStore

    panel = _panel({"name": "vlm", "backend": "openai-compatible", "model": "ok",
                    "options": {"base_url": fake_server.base_url, "api_key_env": "", "max_side": 64}},
                   holistic=2, prices={"ok": {"input": 2.0, "output": 10.0}})
    per_call = 1000 * 2.0 / 1e6 + 20 * 10.0 / 1e6
    store = tmp_path / "calls.sqlite"
    scans = []
    real = CallStore.completed_keys
    monkeypatch.setattr(CallStore, "completed_keys", lambda self: scans.append(1) or real(self))
    first = rank_crops(spoiled_first, panel, store=store, top=1).ranking  # 2 calls: the first alternative
    more = rank_crops(spoiled_first, panel, store=store).ranking  # 2 reused, 2 new (the second alternative)
    assert (first["calls_made"], first["spend_usd"], first["cost_usd"]) == (2, pytest.approx(2 * per_call),
                                                                           pytest.approx(2 * per_call))
    assert (more["calls_made"], more["calls_reused"]) == (2, 2)
    assert more["spend_usd"] == pytest.approx(2 * per_call) and more["cost_usd"] == pytest.approx(4 * per_call)
    # the spend is not found by scanning the store: at most the runner's own look-up of what is done
    assert len(scans) <= 2


def test_a_fitted_combiner_decides(spoiled_first, measured_panel):
    import pandas as pd

    from multicrop.fusion.combiners import RidgeCombiner

    x = np.array([[4.0], [6.0], [8.0]])
    prefers_worse = RidgeCombiner(alpha=1e-6).fit(x, -x[:, 0])  # fitted on an array: matched by feature count
    ranked = rank_crops(spoiled_first, measured_panel, combiner=prefers_worse)
    assert ranked.ranking["crops"][0]["chosen"] == 0
    assert ranked.ranking["combiner"] == {"name": "ridge", "version": "1", "block": "H", "features": ["H:measured"]}
    named = RidgeCombiner(alpha=1e-6).fit(pd.DataFrame({"H:measured": x[:, 0]}), x[:, 0])  # matched by name
    assert rank_crops(spoiled_first, measured_panel, combiner=named).ranking["crops"][0]["chosen"] == 1


def test_a_family_whose_calls_fail_is_counted_and_the_others_still_choose(spoiled_first, fake_server):
    from multicrop.judges.config import RunConfig

    panel = _panel(MEASURED, {"name": "broken", "backend": "openai-compatible", "model": "500:always",
                              "options": {"base_url": fake_server.base_url, "api_key_env": ""}})
    ranked = rank_crops(spoiled_first, panel, config=RunConfig(max_retries=0))
    r = ranked.ranking
    assert (r["calls_made"], r["calls_failed"]) == (2, 2)
    alts = r["crops"][0]["alternatives"]
    assert all(a["holistic"] == {"measured": a["holistic"]["measured"]} for a in alts)  # no broken column
    assert r["crops"][0]["chosen"] == 1 and ranked.crops[0].box == SHARP
