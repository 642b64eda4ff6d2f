"""Human ratings loaders: EVA, PARA and generic CSV, written under tmp_path."""

import numpy as np
import pytest

from multicrop.datasets.ratings import (
    RATINGS_FORMATS,
    load_eva,
    load_para,
    load_ratings,
    load_ratings_csv,
)
from multicrop.errors import DatasetError, UnknownNameError

EVA = """image_id=user_id=score=difficulty=visual=composition=quality=semantic=vote_time
100=u1=7=2=3=4=3=2=2016-01-01 10:00:00
100=u2=5=1=2=3=2=2=2016-01-01 10:01:00
100=u3=abc=1=2=3=2=2=2016-01-01 10:02:00
200=u1=10=1=4=4=4=4=2016-01-01 10:03:00
200=u2=2=1=1=1=1=1=2016-01-01 10:04:00
=u4=6=1=1=1=1=1=2016-01-01 10:05:00
300=u1=11=1=1=1=1=1=2016-01-01 10:06:00
300=u2=nan=1=1=1=1=1=2016-01-01 10:07:00
100=u1=9=1=1=1=1=1=2016-01-01 10:08:00
200=u3=4=1=5=1=1=1=2016-01-01 10:09:00
"""


def test_eva_means_and_skipped_rows(tmp_path):
    path = tmp_path / "votes_filtered.csv"
    path.write_text(EVA)
    r = load_eva(path)
    # image 100: u1 (7) and u2 (5) usable; u3's score is 'abc'; the second u1 vote is a duplicate
    assert r.means.loc["100", "score"] == pytest.approx(6.0)
    assert r.means.loc["100", "colour"] == pytest.approx(2.5)  # EVA 'visual' = light & colour
    assert r.means.loc["200", "quality"] == pytest.approx(2.5)
    assert r.means.loc["100", "n_raters"] == 2
    assert "300" not in r.means.index  # both rows bad
    reasons = {s.line: s.reason for s in r.skipped}
    assert reasons == {
        4: "non-numeric score 'abc'",
        7: "missing image id",
        8: "score 11 outside [0, 10]",
        9: "score is NaN",
        10: "duplicate rating of image '100' by rater 'u1'",
        11: "colour 5 outside [1, 4]",
    }
    assert set(r.attributes) == {"quality", "composition", "colour", "semantic"}
    assert len(r.raters) == 4


# The real PARA-Images.csv header, column for column as listed in the PARA
# README ("Annotation Explanation of PIAA", cols 0-15: session, image, user,
# aesthetic, quality, composition, color, dof, content, light,
# isObjectEmphasis, emotion class, difficulty, content preference,
# willingness to share, scene category).  ``imgEmotion`` and ``semantic``
# hold text labels.
PARA_HEADER = ("sessionId,imageName,userId,aestheticScore,qualityScore,compositionScore,colorScore,dofScore,"
               "contentScore,lightScore,isObjectEmphasis,imgEmotion,difficultyOfJudgment,contentPreference,"
               "willingnessToShare,semantic")
PARA = PARA_HEADER + """
session1,iaa_1.jpg,A1,3.5,4,3,3,2,4,3,1,happiness,0,3,2,portrait
session1,iaa_1.jpg,A2,4.5,5,4,4,3,4,3,0,neutral,-1,4,3,portrait
session1,iaa_2.jpg,A1,2.0,2,2,,2,2,2,0,sadness,1,2,2,animal
session1,iaa_2.jpg,A3,x,2,2,2,2,2,2,0,sadness,0,2,2,animal
session1,iaa_2.jpg,A4,3.0,3,3,4,3,2,2,1,neutral,0,2,2,animal
"""


