"""Hostile inputs for ``multicrop judge``: panels, images, CSV listings and option values.

Every case asserts the exit code, that stderr says what is wrong in one line
naming the file (or option) at fault, that good images in the same run are
still judged, and that no stray or partial file is left (no store when the
run could not start, no table when it failed before writing one).
"""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from multicrop.cli import main as cli_main

GOOD_FAMILY = '[[families]]\nname = "m"\nbackend = "measured"\nmodel = "measured-v1"\n'

#: Panel files that must be refused: (case id, file name, bytes or text, words the one line must hold).
PANELS = [
    ("empty", "empty.toml", "", "needs at least one [[families]]"),
    ("binary", "bin.toml", b"\x00\xff\xfe\x01" * 64, "bin.toml"),
    ("syntax", "syntax.toml", "families = [\n", "syntax.toml"),
    ("unclosed-table", "table.toml", "[[families]\nname='a'", "table.toml"),
    ("no-families", "nofam.toml", "temperature = 0.3\n", "needs at least one [[families]]"),
    ("families-empty", "famempty.toml", "families = []\n", "needs at least one [[families]]"),
    ("families-not-table", "famstr.toml", 'families = ["a"]\n', "must be a table"),
    ("family-no-name", "noname.toml", '[[families]]\nbackend = "measured"\nmodel = "m"\n', "'name'"),
    ("family-no-backend", "nobackend.toml", '[[families]]\nname = "a"\nmodel = "m"\n', "'backend'"),
    ("family-no-model", "nomodel.toml", '[[families]]\nname = "a"\nbackend = "measured"\n', "'model'"),
    ("family-empty-name", "emptyname.toml", '[[families]]\nname = ""\nbackend = "measured"\nmodel = "m"\n', "'name'"),
    ("family-name-number", "numname.toml", '[[families]]\nname = 3\nbackend = "measured"\nmodel = "m"\n', "'name'"),
    ("unknown-backend", "unk.toml", '[[families]]\nname = "a"\nbackend = "gpt-magic"\nmodel = "m"\n', "gpt-magic"),
    ("unknown-top-key", "top.toml", "temprature = 1\n" + GOOD_FAMILY, "temprature"),
    ("unknown-family-key", "famkey.toml", GOOD_FAMILY + 'colour = "red"\n', "colour"),
    ("unknown-option", "opt.toml", GOOD_FAMILY + "options = { max_sidee = 10 }\n", "max_sidee"),
    ("temperature-text", "temp.toml", 'temperature = "hot"\n' + GOOD_FAMILY, "temperature"),
    ("temperature-negative", "tempneg.toml", "temperature = -1\n" + GOOD_FAMILY, "temperature"),
    ("temperature-nan", "tempnan.toml", "temperature = nan\n" + GOOD_FAMILY, "temperature"),
    ("repetitions-negative", "repneg.toml", "holistic_repetitions = -2\n" + GOOD_FAMILY, "holistic_repetitions"),
    ("repetitions-float", "repfloat.toml", "dimension_repetitions = 1.5\n" + GOOD_FAMILY, "dimension_repetitions"),
    ("repetitions-text", "reptext.toml", 'dimension_repetitions = "3"\n' + GOOD_FAMILY, "dimension_repetitions"),
    ("duplicate-family", "dup.toml", GOOD_FAMILY + GOOD_FAMILY, "duplicate family name"),
    ("same-judge-twice", "same.toml", GOOD_FAMILY + GOOD_FAMILY.replace('"m"', '"n"', 1), "same judge"),
    ("structured-output", "so.toml",
     '[[families]]\nname = "o"\nbackend = "openai-compatible"\nmodel = "x"\n'
     'options = { api_key_env = "", structured_output = "xml" }\n', "structured_output"),
    ("max-side-small", "ms.toml",
     '[[families]]\nname = "o"\nbackend = "openai-compatible"\nmodel = "x"\noptions = { api_key_env = "", max_side = 8 }\n',
     "max_side"),
    ("jpeg-quality-zero", "jq.toml",
     '[[families]]\nname = "o"\nbackend = "openai-compatible"\nmodel = "x"\n'
     'options = { api_key_env = "", jpeg_quality = 0 }\n', "jpeg_quality"),
    ("option-wrong-type", "ot.toml", GOOD_FAMILY + 'options = { max_side = "big" }\n', "max_side"),
    ("missing-key-env", "key.toml",
     '[[families]]\nname = "o"\nbackend = "openai-compatible"\nmodel = "x"\n'
     'options = { api_key_env = "MULTICROP_HOSTILE_UNSET_KEY" }\n', "MULTICROP_HOSTILE_UNSET_KEY"),
    ("prices-not-table", "prices.toml", 'prices = "cheap"\n' + GOOD_FAMILY, "[prices]"),
    ("options-not-table", "optstr.toml", GOOD_FAMILY + 'options = "fast"\n', "options must be a table"),
    ("utf16", "utf16.toml", GOOD_FAMILY.encode("utf-16"), "utf16.toml"),
]


