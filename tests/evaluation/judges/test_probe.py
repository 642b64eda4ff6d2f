"""The cheap holistic headroom probe and its verdict bands."""

import json

import numpy as np
import pytest
from scipy import stats

from multicrop.datasets.ratings import ratings_from_frame
from multicrop.datasets.simulate import simulate_study
from multicrop.evaluation.judges.config import PROBE_HIGH, PROBE_LOW
from multicrop.evaluation.judges.probe import ProbeResult, probe_headroom, probe_verdict


def test_probe_bands_include_the_papers_datasets():
    """Jadhav et al. (2026) §5.5: the best probe model captured 62.0 % of EVA's
    ceiling (fusion paid) and 84.6 % of PARA's (parity)."""
    assert (PROBE_LOW, PROBE_HIGH) == (0.620, 0.846)
    assert probe_verdict(0.620)[0] == "panel"
    assert probe_verdict(0.846)[0] == "single"
    assert probe_verdict(0.6201)[0] == probe_verdict(0.8459)[0] == "uncertain"
    assert "62.0%" in probe_verdict(0.7)[1] and "84.6%" in probe_verdict(0.7)[1]
    # a judge against the raters (rho < 0) is no headroom to fill: said, not "-948.5 % ... worth piloting"
    verdict, advice = probe_verdict(-9.485)
    assert verdict == "panel" and advice.startswith("no agreement") and "%" not in advice


def test_probe_verdicts(study):
    weak = simulate_study(150, n_families=2, holistic_fidelity=0.4, rng=np.random.default_rng(2))
    weak_r = ratings_from_frame(weak.ratings)
    res = probe_headroom(weak.judge_table, weak_r, n_resamples=300, n_splits=10)
    assert res.verdict == "panel"  # planted: holistic fidelity 0.4 against a ceiling of about 0.95
    # members: scipy Spearman of the 5-repetition holistic mean; headroom against the planted ceiling
    hum = weak.ratings.groupby("image")["score"].mean()
    t = weak.judge_table[weak.judge_table.prompt_kind == "holistic"]
    for fam, rho in res.members.items():
        mean5 = t[t.family == fam].groupby("image")["score"].mean().loc[hum.index]
        assert rho == pytest.approx(stats.spearmanr(mean5, hum).statistic, abs=1e-12)
    assert res.headroom == pytest.approx(max(res.members.values()) / weak.ceiling, abs=0.02)
    # a headroom exactly on a band edge is inside the band
    assert probe_headroom(weak.judge_table, weak_r, n_resamples=300, n_splits=10, low=res.headroom,
                          high=0.99).verdict == "panel"
    # the CI follows the confidence option
    narrow = probe_headroom(weak.judge_table, weak_r, n_resamples=300, n_splits=10, confidence=0.5)
    assert narrow.best_rho.ci_high - narrow.best_rho.ci_low < res.best_rho.ci_high - res.best_rho.ci_low
    strong = simulate_study(150, n_families=2, holistic_fidelity=0.97, judge_noise=0.1,
                            rng=np.random.default_rng(1))
    res2 = probe_headroom(strong.judge_table, ratings_from_frame(strong.ratings), n_resamples=300, n_splits=10)
    assert res2.verdict == "single"
    # only the first `repetitions` holistic calls are used
    ratings = ratings_from_frame(study.ratings)
    one = probe_headroom(study.judge_table, ratings, repetitions=1, n_resamples=300, n_splits=10)
    t = study.judge_table
    first = t[(t.prompt_kind == "holistic") & (t.repetition == 0) & (t.family == "family0")].set_index("image")["score"]
    hum = study.ratings.groupby("image")["score"].mean()
    assert one.members["family0"] == pytest.approx(stats.spearmanr(first.loc[hum.index], hum).statistic, abs=1e-12)


def test_probe_records_the_repetitions_actually_used(study):
    reps = study.judge_table[study.judge_table.prompt_kind == "holistic"].repetition.nunique()
    table = study.judge_table
    short = table[~((table.family == "family1") & (table.prompt_kind == "holistic") & (table.repetition >= 2))]
    res = probe_headroom(short, ratings_from_frame(study.ratings), repetitions=reps + 3, n_resamples=200,
                         n_splits=5)
    assert res.repetitions == reps + 3
    assert res.repetitions_used == {"family0": reps, "family1": 2, "family2": reps}
    assert res.short_families == res.repetitions_used
    assert res.to_dict()["repetitions_used"]["family1"] == 2
    assert probe_headroom(table, ratings_from_frame(study.ratings), repetitions=2, n_resamples=200,
                          n_splits=5).short_families == {}


def test_probe_does_not_import_scikit_learn(tmp_path, study):
    import subprocess
    import sys

    study.judge_table.to_csv(tmp_path / "j.csv", index=False)
    study.ratings.to_csv(tmp_path / "r.csv", index=False)
    code = (
        "import sys\n"
        "from multicrop.cli.main import main\n"
        f"rc = main(['eval', 'probe', '-s', {str(tmp_path / 'j.csv')!r}, '-r', {str(tmp_path / 'r.csv')!r}, "
        "'-B', '200', '--splits', '5', '--json'])\n"
        "assert rc == 0, rc\n"
        "print('SKLEARN' if any(m == 'sklearn' or m.startswith('sklearn.') for m in sys.modules) else 'CLEAN')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "CLEAN"


def test_probe_result_round_trips_through_its_dict(study):
    res = probe_headroom(study.judge_table, ratings_from_frame(study.ratings), n_resamples=200, n_splits=5)
    data = json.loads(json.dumps(res.to_dict()))
    assert data["best_rho"]["p"] is None  # NaN: the probe gives an interval, no test
    assert list(data) == ["members", "best", "best_rho", "ceiling", "headroom", "verdict", "advice", "repetitions",
                          "repetitions_used"]
    back = ProbeResult.from_dict(data)
    assert back.best_rho.ci_low == res.best_rho.ci_low and np.isnan(back.best_rho.p)
    assert (back.ceiling, back.members, back.headroom) == (res.ceiling, res.members, res.headroom)