def test_para_file_and_directory(tmp_path):
    """Before the fix ``semantic`` (scene labels) was read as a score and killed every row."""
    d = tmp_path / "PARA" / "annotation"
    d.mkdir(parents=True)
    (d / "PARA-Images.csv").write_text(PARA)
    for src in (d / "PARA-Images.csv", tmp_path / "PARA"):
        r = load_para(src)
        assert r.means.loc["iaa_1.jpg", "score"] == pytest.approx(4.0)
        assert r.means.loc["iaa_2.jpg", "score"] == pytest.approx(2.5)
        # empty colour cell is a missing attribute for that rater only
        assert r.means.loc["iaa_2.jpg", "colour"] == pytest.approx(4.0)
        assert r.means.loc["iaa_1.jpg", "depth_of_field"] == pytest.approx(2.5)
        assert r.means.loc["iaa_1.jpg", "content"] == pytest.approx(4.0)  # col 8 is content, col 9 light
        assert r.means.loc["iaa_1.jpg", "light"] == pytest.approx(3.0)
        assert [(s.line, s.reason) for s in r.skipped] == [(5, "non-numeric score 'x'")]
        assert set(r.attributes) == {"quality", "composition", "colour", "light", "depth_of_field", "content"}
        assert len(r.raters) == 4
        # the category columns are ignored, and said so once
        unused = [n for n in r.notes if n.startswith("columns not used")]
        assert len(unused) == 1 and "imgEmotion" in unused[0] and "semantic" in unused[0]


