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


PARA = """sessionId,imageName,userId,aestheticScore,qualityScore,compositionScore,colorScore,dofScore,lightScore,contentScore,contentPreference,willingnessToShare,emotion
s1,iaa_1.jpg,A1,3.5,4,3,3,2,3,4,3,2,happiness
s1,iaa_1.jpg,A2,4.5,5,4,4,3,3,4,4,3,neutral
s1,iaa_2.jpg,A1,2.0,2,2,,2,2,2,2,2,sadness
s1,iaa_2.jpg,A3,x,2,2,2,2,2,2,2,2,sadness
s1,iaa_2.jpg,A4,3.0,3,3,4,3,2,2,2,2,neutral
"""


def test_para_file_and_directory(tmp_path):
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
        assert [(s.line, s.reason) for s in r.skipped] == [(5, "non-numeric score 'x'")]
        assert {"quality", "composition", "colour", "light", "depth_of_field", "content"} <= set(r.attributes)


def test_para_giaa_means_only(tmp_path):
    path = tmp_path / "PARA-GiaaTest.csv"
    path.write_text(
        "imageName,sessionId,aestheticScore_mean,qualityScore_mean,compositionScore_mean,colorScore_mean\n"
        "a.jpg,s1,3.2,3.0,2.9,3.1\nb.jpg,s1,4.1,4.0,3.8,3.9\n"
    )
    r = load_para(path)
    assert r.raters is None
    assert r.means.loc["b.jpg", "score"] == pytest.approx(4.1)
    assert r.means.loc["a.jpg", "colour"] == pytest.approx(3.1)


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


def test_wrong_field_count_is_reported(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("image,rater,score\na,u,1\na,v,2,9\nb,u,3\nb,v,4\n")
    r = load_ratings_csv(path)
    assert len(r.raters) == 3
    assert [s.reason for s in r.skipped] == ["wrong number of fields: 'a,v,2,9'"]
