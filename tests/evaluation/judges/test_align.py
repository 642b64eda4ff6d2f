"""Matching judge-table images to rating images and aligning the two."""

import numpy as np
import pandas as pd
import pytest

from multicrop.datasets.ratings import ratings_from_frame
from multicrop.errors import DatasetError, InvalidParameterError
from multicrop.evaluation.judges.align import AlignedData, align, calls_per_arm, match_images, unparsed_families
from multicrop.evaluation.judges.config import JudgesReportConfig
from multicrop.evaluation.judges.report import evaluate_judges
from multicrop.fusion.features import build_features, validate_judge_table


def test_paths_in_judge_table_meet_rating_ids(study):
    """The judges module writes image paths; EVA/PARA ratings use ids."""
    from multicrop.evaluation.judges.align import match_images

    t = study.judge_table.assign(image="photos/" + study.judge_table["image"] + ".jpg")
    ratings = ratings_from_frame(study.ratings)
    table, r2, mode = match_images(validate_judge_table(t), ratings)
    assert mode == "stem"
    assert set(table.data["image"]) == set(r2.means.index)
    cfg = JudgesReportConfig(n_resamples=200, n_partitions=0, n_splits=5, combiners=("ridge",))
    rep = evaluate_judges(t, ratings, cfg)
    assert rep.summary["image_key"] == "stem" and rep.summary["n_images"] == 120
    clash = t.assign(image=np.where(t["image"].str.endswith("1.jpg"), "a/x.jpg", "b/x.jpg"))
    with pytest.raises(DatasetError, match="maps several images"):
        match_images(validate_judge_table(clash.drop_duplicates(
            ["image", "family", "prompt_kind", "dimension", "repetition"])), ratings, "stem")


def test_align_keeps_the_images_with_ratings_and_complete_features(study):
    table = validate_judge_table(study.judge_table)
    ratings = ratings_from_frame(study.ratings[study.ratings["image"] != "img00003"])
    data = align(table, ratings, families=["family0", "family2"])
    assert isinstance(data, AlignedData)
    assert list(data.blocks) == ["H", "P", "H+P", "Hsplit"]
    assert data.n_images == 119 and data.n_rated == 119 and data.n_scored == 120 and not data.notes
    assert "img00003" not in data.images and data.images.is_monotonic_increasing
    assert list(data.blocks["H"].columns) == ["H:family0", "H:family2"]
    ref = study.ratings.groupby("image")["score"].mean().drop("img00003")
    np.testing.assert_allclose(data.y, ref.to_numpy(), atol=1e-12)
    H = build_features(table, "H", families=["family0", "family2"]).drop("img00003")
    pd.testing.assert_frame_equal(data.blocks["H"], H)
    half = data.subset(data.images[::2])
    assert half.n_images == 60 and all(len(b) == 60 for b in half.blocks.values())
    assert half.n_rated == data.n_rated  # counts before matching are kept


def test_align_notes_a_table_without_dimension_rows(study):
    table = validate_judge_table(study.judge_table[study.judge_table.prompt_kind == "holistic"])
    data = align(table, ratings_from_frame(study.ratings), families=table.families)
    assert list(data.blocks) == ["H", "Hsplit"]
    assert data.notes == {"P": "no dimension rows: P and H+P arms skipped"}


def test_calls_per_arm_counts_unparsed_families_as_paid(study):
    t = study.judge_table
    dead = t[t.family == "family0"].assign(family="deadfam", score=np.nan)
    table = validate_judge_table(pd.concat([t, dead]))
    assert unparsed_families(table) == {"deadfam": len(dead)}
    fams = ["family0", "family1", "family2"]
    calls = calls_per_arm(table, families=fams, paid=["deadfam"])
    n_hol = (t.prompt_kind == "holistic").sum() / 120  # calls per image over the three families
    n_dim = (t.prompt_kind == "dimension").sum() / 120
    assert calls["member:family1"] == pytest.approx((t[(t.family == "family1")].prompt_kind == "holistic").sum() / 120)
    assert calls["H"] == calls["panel_mean"] == calls["Hsplit"] == pytest.approx(n_hol * 4 / 3)
    assert calls["P"] == pytest.approx(n_dim * 4 / 3)
    assert calls["H+P"] == pytest.approx(calls["H"] + calls["P"])
    assert calls_per_arm(table, families=fams)["H"] == pytest.approx(n_hol)


def test_unknown_image_key_is_an_error(study):
    with pytest.raises(InvalidParameterError, match=r"image_key must be one of .*got 'path'"):
        match_images(validate_judge_table(study.judge_table), ratings_from_frame(study.ratings), "path")
