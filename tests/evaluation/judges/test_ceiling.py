"""The human noise ceiling in the report: the planted value, and a ceiling that is not positive."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from multicrop.datasets.ratings import ratings_from_frame
from multicrop.errors import DatasetError
from multicrop.evaluation.judges.ceiling import human_ceiling
from multicrop.evaluation.judges.config import JudgesReportConfig
from multicrop.evaluation.judges.probe import probe_headroom
from multicrop.evaluation.judges.report import evaluate_judges, write_judges_report


def test_ceiling_recovers_the_planted_one(report, study):
    assert report.ceiling.ceiling == pytest.approx(study.ceiling, abs=0.03)


def _anticorrelated_raters(study):
    """Two raters per image whose scores rank-correlate negatively (as /tmp/review_b/neg.py):
    the split-half reliability is negative, so the ceiling is 0."""
    imgs = sorted(study.ratings["image"].unique())
    rng = np.random.default_rng(1)
    while True:
        a, b = rng.normal(size=(2, len(imgs)))
        if stats.spearmanr(a, b).statistic < -0.1:
            break
    return pd.DataFrame({"image": imgs * 2, "rater": ["r1"] * len(imgs) + ["r2"] * len(imgs),
                         "score": np.concatenate([a, b])})


def test_a_non_positive_noise_ceiling_is_reported_not_a_crash(study, tmp_path):
    ratings = ratings_from_frame(_anticorrelated_raters(study))
    cfg = JudgesReportConfig(n_resamples=100, n_partitions=0, n_splits=5, combiners=("ridge",))
    rep = evaluate_judges(study.judge_table, ratings, cfg)
    assert rep.ceiling.ceiling == 0.0 and rep.summary["headroom"] is None
    assert "headroom is undefined" in rep.summary["notes"]["ceiling"]
    write_judges_report(rep, tmp_path)
    page = (tmp_path / "index.html").read_text()
    assert "headroom: n/a" in page and "headroom is undefined" in page
    with pytest.raises(DatasetError, match="noise ceiling is 0.000"):
        probe_headroom(study.judge_table, ratings, n_resamples=100, n_splits=5)


def test_human_ceiling_without_raters_or_with_too_few(study):
    images = study.ratings["image"].unique()
    means_only = ratings_from_frame(study.ratings.groupby("image", as_index=False)["score"].mean()
                                    .assign(rater="mean"))
    assert human_ceiling(means_only, images, n_splits=5, seed=0) == (None, "need at least 3 images with two or "
                                                                            "more raters for a noise ceiling, got 0")
    ceiling, note = human_ceiling(ratings_from_frame(study.ratings), images, n_splits=5, seed=0)
    assert note is None and ceiling.n_splits == 5 and ceiling.n_images == 120