def _write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _photo(path: Path, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray((rng.random((36, 44, 3)) * 255).astype(np.uint8)).save(path)
    return path


def _run(argv, capsys):
    code = cli_main.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _listing(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("case, name, content, words", PANELS, ids=[p[0] for p in PANELS])
def test_hostile_panel_is_refused_in_one_line_naming_the_file(tmp_path, capsys, monkeypatch, case, name, content,
                                                               words):
    monkeypatch.delenv("MULTICROP_HOSTILE_UNSET_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    photo = _photo(tmp_path / "p.png")
    panel = _write(tmp_path / name, content)
    before = _listing(tmp_path)
    code, out, err = _run(["judge", photo, "--panel", panel, "--db", tmp_path / "r.sqlite", "-o",
                           tmp_path / "t.csv"], capsys)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("multicrop: error: "), err
    assert words in err
    assert name in err or "family" in err or "families" in err or words == "MULTICROP_HOSTILE_UNSET_KEY", err
    assert "Traceback" not in err and "site-packages" not in err
    assert _listing(tmp_path) == before  # no store, no table


def _png_header(width: int, height: int) -> bytes:
    """A PNG whose header declares ``width x height`` and whose data is tiny (a decompression bomb)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b"")


def _truncated_jpeg(path: Path) -> bytes:
    _photo(path.with_suffix(".tmp.jpg"), seed=5)
    data = path.with_suffix(".tmp.jpg").read_bytes()
    path.with_suffix(".tmp.jpg").unlink()
    return data[: len(data) // 3]


#: Unreadable images among good ones: the run goes on, each bad file is named on one line, exit 1.
BAD_IMAGES = [
    ("text-as-jpg", "notes.jpg", lambda p: b"this is not an image\n"),
    ("zero-bytes", "zero.png", lambda p: b""),
    ("random-bytes", "noise.webp", lambda p: os.urandom(2048)),
    ("truncated-jpeg", "cut.jpg", _truncated_jpeg),
    ("png-bomb", "bomb.png", lambda p: _png_header(60000, 60000)),
    ("html-as-png", "page.png", lambda p: b"<!doctype html><html><body>404</body></html>"),
    ("jpeg-header-only", "head.jpg", lambda p: b"\xff\xd8\xff\xe0" + b"\x00" * 32),
    ("tiff-garbage", "scan.tif", lambda p: b"II*\x00" + os.urandom(256)),
]


@pytest.mark.parametrize("case, name, make", BAD_IMAGES, ids=[b[0] for b in BAD_IMAGES])
def test_unreadable_image_is_named_and_the_rest_of_the_run_goes_on(tmp_path, capsys, case, name, make):
    good = [_photo(tmp_path / "in" / f"good{i}.png", seed=i) for i in range(2)]
    bad = tmp_path / "in" / name
    bad.write_bytes(make(bad))
    before = _listing(tmp_path)
    code, out, err = _run(["judge", tmp_path / "in", "--db", tmp_path / "r.sqlite", "-o", tmp_path / "t.csv",
                           "--holistic-repetitions", "1", "--dimension-repetitions", "0"], capsys)
    assert code == 1
    lines = err.splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"multicrop: skipping unreadable image {bad}"), err
    assert lines[1] == "multicrop: error: 1 unreadable image(s) skipped (listed above)"
    import pandas as pd

    assert set(pd.read_csv(tmp_path / "t.csv").image) == {str(p) for p in good}
    assert _listing(tmp_path) - before == {"r.sqlite", "t.csv"}  # no -wal/-shm, no temporaries


#: Inputs refused before anything is created: (case id, how to build the argument, words in the line).
BAD_INPUTS = [
    ("missing-file", lambda d: d / "nope.jpg", "nope.jpg"),
    ("empty-dir", lambda d: (d / "empty").mkdir() or d / "empty", "no images to judge"),
    ("dir-without-images", lambda d: _write(d / "docs" / "a.txt", "x").parent, "no images to judge"),
    ("csv-no-image-column", lambda d: _write(d / "l.csv", "path,score\na.jpg,1\n"), "l.csv"),
    ("csv-empty", lambda d: _write(d / "e.csv", ""), "e.csv"),
    ("csv-binary", lambda d: _write(d / "b.csv", b"\x00\xff" * 300), "b.csv"),
    ("csv-missing-image", lambda d: _write(d / "m.csv", "image\nghost.jpg\n"), "ghost.jpg"),
    ("csv-image-is-dir", lambda d: (d / "sub.jpg").mkdir() or _write(d / "s.csv", "image\nsub.jpg\n"), "sub.jpg"),
    ("csv-header-only", lambda d: _write(d / "h.csv", "image\n"), "no images to judge"),
    ("label-clash", lambda d: (_photo(d / "A" / "x.png"), _photo(d / "B" / "x.png", 1),
                               _write(d / "A" / "l.csv", "image\nx.png\n"),
                               _write(d / "B" / "l.csv", "image\nx.png\n"))[2], "labelled 'x.png'"),
]


@pytest.mark.parametrize("case, make, words", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_inputs_are_refused_before_anything_is_written(tmp_path, capsys, monkeypatch, case, make, words):
    monkeypatch.chdir(tmp_path)
    arg = make(tmp_path)
    args = [arg]
    if case == "label-clash":
        args = [tmp_path / "A" / "l.csv", tmp_path / "B" / "l.csv"]
    before = _listing(tmp_path)
    code, out, err = _run(["judge", *args, "--db", tmp_path / "r.sqlite", "-o", tmp_path / "t.csv"], capsys)
    assert code == 1 and err.count("\n") == 1 and words in err, err
    assert "Traceback" not in err
    assert _listing(tmp_path) == before


#: Option values at and beyond their limits.
BAD_OPTIONS = [
    (["--concurrency", "0"], 1, "--concurrency must be an integer >= 1, got 0"),
    (["--concurrency", "-5"], 1, "--concurrency"),
    (["--timeout", "0"], 1, "--timeout must be a number of seconds > 0, got 0"),
    (["--timeout", "-1.5"], 1, "--timeout"),
    (["--timeout", "nan"], 1, "--timeout"),
    (["--retries", "-1"], 1, "--retries must be an integer >= 0"),
    (["--holistic-repetitions", "-1"], 1, "holistic_repetitions"),
    (["--dimension-repetitions", "-3"], 1, "dimension_repetitions"),
    (["-o", "t.xlsx"], 1, "--output must end in .csv or .parquet"),
    (["-o", "t"], 1, "--output must end in .csv or .parquet"),
    (["-m", ""], 1, "--model must name a model"),
    (["-m", "x", "--api-key-env", "MULTICROP_HOSTILE_UNSET_KEY"], 1, "MULTICROP_HOSTILE_UNSET_KEY"),
    (["--concurrency", "many"], 2, "--concurrency"),
]


@pytest.mark.parametrize("argv, code_expected, words", BAD_OPTIONS, ids=[" ".join(b[0]) or "-" for b in BAD_OPTIONS])
def test_bad_option_values_are_named_as_options(tmp_path, capsys, monkeypatch, argv, code_expected, words):
    monkeypatch.delenv("MULTICROP_HOSTILE_UNSET_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    photo = _photo(tmp_path / "p.png")
    before = _listing(tmp_path)
    code, out, err = _run(["judge", photo, "--db", tmp_path / "r.sqlite", *argv], capsys)
    assert code == code_expected and words in err, err
    assert "timeout_s" not in err and "max_retries" not in err and "Traceback" not in err
    if code_expected == 1:
        assert err.count("\n") == 1
    assert _listing(tmp_path) == before


def test_limits_just_under_and_over_repetitions_zero(tmp_path, capsys):
    """0 repetitions of both prompts is a panel that asks nothing: refused; 0 of one is fine."""
    photo = _photo(tmp_path / "p.png")
    code, _, err = _run(["judge", photo, "--db", tmp_path / "a.sqlite", "--holistic-repetitions", "0",
                         "--dimension-repetitions", "0"], capsys)
    assert code == 1 and err.count("\n") == 1 and "repetitions" in err and not (tmp_path / "a.sqlite").exists()
    code, out, err = _run(["judge", photo, "--db", tmp_path / "b.sqlite", "--holistic-repetitions", "1",
                           "--dimension-repetitions", "0", "--json"], capsys)
    assert code == 0 and '"performed": 1' in out
