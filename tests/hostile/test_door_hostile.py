"""One door for user-named files: heads, caches, panels, rubrics, stdin lists and judged images.

Each file a user names is read bounded (regular files only, a size limit),
JSON with a depth limit, and checked as a value; a failure is one line (a
multicrop error) naming the file, escaped for a terminal.  Nothing here may
hang, trace back or leak a numpy warning (pytest turns warnings into errors).
"""

from __future__ import annotations

import base64
import io
import json
import os

import numpy as np
import pytest

from multicrop.embeddings import EMBEDDING
from multicrop.errors import ImageLoadError, InvalidParameterError, MulticropError
from multicrop.io import list_photos, load_image

DEEP = "[" * 100_000 + "]" * 100_000


def _one_line(exc: BaseException, *names: str) -> str:
    text = str(exc)
    assert isinstance(exc, MulticropError), type(exc)
    assert "\n" not in text and "\x1b" not in text and "\u202e" not in text
    for n in names:
        assert n in text, (n, text)
    return text


def _head_doc(*, dim: int = EMBEDDING.dim, scale=(1.0, 5.0), coef=None, **target) -> dict:
    coef = np.full(dim, 0.01, np.float32) if coef is None else np.asarray(coef, np.float32)
    t = {"name": "overall", "attribute": "score", "scale": list(scale), "n": 100, "alpha": 1.0,
         "oof_spearman": 0.5, "intercept": 3.0, "dim": int(coef.shape[0]),
         "coef": base64.b64encode(coef.astype("<f4").tobytes()).decode("ascii")}
    t.update(target)
    return {"format": "multicrop-judge-head", "version": 1, "embedding": EMBEDDING.id, "source": "t",
            "n_folds": 5, "seed": 0, "targets": [t]}


def _write_head(tmp_path, doc, name="head.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


# --- heads ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case, doc, words", [
    ("reversed scale", _head_doc(scale=(10, 1)), "low < high"),
    ("zero-width scale", _head_doc(scale=(3, 3)), "low < high"),
    ("NaN scale", _head_doc(scale=(float("nan"), 5)), "low < high"),
    ("inf weights", _head_doc(coef=[np.inf] + [0.0] * (EMBEDDING.dim - 1)), "NaN or infinite weights"),
    ("NaN intercept", _head_doc(intercept=float("nan")), "intercept must be finite"),
    ("dimensions of another embedding", _head_doc(dim=1000), "the embedding has 1280 dimensions"),
    ("text n", _head_doc(n="many"), "n must be an integer"),
    ("target not an object", {**_head_doc(), "targets": [7]}, "must be an object"),
    ("seed as text", {**_head_doc(), "seed": "x"}, "seed must be an integer"),
])
def test_a_head_is_checked_as_values_when_it_is_read(tmp_path, case, doc, words):
    from multicrop.judges.heads import load_head

    path = _write_head(tmp_path, doc)
    with pytest.raises(InvalidParameterError) as err:
        load_head(path, embedding=EMBEDDING.id, dim=EMBEDDING.dim)
    _one_line(err.value, str(path), words)


def test_a_reversed_scale_head_is_refused_by_the_backend_before_any_call(tmp_path):
    from multicrop.judges.backends import JUDGE_BACKENDS

    path = _write_head(tmp_path, _head_doc(scale=(10, 1)))
    with pytest.raises(MulticropError) as err:
        JUDGE_BACKENDS.create("embedding", model="efficientnet_lite0", head=str(path))
    _one_line(err.value, "low < high")


def test_a_head_of_other_dimensions_is_refused_by_judge_head(tmp_path):
    from multicrop.judges.quick import head_panel

    path = _write_head(tmp_path, _head_doc(dim=1000))
    with pytest.raises(InvalidParameterError) as err:
        head_panel(path)
    _one_line(err.value, "1000 weights", "1280 dimensions")


@pytest.mark.parametrize("make", ["deep", "fifo", "zero", "huge", "not utf-8"])
def test_a_head_file_that_is_no_head_ends_in_one_line(tmp_path, make):
    from multicrop.judges.heads import head_sha256, load_head

    path = tmp_path / "head.json"
    if make == "deep":
        path.write_text(DEEP)
    elif make == "fifo":
        os.mkfifo(path)
    elif make == "zero":
        path.symlink_to("/dev/zero")
    elif make == "huge":
        path.write_bytes(b" " * (2 << 20))
    else:
        path.write_bytes(b'{"format": "\xff"}')
    with pytest.raises(MulticropError) as err:
        load_head(path)
    _one_line(err.value, "head file", str(path))
    if make in ("fifo", "zero", "huge"):
        with pytest.raises(MulticropError) as err:
            head_sha256(path)
        _one_line(err.value, "head file", str(path))