def test_a_text_attribute_column_is_ignored_not_a_row_killer(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("image,rater,score,quality,composition\na,u,5,portrait,3\na,v,7,animal,4\nb,u,4,animal,2\n")
    r = load_ratings_csv(path)
    assert r.skipped == () and len(r.raters) == 3
    assert r.attributes == ("composition",)
    assert any("'quality' holds categories" in n for n in r.notes)
    # a stray text cell in a numeric attribute column is still a bad row
    path.write_text("image,rater,score,quality\na,u,5,3\na,v,7,high\n")
    assert [s.reason for s in load_ratings_csv(path).skipped] == ["non-numeric quality 'high'"]


def _giaa_header():
    """PARA-GiaaTrain/Test.csv columns in the README's order ("Annotation
    Explanation of GIAA": 0 imageName, 1 sessionId, 2 scene category,
    3-11 aesthetic distribution, 12-13 mean/std, ...), with the names public
    PARA loaders index (``aestheticScore_1.0`` ... ``_5.0``,
    ``qualityScore_mean``, ``compositionScore_1`` ... ``_5``, ``_mean``,
    ``willingnessToShare_1``, ``isObjectEmphasis_mean``); the emotion column names are placeholders."""
    cols = ["imageName", "sessionId", "semantic"]
    cols += [f"aestheticScore_{v:.1f}" for v in np.arange(1.0, 5.01, 0.5)]
    cols += ["aestheticScore_mean", "aestheticScore_std"]
    cols += ["qualityScore_mean", "qualityScore_std"]
    for name in ("compositionScore", "colorScore", "dofScore", "lightScore", "contentScore", "contentPreference",
                 "willingnessToShare"):
        cols += [f"{name}_{k}" for k in range(1, 6)] + [f"{name}_mean", f"{name}_std"]
    cols += [f"imgEmotion_{e}" for e in ("amusement", "excitement", "contentment", "awe", "disgust", "sadness",
                                         "fear", "neutral")]
    cols += ["difficultyOfJudgment_-1", "difficultyOfJudgment_0", "difficultyOfJudgment_1",
             "difficultyOfJudgment_mean", "difficultyOfJudgment_std", "isObjectEmphasis_0", "isObjectEmphasis_1",
             "isObjectEmphasis_mean", "isObjectEmphasis_std"]
    return cols


def test_para_giaa_means_only(tmp_path):
    cols = _giaa_header()
    rows = []
    for img, sem, base in (("a.jpg", "portrait", 3.2), ("b.jpg", "animal", 4.1)):
        vals = {c: "1" for c in cols}
        vals.update(imageName=img, sessionId="session1", semantic=sem, aestheticScore_mean=str(base),
                    qualityScore_mean=str(base - 0.2), compositionScore_mean=str(base - 0.3),
                    colorScore_mean=str(base - 0.1), lightScore_mean=str(base - 0.4),
                    contentScore_mean="3.5", contentPreference_mean="2.0")
        rows.append(",".join(vals[c] for c in cols))
    path = tmp_path / "PARA-GiaaTest.csv"
    path.write_text(",".join(cols) + "\n" + "\n".join(rows) + "\n")
    r = load_para(path)
    assert r.raters is None and r.skipped == ()
    assert r.means.loc["b.jpg", "score"] == pytest.approx(4.1)
    assert r.means.loc["a.jpg", "colour"] == pytest.approx(3.1)
    assert r.means.loc["a.jpg", "content"] == pytest.approx(3.5)  # not contentPreference
    assert "semantic" not in r.attributes
    assert any(n.startswith("columns not used") and "semantic" in n for n in r.notes)


def test_generic_csv_with_name_variants(tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text("Image ID,Rater,Rating,Color,Composition\nx,r1,1,2,3\nx,r2,3,4,5\ny,r1,2,,\n,r2,5,1,1\n")
    r = load_ratings_csv(path)
    assert r.means.loc["x", "score"] == 2.0 and r.means.loc["x", "colour"] == 3.0
    assert np.isnan(r.means.loc["y", "composition"])
    assert [s.reason for s in r.skipped] == ["missing image id"]
    assert load_ratings(path, "csv").means.equals(r.means)


def test_errors(tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        load_eva(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("picture,who,value\na,b,1\n")
    with pytest.raises(DatasetError, match="no column for image"):
        load_ratings_csv(bad)
    allbad = tmp_path / "allbad.csv"
    allbad.write_text("image,rater,score\na,u,x\n")
    with pytest.raises(DatasetError, match="no usable rating rows"):
        load_ratings_csv(allbad)
    with pytest.raises(UnknownNameError, match="did you mean 'para'"):
        RATINGS_FORMATS.get("parra")
    with pytest.raises(DatasetError, match="no PARA-Images.csv"):
        load_para(tmp_path)


def test_wrong_field_count_is_reported_with_its_line(tmp_path):
    """Line numbers counted by hand in the file below (header is line 1, the
    blank line 4 is ignored)."""
    path = tmp_path / "r.csv"
    path.write_text("image,rater,score\na,u,1\na,v,2,9\n\nb,u,3\nb,v\nb,w,x\n")
    r = load_ratings_csv(path)
    assert r.raters["image"].tolist() == ["a", "b"]
    assert [(s.line, s.reason) for s in r.skipped] == [
        (3, "wrong number of fields (4, header has 3): 'a,v,2,9'"),
        (6, "wrong number of fields (2, header has 3): 'b,v'"),
        (7, "non-numeric score 'x'"),
    ]


EVA_13 = """image_id=user_id=score=difficulty=visual=composition=quality=semantic=vote_time{extra}
100=u1=7=2=3=4=3=2=2016-01-01 10:00:00=0=1=0=0
100=u2=5=1=2=3=2=2=2016-01-01 10:01:00=0=0=0=1
200=u1=9=1=4=4=4=4=2016-01-01 10:03:00=1=0=0=0
200=u2=3=1=1=1=1=1=2016-01-01 10:04:00=0=0=1=0
"""


@pytest.mark.parametrize("extra", ["", "=cb1=cb2=cb3=cb4"], ids=["9-name header", "13-name header"])
def test_eva_with_four_checkbox_fields_after_vote_time(tmp_path, extra):
    """13-field rows under a 9-name header made pandas shift columns into an index."""
    path = tmp_path / "votes_filtered.csv"
    path.write_text(EVA_13.format(extra=extra))
    r = load_eva(path)
    assert r.skipped == ()
    assert r.means.loc["100", "score"] == pytest.approx(6.0)
    assert r.means.loc["200", "score"] == pytest.approx(6.0)
    assert r.means.loc["100", "colour"] == pytest.approx(2.5)  # visual
    assert r.means.loc["200", "semantic"] == pytest.approx(2.5)
    assert r.raters["rater"].tolist() == ["u1", "u2", "u1", "u2"]


GIAA_HEADER = ("imageName,aestheticScore_mean,aestheticScore_std,qualityScore_mean,compositionScore_mean,"
               "colorScore_mean,dofScore_mean,contentScore_mean,lightScore_mean,semantic")


@pytest.mark.parametrize("text, fmt", [
    (GIAA_HEADER + "\nx.jpg,3.2,0.5,3,3,3,3,3,3,animal\n", "para"),
    ("sessionId,imageName,userId2,aestheticScore\ns1,x.jpg,u,3\n", "para"),
    (EVA, "eva"),
])
def test_a_layout_read_with_the_wrong_format_suggests_the_right_one(tmp_path, text, fmt):
    path = tmp_path / "ratings.csv"
    path.write_text(text)
    with pytest.raises(DatasetError, match=rf"^ratings\.csv: no column for .*it looks like {fmt} ratings: "
                                           rf"use --format {fmt} \(-f {fmt}\)$") as err:
        load_ratings(path, "csv")
    assert str(err.value).count(",") < 40  # the column list is shortened, not all names


def test_a_header_of_many_columns_is_listed_shortly(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(",".join(f"c{i}" for i in range(95)) + "\n" + ",".join("1" * 95) + "\n")
    with pytest.raises(DatasetError, match=r"c7 and 87 more\)$"):
        load_ratings_csv(path)


def test_scores_far_outside_the_inferred_scale_are_listed_as_skipped_rows(tmp_path):
    rows = ["image,rater,score"] + [f"i{i // 5},r{i % 5},{99 if i % 5 == 0 else 1 + i % 4}" for i in range(100)]
    (tmp_path / "r.csv").write_text("\n".join(rows) + "\n")
    r = load_ratings_csv(tmp_path / "r.csv")
    assert [s.reason for s in r.skipped] == ["score 99 outside [1, 5]"] * 20
    assert [s.line for s in r.skipped][:2] == [2, 7]
    assert r.means["score"].max() <= 5
    assert any("score scale inferred as [1, 5]" in n for n in r.notes)


def test_a_declared_or_unusual_scale_is_left_alone(tmp_path):
    rng = np.random.default_rng(0)
    z = "\n".join(f"i{i},r{j},{v:.3f}" for i in range(30) for j, v in enumerate(rng.normal(0, 1, 3)))
    (tmp_path / "z.csv").write_text("image,rater,score\n" + z + "\n")
    assert load_ratings_csv(tmp_path / "z.csv").skipped == ()  # z-scores: no standard scale, nothing inferred
    pct = "\n".join(f"i{i},r0,{v}" for i, v in enumerate([3, 40, 55, 80, 100, 12, 67, 90]))
    (tmp_path / "p.csv").write_text("image,rater,score\n" + pct + "\n")
    assert load_ratings_csv(tmp_path / "p.csv").skipped == ()  # a 0-100 scale used in full


def test_a_csv_of_per_image_means_without_raters_loads_one_row_per_image(tmp_path):
    from multicrop.datasets.ratings import load_ratings, load_ratings_csv

    p = tmp_path / "means.csv"
    p.write_text("image,score,colour\na.jpg,3.5,2\nb.jpg,4,\n")
    r = load_ratings_csv(p)
    assert r.means.loc["a.jpg", "score"] == 3.5 and np.isnan(r.means.loc["b.jpg", "colour"])
    assert r.means["n_raters"].tolist() == [1, 1] and "no rater column" in r.notes[-1]
    assert load_ratings(p, "csv").attributes == ("colour",)


def test_a_csv_without_a_rater_column_whose_images_repeat_is_refused_not_reduced_to_one_row(tmp_path):
    # One row per rater, rater column lost: keeping one row per image as its "mean" would be silent and wrong.
    from multicrop.datasets.ratings import load_ratings_csv

    p = tmp_path / "r.csv"
    p.write_text("image,score\na.jpg,5\na.jpg,1\nb.jpg,3\n")
    with pytest.raises(DatasetError, match=r"no rater column, but image 'a.jpg' has 2 rows \(1 images repeat\)"):
        load_ratings_csv(p)
    p.write_text("image,score\na.jpg,3\nb.jpg,4\n")
    assert load_ratings_csv(p).means.loc["a.jpg", "score"] == 3.0
