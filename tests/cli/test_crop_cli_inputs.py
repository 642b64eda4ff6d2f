"""``multicrop crop`` inputs and options: folders, -R, globs, stdin, TOML, presets, --quality, limits."""

import io
import json
import struct
import sys
import zlib

import pytest
from PIL import Image

from multicrop.cli import crop as crop_cli
from multicrop.cli.main import main
from multicrop.crop.config import STRATEGIES, CropConfig, OutputConfig
from multicrop.datasets.examples import EXAMPLE_HEIGHT, EXAMPLE_WIDTH, example_image
from multicrop.ratios import RATIO_PRESETS
from multicrop.ratios import PRESETS

FAST = ["--saliency", "spectral", "--no-faces", "--no-preview"]


def png_header(width, height):
    """A PNG that declares ``width`` x ``height`` and holds no pixels (a truncated bomb)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) \
        + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("photos")
    px = example_image(width=600, height=240)
    (root / "sub").mkdir()
    for rel in ("a.jpg", "b.PNG", "sub/c.jpg"):
        Image.fromarray(px).save(root / rel)
    (root / "notes.txt").write_text("not a photo")
    return root


def _names(out):
    return sorted(p.name for p in out.iterdir() if p.suffix == ".json")


def test_help_defaults_match_their_home():
    crop, out = CropConfig(), OutputConfig()
    h = crop_cli.HELP_DEFAULTS
    assert (h["k"], h["strategy"], h["saliency"], h["faces"]) == (crop.k, crop.strategy, crop.saliency, crop.faces)
    assert h["ratios"] == ",".join(str(r) for r in crop.ratios) and h["strategies"] == STRATEGIES
    assert (h["quality"], h["max_pixels"], h["preview"]) == (out.quality, out.max_pixels, out.preview)
    assert (h["example_width"], h["example_height"]) == (EXAMPLE_WIDTH, EXAMPLE_HEIGHT)


def test_presets_listed_in_help(capsys):
    assert main(["crop", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    for name in RATIO_PRESETS:
        assert name in help_text


@pytest.mark.parametrize("args", [["-p", "tiktok"], ["--preset", "4:5"], ["-r", "tiktok"], ["-r", "2:0"]])
def test_every_preset_error_lists_the_presets(tmp_path, tree, args, capsys):
    assert main(["crop", str(tree / "a.jpg"), "-o", str(tmp_path / "o"), *args, *FAST]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "carousel (2:3,3:2)" in err[0] and "widescreen (16:9)" in err[0]
    assert not (tmp_path / "o").exists()


def test_folder_recursive_glob_and_stdin(tmp_path, tree, monkeypatch, capsys):
    assert main(["crop", str(tree), "-o", str(tmp_path / "f"), *FAST]) == 0
    assert _names(tmp_path / "f") == ["a.json", "b.json"]
    assert main(["crop", str(tree), "-R", "-o", str(tmp_path / "r"), *FAST]) == 0
    assert _names(tmp_path / "r") == ["a.json", "b.json", "c.json"]
    assert main(["crop", str(tree / "**" / "*.jpg"), "-o", str(tmp_path / "g"), *FAST]) == 0
    assert _names(tmp_path / "g") == ["a.json", "c.json"]
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"# my picks\n{tree / 'b.PNG'}\n\n{tree / 'sub' / 'c.jpg'}\n"))
    assert main(["crop", "-", "-o", str(tmp_path / "s"), *FAST]) == 0
    assert _names(tmp_path / "s") == ["b.json", "c.json"]


@pytest.mark.parametrize("make,message", [
    (lambda d: d.mkdir(), "folder holds no photo"),
    (lambda d: None, "pattern matches no photo"),
])
def test_empty_folder_or_pattern_is_one_line(tmp_path, make, message, capsys):
    target = tmp_path / "empty"
    make(target)
    arg = str(target) if target.exists() else str(tmp_path / "*.jpg")
    assert main(["crop", arg, "-o", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and arg in err[0]


def test_toml_and_json_configs(tmp_path, tree, capsys):
    toml = tmp_path / "cfg.toml"
    toml.write_text('k = 3\nratios = "1:1"\nsaliency = "spectral"\nfaces = false\npreview = false\n'
                    'quality = 70\nlossless = "never"\n[weights]\nthirds = 0.5\n')
    assert main(["crop", str(tree / "a.jpg"), "-o", str(tmp_path / "t"), "-c", str(toml), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["config"]["k"] == 3 and rec["config"]["weights"]["thirds"] == 0.5
    assert rec["config"]["ratios"] == ["1:1"] and {c["lossless"] for c in rec["crops"]} == {False}
    bad = tmp_path / "bad.toml"
    bad.write_text("k = = 3\n")
    assert main(["crop", str(tree / "a.jpg"), "-c", str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0] and "not valid TOML" in err[0]
    js = tmp_path / "cfg.json"
    js.write_text(json.dumps({"k": 3, "lossless": "sometimes"}))
    assert main(["crop", str(tree / "a.jpg"), "-c", str(js)]) == 1
    assert "lossless must be one of auto, never, got 'sometimes'" in capsys.readouterr().err


def test_quality_option(tmp_path, tree):
    sizes = {}
    for q in (20, 95):
        out = tmp_path / f"q{q}"
        assert main(["crop", str(tree / "b.PNG"), "-o", str(out), "-f", "webp", "-q", str(q), *FAST]) == 0
        sizes[q] = (out / "b_1.webp").stat().st_size
    assert sizes[20] < sizes[95]
    assert main(["crop", str(tree / "a.jpg"), "-q", "101"]) == 2


def test_ratio_that_fits_no_crop_is_an_error(tmp_path, tree, capsys):
    """Issue 12 item 8: ``--ratio 1:1000 --strategy topk`` wrote zero crops and exited 0."""
    out = tmp_path / "o"
    code = main(["crop", str(tree / "a.jpg"), str(tree / "b.PNG"), "-o", str(out), "--ratio", "1:1000",
                 "--strategy", "topk", *FAST])
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("no crop of ratio 1:1000" in e for e in err)
    assert str(tree / "a.jpg") in err[0] and list(out.iterdir()) == []


@pytest.mark.parametrize("side,limit,expected", [
    (50000, None, "50000x50000 = 2500.0 MP exceeds the limit of 300.0 MP"),
    (1000, "999999", "1000x1000 = 1.0 MP exceeds the limit of 999,999 pixels"),
    (1000, "1000000", "truncated or corrupt image"),
])
def test_pixel_limit_message_states_the_configured_limit(tmp_path, side, limit, expected, capsys):
    """Issue 12 item 9: the message named Pillow's 2x limit (600000000), not ours."""
    path = tmp_path / "bomb.png"
    path.write_bytes(png_header(side, side))
    args = ["--max-pixels", limit] if limit else []
    assert main(["crop", str(path), "-o", str(tmp_path / "o"), *args, *FAST]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"multicrop: {path}: ") and expected in err[0]
    assert "600000000" not in err[0] and list((tmp_path / "o").iterdir()) == []