def test_rescale_refuses_a_zero_width_scale_instead_of_dividing_by_zero():
    from multicrop.judges.heads import rescale

    with pytest.raises(InvalidParameterError, match="low < high"):
        rescale(3.0, (3.0, 3.0), (1.0, 10.0))
    with pytest.raises(InvalidParameterError, match="low < high"):
        rescale(3.0, (1.0, 5.0), (10.0, 1.0))


# --- fitting: folds, ratings that cannot teach, the rule named -------------------------------------------------

class _Ratings:
    def __init__(self, n, value=None):
        import pandas as pd

        scores = [float(value if value is not None else 1 + i % 5) for i in range(n)]
        self.means = pd.DataFrame({"score": scores}, index=pd.Index([f"p{i}.jpg" for i in range(n)], name="image"))
        self.attributes = ()
        self.source = "r.csv"


def test_folds_beyond_the_data_are_refused_before_any_photo_is_read(tmp_path):
    from multicrop.judges.fitting import fit_head_from_ratings

    files = [tmp_path / f"p{i}.jpg" for i in range(30)]  # never created: nothing may be opened
    with pytest.raises(InvalidParameterError) as err:
        fit_head_from_ratings(_Ratings(30), files, n_folds=1000)
    _one_line(err.value, "--folds", "1000", "30 rated photos")


def test_fit_head_refuses_unbounded_folds_and_all_equal_ratings():
    from multicrop.judges.heads import fit_head

    X = np.random.default_rng(0).normal(size=(30, 8))
    with pytest.raises(InvalidParameterError, match="from 2 to 15"):
        fit_head(X, {"overall": X[:, 0]}, scales={"overall": (-5, 5)}, embedding="t@0", n_folds=1000)
    with pytest.raises(InvalidParameterError, match="all 30 ratings are 3"):
        fit_head(X, {"overall": np.full(30, 3.0)}, scales={"overall": (1, 5)}, embedding="t@0")
    with pytest.raises(InvalidParameterError, match="low < high"):
        fit_head(X, {"overall": X[:, 0]}, scales={"overall": (5, -5)}, embedding="t@0")


@pytest.mark.parametrize("n", [1, 14])
def test_too_few_rated_photos_names_the_rule(tmp_path, n):
    from multicrop.judges.fitting import fit_head_from_ratings

    with pytest.raises(InvalidParameterError) as err:
        fit_head_from_ratings(_Ratings(n), [tmp_path / f"p{i}.jpg" for i in range(n)])
    _one_line(err.value, f"rate {n} photos", "at least 20")


# --- the embedding cache of `judge fit --cache` ----------------------------------------------------------------

def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


@pytest.mark.parametrize("case", ["corrupt", "truncated zip", "fifo", "zero", "pickled", "rows do not pair",
                                  "NaN rows", "no model"])
def test_a_bad_embedding_cache_is_one_line_naming_it(tmp_path, case):
    from multicrop.judges.fitting import FeatureCache

    path = tmp_path / "cache.npz"
    good = dict(model=np.array(EMBEDDING.id), keys=np.array(["sha256:a", "sha256:b"]),
                features=np.zeros((2, 4), np.float32))
    if case == "corrupt":
        path.write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    elif case == "truncated zip":
        path.write_bytes(_npz(**good)[:300])
    elif case == "fifo":
        os.mkfifo(path)
    elif case == "zero":
        path.symlink_to("/dev/zero")
    elif case == "pickled":
        path.write_bytes(_npz(model=np.array(EMBEDDING.id), keys=np.array([{"a": 1}], dtype=object),
                              features=np.zeros((1, 4))))
    elif case == "rows do not pair":
        path.write_bytes(_npz(**{**good, "features": np.zeros((3, 4), np.float32)}))
    elif case == "NaN rows":
        path.write_bytes(_npz(**{**good, "features": np.full((2, 4), np.nan, np.float32)}))
    else:
        path.write_bytes(_npz(keys=good["keys"], features=good["features"]))
    with pytest.raises(MulticropError) as err:
        FeatureCache(path, model_id=EMBEDDING.id)
    _one_line(err.value, "--cache", str(path))


def test_a_good_cache_still_loads(tmp_path):
    from multicrop.judges.fitting import FeatureCache

    c = FeatureCache(tmp_path / "c.npz", model_id=EMBEDDING.id)
    c.put("sha256:a", np.ones(4))
    c.save()
    again = FeatureCache(tmp_path / "c.npz", model_id=EMBEDDING.id)
    assert list(again.rows) == ["sha256:a"] and again.rows["sha256:a"].tolist() == [1.0] * 4


# --- panels and rubrics nested too deep ------------------------------------------------------------------------

