"""Hostile inputs to ``multicrop eval judges`` and ``eval probe`` (issue 12): judge tables and ratings files.

Every case is generated under ``tmp_path``.  A broken input must give exit code 1, exactly one line on
stderr that names the offending file, no traceback and no report directory; an odd but usable input
must give exit code 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from multicrop.cli.main import main
from multicrop.datasets.simulate import simulate_study

N_IMAGES = 30


@pytest.fixture(scope="module")
def base():
    sim = simulate_study(N_IMAGES, n_families=2, rng=np.random.default_rng(11))
    r = sim.ratings.copy()
    return sim.judge_table, r


def _write(path, frame_or_text):
    if isinstance(frame_or_text, pd.DataFrame):
        frame_or_text.to_csv(path, index=False)
    elif isinstance(frame_or_text, bytes):
        path.write_bytes(frame_or_text)
    else:
        path.write_text(frame_or_text)
    return path


# ------------------------------------------------------------------ judge tables (the --scores file)

def _j_set(col, value):
    return lambda j, r: j.assign(**{col: value})


JUDGE_CASES = {
    "empty file": lambda j, r: "",
    "header only": lambda j, r: ",".join(j.columns) + "\n",
    "no score column": lambda j, r: j.drop(columns="score"),
    "no image column": lambda j, r: j.drop(columns="image"),
    "no family column": lambda j, r: j.drop(columns="family"),
    "no prompt_kind column": lambda j, r: j.drop(columns="prompt_kind"),
    "scores all text": _j_set("score", "good"),
    "scores all NaN": _j_set("score", np.nan),
    "scores all infinite": _j_set("score", np.inf),
    "unknown prompt_kind": _j_set("prompt_kind", "vibes"),
    "unknown dimension": lambda j, r: j.assign(dimension=np.where(j["prompt_kind"] == "dimension", "smell",
                                                                     j["dimension"])),
    "repetition not a number": _j_set("repetition", "first"),
    "negative repetition": _j_set("repetition", -1),
    "duplicate call rows": lambda j, r: pd.concat([j, j.head(5)]),
    "binary garbage": lambda j, r: bytes(range(256)) * 40,
    "utf-16 text": lambda j, r: j.to_csv(index=False).encode("utf-16"),
    "semicolon separated": lambda j, r: j.to_csv(index=False, sep=";"),
    "one column": lambda j, r: "score\n1\n2\n",
    "no image matches the ratings": lambda j, r: j.assign(image="other_" + j["image"]),
    "too few images": lambda j, r: j[j["image"].isin(sorted(j["image"].unique())[:5])],
    "every judge constant": _j_set("score", 3.0),
    "empty image ids": _j_set("image", ""),
    "empty family names": _j_set("family", ""),
    "a dimension row with prompt_kind holistic": lambda j, r: j.assign(
        prompt_kind=np.where(j["prompt_kind"] == "dimension", "holistic", j["prompt_kind"])),
}

JUDGE_PATH_CASES = {
    "does not exist": lambda d: d / "missing.csv",
    "is a directory": lambda d: (d / "adir.csv").mkdir() or d / "adir.csv",
    "wrong extension": lambda d: _write(d / "judges.json", "{}"),
    "parquet that is text": lambda d: _write(d / "judges.parquet", "image,family\n"),
}

# ------------------------------------------------------------------ ratings files (the --ratings file)

RATING_CASES = {
    "empty file": ("csv", lambda j, r: ""),
    "header only": ("csv", lambda j, r: "image,rater,score\n"),
    "no rater column": ("csv", lambda j, r: r.drop(columns="rater")),
    "no score column": ("csv", lambda j, r: r.drop(columns="score")),
    "scores all text": ("csv", lambda j, r: r.assign(score="nice")),
    "scores all NaN": ("csv", lambda j, r: r.assign(score="nan")),
    "every row a duplicate of one": ("csv", lambda j, r: pd.concat([r.head(1)] * 50)),
    "binary garbage": ("csv", lambda j, r: bytes(range(256)) * 40),
    "utf-16 text": ("csv", lambda j, r: r.to_csv(index=False).encode("utf-16")),
    "PARA GIAA read as csv": ("csv", lambda j, r: "imageName,aestheticScore_mean,qualityScore_mean\n"
                              + "".join(f"{i},3.1,2.9\n" for i in r["image"].unique())),
    "EVA read as csv": ("csv", lambda j, r: "image_id=user_id=score=difficulty=visual=composition=quality="
                        "semantic=vote_time\n1=u=5=1=2=3=2=2=x\n"),
    "EVA read with -f eva but comma separated": ("eva", lambda j, r: r),
    "PARA read with -f para without image column": ("para", lambda j, r: "sessionId,userId,aestheticScore\ns,u,3\n"),
    "no rated image matches the judges": ("csv", lambda j, r: r.assign(image="zz" + r["image"])),
    "one row": ("csv", lambda j, r: r.head(1)),
    "only missing image ids": ("csv", lambda j, r: r.assign(image="")),
}

RATING_PATH_CASES = {
    "does not exist": ("csv", lambda d: d / "missing.csv"),
    "is a directory (csv)": ("csv", lambda d: (d / "rdir").mkdir() or d / "rdir"),
    "PARA directory without PARA-Images.csv": ("para", lambda d: (d / "para").mkdir() or d / "para"),
    "EVA file that does not exist": ("eva", lambda d: d / "votes_filtered.csv"),
}

# ------------------------------------------------------------------ usable oddities (exit 0)

OK_CASES = {
    "holistic rows only": lambda j, r: (j[j["prompt_kind"] == "holistic"], r),
    "dimension rows only": lambda j, r: (j[j["prompt_kind"] == "dimension"], r),
    "a few unparsed (NaN) judge rows": lambda j, r: (j.assign(score=j["score"].where(j.index % 50 != 0)), r),
    "ratings with wild values on every fifth row": lambda j, r: (j, r.assign(
        score=np.where(r.index % 5 == 0, 99, np.clip(np.round(3 + r["score"]), 1, 5)))),
    "byte-order mark on both files": lambda j, r: (j.to_csv(index=False).encode("utf-8-sig"),
                                                   r.to_csv(index=False).encode("utf-8-sig")),
    "image paths in the judge table, ids in the ratings": lambda j, r: (j.assign(image="photos/" + j["image"] + ".jpg"),
                                                                        r),
}

FAST = ["-B", "100", "--partitions", "0", "--splits", "2", "-c", "ridge"]


def _run(capsys, cmd):
    rc = main(cmd)
    cap = capsys.readouterr()
    return rc, cap


def _assert_one_line_naming(rc, cap, name, out_dir=None):
    lines = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert rc == 1, (rc, cap.err)
    assert len(lines) == 1 and lines[0].startswith("multicrop: error: "), cap.err
    assert name in lines[0], lines[0]
    assert "Traceback" not in cap.err and "np.int64" not in lines[0]
    if out_dir is not None:
        assert not out_dir.exists()


@pytest.mark.parametrize("case", JUDGE_CASES)
def test_broken_judge_table(case, base, tmp_path, capsys):
    j, r = base
    scores = _write(tmp_path / "judges.csv", JUDGE_CASES[case](j, r))
    ratings = _write(tmp_path / "ratings.csv", r)
    out = tmp_path / "report"
    rc, cap = _run(capsys, ["eval", "judges", "-s", str(scores), "-r", str(ratings), "-o", str(out), *FAST])
    _assert_one_line_naming(rc, cap, "judges.csv", out)


@pytest.mark.parametrize("case", JUDGE_PATH_CASES)
def test_judge_table_path(case, base, tmp_path, capsys):
    scores = JUDGE_PATH_CASES[case](tmp_path)
    ratings = _write(tmp_path / "ratings.csv", base[1])
    rc, cap = _run(capsys, ["eval", "judges", "-s", str(scores), "-r", str(ratings), "-o", str(tmp_path / "o"), *FAST])
    _assert_one_line_naming(rc, cap, scores.name, tmp_path / "o")


@pytest.mark.parametrize("case", RATING_CASES)
def test_broken_ratings(case, base, tmp_path, capsys):
    j, r = base
    fmt, make = RATING_CASES[case]
    scores = _write(tmp_path / "judges.csv", j)
    ratings = _write(tmp_path / "ratings.csv", make(j, r))
    out = tmp_path / "report"
    rc, cap = _run(capsys, ["eval", "judges", "-s", str(scores), "-r", str(ratings), "-f", fmt, "-o", str(out),
                            *FAST])
    _assert_one_line_naming(rc, cap, "ratings.csv", out)


@pytest.mark.parametrize("case", RATING_PATH_CASES)
def test_ratings_path(case, base, tmp_path, capsys):
    fmt, make = RATING_PATH_CASES[case]
    scores = _write(tmp_path / "judges.csv", base[0])
    ratings = make(tmp_path)
    rc, cap = _run(capsys, ["eval", "judges", "-s", str(scores), "-r", str(ratings), "-f", fmt,
                            "-o", str(tmp_path / "o"), *FAST])
    _assert_one_line_naming(rc, cap, ratings.name, tmp_path / "o")


def test_unknown_ratings_format_names_the_option(base, tmp_path, capsys):
    scores = _write(tmp_path / "judges.csv", base[0])
    ratings = _write(tmp_path / "ratings.csv", base[1])
    rc, cap = _run(capsys, ["eval", "judges", "-s", str(scores), "-r", str(ratings), "-f", "paraa",
                            "-o", str(tmp_path / "o")])
    _assert_one_line_naming(rc, cap, "para", tmp_path / "o")


@pytest.mark.parametrize("case", OK_CASES)
def test_usable_oddities_give_a_report(case, base, tmp_path, capsys):
    j, r = OK_CASES[case](*base)
    scores, ratings = _write(tmp_path / "judges.csv", j), _write(tmp_path / "ratings.csv", r)
    rc, cap = _run(capsys, ["eval", "judges", "-s", str(scores), "-r", str(ratings), "-o", str(tmp_path / "o"),
                            *FAST])
    assert rc == 0, cap.err
    assert (tmp_path / "o" / "index.html").is_file() and "Traceback" not in cap.err
    assert all(ln.startswith("warning: ") for ln in cap.err.splitlines() if ln.strip())


PROBE_CASES = {
    "dimension rows only": lambda j, r: (j[j["prompt_kind"] == "dimension"], r, "judges.csv"),
    "ratings without raters": lambda j, r: (j, r.drop(columns="rater").assign(
        user=r["rater"]).drop(columns="user"), "ratings.csv"),
    "empty judge table": lambda j, r: ("", r, "judges.csv"),
    "no image matches": lambda j, r: (j.assign(image="x" + j["image"]), r, "judges.csv"),
}


@pytest.mark.parametrize("case", PROBE_CASES)
def test_probe_on_broken_inputs(case, base, tmp_path, capsys):
    j, r, culprit = PROBE_CASES[case](*base)
    scores, ratings = _write(tmp_path / "judges.csv", j), _write(tmp_path / "ratings.csv", r)
    rc, cap = _run(capsys, ["eval", "probe", "-s", str(scores), "-r", str(ratings), "-B", "100", "--splits", "2"])
    _assert_one_line_naming(rc, cap, culprit)


def test_corpus_size():
    n = (len(JUDGE_CASES) + len(JUDGE_PATH_CASES) + len(RATING_CASES) + len(RATING_PATH_CASES) + 1
         + len(OK_CASES) + len(PROBE_CASES))
    assert n >= 40


@pytest.mark.parametrize("args, option", [(["-B", "50"], "--resamples must be >= 100, got 50"),
                                          (["--folds", "1"], "--folds must be >= 2, got 1"),
                                          (["--confidence", "1.5"], "--confidence must be in (0, 1), got 1.5")])
def test_bad_options_are_named_as_typed(base, tmp_path, capsys, args, option):
    scores = _write(tmp_path / "judges.csv", base[0])
    ratings = _write(tmp_path / "ratings.csv", base[1])
    rc, cap = _run(capsys, ["eval", "judges", "-s", str(scores), "-r", str(ratings), "-o", str(tmp_path / "o"),
                            *args])
    _assert_one_line_naming(rc, cap, option, tmp_path / "o")