@pytest.fixture(scope="module")
def panorama(tmp_path_factory):
    path = tmp_path_factory.mktemp("pano") / "pano.png"
    Image.fromarray(example_image(width=6000, height=2000)).save(path)
    return path


@pytest.mark.parametrize("strategy", ["partition", "direct"])
def test_instagram_preset_gives_one_ratio_for_all_crops(tmp_path, panorama, strategy, capsys):
    force = ["--force-k"] if strategy == "direct" else []  # direct may find fewer distinct subjects
    assert main(["crop", str(panorama), "-p", "instagram", "-k", "3", "-s", strategy, "-n", *force, *FAST]) == 0
    rec = json.loads(capsys.readouterr().out)
    ratios = {c["ratio"] for c in rec["crops"]}
    assert len(rec["crops"]) == 3 and len(ratios) == 1 and ratios <= {"4:5", "1:1", "1.91:1"}
    assert rec["config"]["one_ratio"] is True and rec["config"]["ratios"] == ["4:5", "1:1", "1.91:1"]
    # --per-crop-ratio overrides the preset's rule
    assert main(["crop", str(panorama), "-p", "instagram", "--per-crop-ratio", "-k", "3", "-s", strategy,
                 "-n", *FAST]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["one_ratio"] is False


@pytest.mark.parametrize("kind", ["fifo", "device", "large", "binary"])
def test_a_config_that_is_no_bounded_text_file_is_refused_at_once(tmp_path, tree, kind, capsys):
    import os

    if kind == "fifo":
        path = tmp_path / "cfg.json"
        os.mkfifo(path)  # nobody writes to it: an unbounded read would block for ever
        expected = f"-c {path}: is a FIFO (named pipe), not a regular file"
    elif kind == "device":
        path = "/dev/zero"  # endless: must be refused by its kind, before any read
        expected = "-c /dev/zero: is a character device, not a regular file"
    elif kind == "large":
        path = tmp_path / "big.json"
        path.write_text(" " * ((1 << 20) + 1))
        expected = f"-c {path}: 1,048,577 bytes is larger than the 1,048,576 bytes allowed"
    else:
        path = tmp_path / "bin.json"
        path.write_bytes(b'{"k": 2}\xff')
        expected = f"-c {path}: not UTF-8 text (byte 8)"
    assert main(["crop", str(tree / "a.jpg"), "-c", str(path), "-o", str(tmp_path / "o"), *FAST]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"multicrop: error: {expected}"]
    assert not (tmp_path / "o").exists()