def test_a_panel_nested_100k_deep_is_one_line(tmp_path):
    from multicrop.judges.panel import load_panel

    path = tmp_path / "panel.toml"
    path.write_text("x = " + DEEP + "\n")
    with pytest.raises(InvalidParameterError) as err:
        load_panel(path)
    _one_line(err.value, "panel file", str(path), "nested too deep")


@pytest.mark.parametrize("make", ["deep", "fifo"])
def test_a_rubric_file_that_is_no_rubric_is_one_line(tmp_path, make):
    from multicrop.judges.rubric import load_rubric

    path = tmp_path / f"rubric-{make}.toml"
    if make == "deep":
        path.write_text("x = " + DEEP + "\n")
    else:
        os.mkfifo(path)
    with pytest.raises(MulticropError) as err:
        load_rubric(path)
    _one_line(err.value, str(path))


# --- images named in a judge input list ------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "zero", "dir"])
def test_an_image_named_in_a_judge_list_that_is_no_file_never_blocks(tmp_path, kind):
    from multicrop.judges.types import ImageRef

    path = tmp_path / "x.jpg"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    with pytest.raises(ImageLoadError) as err:
        ImageRef(path, label="x.jpg")
    _one_line(err.value, str(path), "not a regular file")


# --- stdin lists -----------------------------------------------------------------------------------------------

def test_a_stdin_list_splits_on_newline_only_and_keeps_leading_spaces(tmp_path):
    (tmp_path / "a.jpg").write_bytes(b"")
    (tmp_path / " a.jpg").write_bytes(b"")
    (tmp_path / "l\u2028m.jpg").write_bytes(b"")
    text = f" a.jpg\n{tmp_path}/l\u2028m.jpg\r\n\n# a comment\n"
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        got = list_photos(["-"], stdin=io.StringIO(text))
    finally:
        os.chdir(cwd)
    assert [p.name for p in got] == [" a.jpg", "l\u2028m.jpg"]


def test_a_nul_in_a_stdin_list_is_refused_in_one_line():
    with pytest.raises(InvalidParameterError) as err:
        list_photos(["-"], stdin=io.StringIO("a.jpg\nb\x00.jpg\n"))
    _one_line(err.value, "line 2", "NUL")


# --- names escaped for a terminal ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["\x1b[2Jclear.jpg", "evil\u202egpj.exe", "line\u2028sep.jpg", "bell\x07.jpg"])
def test_a_file_name_with_terminal_controls_is_escaped_in_the_message(tmp_path, name):
    from multicrop.io import read_text_bounded

    path = tmp_path / name
    with pytest.raises(MulticropError) as e1:
        load_image(path)
    with pytest.raises(MulticropError) as e2:
        read_text_bounded(path, what="-c")
    for err in (e1, e2):
        text = _one_line(err.value, "no such file")
        assert all(c.isprintable() for c in text), ascii(text)


# --- `store export` of a score stored as text ------------------------------------------------------------------

def test_store_export_of_a_score_edited_to_text_is_one_line_and_writes_nothing(tmp_path, capsys, hb):
    import sqlite3

    from multicrop.cli import main as cli_main

    photo = hb.good_photo(tmp_path / "p.png")
    db = tmp_path / "s.sqlite"
    assert cli_main.main(["judge", str(photo), "--db", str(db), "--holistic-repetitions", "1",
                          "--dimension-repetitions", "0", "--json"]) == 0
    con = sqlite3.connect(db)
    con.execute("UPDATE calls SET score = 'high'")
    con.commit()
    con.close()
    capsys.readouterr()
    out = tmp_path / "x.csv"
    assert cli_main.main(["store", "export", str(db), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stored as str 'high'" in err and "Traceback" not in err, err
    assert not out.exists()


@pytest.mark.parametrize("kind", ["fifo", "gone"])
def test_a_batch_judge_photo_that_stopped_being_a_file_fails_alone(tmp_path, hb, kind):
    from multicrop.batch.judge_job import judge_task

    good = hb.good_photo(tmp_path / "good.png")
    bad = tmp_path / "bad.png"
    if kind == "fifo":
        os.mkfifo(bad)
    panel = {"families": [{"name": "measured", "backend": "measured", "model": "measured-v1"}],
             "holistic_repetitions": 1, "dimension_repetitions": 0}
    out = judge_task([str(good), str(bad)], panel, None, [])
    rows = {r["path"]: r for r in out["images"]}
    assert rows[str(good)]["status"] == "done"
    assert rows[str(bad)]["status"] == "failed" and rows[str(bad)]["error_kind"] == "ImageLoadError"
    assert "\n" not in rows[str(bad)]["error"] and ("FIFO" in rows[str(bad)]["error"] or "no such file"
                                                     in rows[str(bad)]["error"])
