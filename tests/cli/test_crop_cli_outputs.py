"""``multicrop crop`` end to end: file names, colour modes, EXIF, bad files, batch-wide option errors."""

import io
import json

import numpy as np
import pytest
from PIL import Image

import multicrop.crop.pipeline
from multicrop.cli.main import main
from multicrop.datasets.examples import example_image

# partition: exactly k crops every time (direct writes fewer when it finds fewer distinct subjects)
FAST = ["--saliency", "spectral", "--no-faces", "--no-preview", "-s", "partition"]


@pytest.fixture(scope="module")
def upright():
    return example_image(width=900, height=350)


@pytest.fixture(scope="module")
def photo(tmp_path_factory, upright):
    path = tmp_path_factory.mktemp("in") / "ex.jpg"
    Image.fromarray(upright).save(path, quality=90)
    return path


def _record(out, stem):
    return json.loads((out / f"{stem}.json").read_text())


def _err_lines(capsys):
    return capsys.readouterr().err.strip().splitlines()


# -- 1. photos with the same stem -------------------------------------------------------------

def test_same_stem_in_two_folders_gets_a_unique_name(tmp_path, upright, capsys):
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    a, b = tmp_path / "d1" / "x.jpg", tmp_path / "d2" / "x.jpg"
    Image.fromarray(upright).save(a, quality=90)
    Image.fromarray(upright[:, ::-1].copy()).save(b, quality=90)  # different pixels, same name
    out = tmp_path / "o"
    assert main(["crop", str(a), str(b), "-o", str(out), *FAST]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "x-2.json", "x-2_1.jpg", "x-2_2.jpg", "x.json", "x_1.jpg", "x_2.jpg",
    ]
    first, second = _record(out, "x"), _record(out, "x-2")
    assert first["source"] == str(a) and first["stem"] == "x" and first["warnings"] == []
    assert second["source"] == str(b) and second["stem"] == "x-2"
    assert [c["path"] for c in second["crops"]] == ["x-2_1.jpg", "x-2_2.jpg"]
    assert len(second["warnings"]) == 1 and str(a) in second["warnings"][0]
    err = _err_lines(capsys)
    assert err == [f"multicrop: {b}: warning: {second['warnings'][0]}"]
    assert "x-2" in err[0]
    # the second photo's crops really are its own (mirrored) pixels
    box = second["crops"][0]["box"]
    with Image.open(out / "x-2_1.jpg") as im:
        ref = upright[:, ::-1][box["y"]:box["y"] + box["h"], box["x"]:box["x"] + box["w"]]
        assert np.abs(np.asarray(im).astype(int) - ref.astype(int)).mean() < 6


def test_renamed_stem_avoids_names_already_in_the_batch(tmp_path, upright, capsys):
    for name in ("a/x.png", "b/x.jpg", "x-2.jpg"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        Image.fromarray(upright).save(tmp_path / name)
    out = tmp_path / "o"
    args = [str(tmp_path / n) for n in ("a/x.png", "b/x.jpg", "x-2.jpg")]
    assert main(["crop", *args, "-o", str(out), *FAST]) == 0
    assert {p.name for p in out.glob("*.json")} == {"x.json", "x-3.json", "x-2.json"}
    assert _record(out, "x-3")["source"] == args[1] and _record(out, "x-2")["source"] == args[2]


# -- 2. native modes ---------------------------------------------------------------------------

def _crop_of(arr, box):
    return arr[box["y"]:box["y"] + box["h"], box["x"]:box["x"] + box["w"]]


def test_sixteen_bit_grey_png_crops_stay_sixteen_bit(tmp_path, upright, capsys):
    g16 = (upright.astype(np.uint32).sum(-1) * 65535 // 765).astype(np.uint16)
    g16[0, 0] = 1  # values that 8 bits cannot hold
    g16[1, 1] = 65534
    Image.fromarray(g16).save(tmp_path / "g16.png")
    out = tmp_path / "o"
    assert main(["crop", str(tmp_path / "g16.png"), "-o", str(out), "-w", "100", *FAST]) == 0
    rec = _record(out, "g16")
    for c in rec["crops"]:
        with Image.open(out / c["path"]) as im:
            assert im.mode == "I;16" and im.format == "PNG"
            assert np.array_equal(np.asarray(im), _crop_of(g16, c["box"]))
        with Image.open(out / c["resized"]["100"]) as im:
            assert im.mode == "I;16" and im.width == 100
    # JPEG cannot hold 16 bits: 8-bit greyscale, not RGB
    assert main(["crop", str(tmp_path / "g16.png"), "-o", str(tmp_path / "j"), "-f", "jpg", *FAST]) == 0
    c = _record(tmp_path / "j", "g16")["crops"][0]
    with Image.open(tmp_path / "j" / c["path"]) as im:
        assert im.mode == "L"
        ref = (_crop_of(g16, c["box"]).astype(float) / 257).astype(int)
        assert np.abs(np.asarray(im).astype(int) - ref).mean() < 3
    # TIFF keeps 16 bits too
    assert main(["crop", str(tmp_path / "g16.png"), "-o", str(tmp_path / "t"), "-f", "tif", *FAST]) == 0
    c = _record(tmp_path / "t", "g16")["crops"][0]
    with Image.open(tmp_path / "t" / c["path"]) as im:
        assert im.mode == "I;16" and np.array_equal(np.asarray(im), _crop_of(g16, c["box"]))


def test_greyscale_jpeg_crops_stay_greyscale(tmp_path, upright):
    grey = Image.fromarray(upright).convert("L")
    grey.save(tmp_path / "g.jpg", quality=95)
    out = tmp_path / "o"
    assert main(["crop", str(tmp_path / "g.jpg"), "-o", str(out), *FAST]) == 0
    for c in _record(out, "g")["crops"]:
        with Image.open(out / c["path"]) as im:
            assert im.mode == "L" and im.format == "JPEG"


@pytest.mark.parametrize("fmt, mode", [("png", "RGBA"), ("webp", "RGBA"), ("tif", "RGBA"), ("jpg", "RGB")])
def test_alpha_is_kept_except_in_jpeg(tmp_path, upright, fmt, mode):
    rgba = np.dstack([upright, np.full(upright.shape[:2], 255, np.uint8)])
    rgba[:, ::2, 3] = 0  # every other column transparent
    Image.fromarray(rgba).save(tmp_path / "a.png")
    out = tmp_path / "o"
    assert main(["crop", str(tmp_path / "a.png"), "-o", str(out), "-f", fmt, *FAST]) == 0
    c = _record(out, "a")["crops"][0]
    with Image.open(out / c["path"]) as im:
        assert im.mode == mode
        px = np.asarray(im).astype(int)
    ref = _crop_of(rgba, c["box"])
    first_transparent = 0 if c["box"]["x"] % 2 == 0 else 1
    if mode == "RGBA":
        assert (px[:, first_transparent::2, 3] == 0).all() and (px[:, 1 - first_transparent::2, 3] == 255).all()
        if fmt != "webp":  # lossless formats keep every opaque pixel
            assert np.array_equal(px[:, 1 - first_transparent::2], ref[:, 1 - first_transparent::2])
    else:  # composited on white
        assert px[:, first_transparent::2].mean() > 200


# -- 3. --width never upscales -----------------------------------------------------------------

def test_width_wider_than_the_crop_is_skipped_with_a_warning(tmp_path, photo, capsys):
    out = tmp_path / "o"
    assert main(["crop", str(photo), "-o", str(out), "-w", "5000", "-w", "120", "--json", *FAST]) == 0
    cap = capsys.readouterr()
    rec = json.loads(cap.out)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["ex.json", "ex_1.jpg", "ex_2.jpg", "ex_1_w120.jpg", "ex_2_w120.jpg"]
    )
    for i, c in enumerate(rec["crops"], start=1):
        assert c["resized"] == {"5000": None, "120": f"ex_{i}_w120.jpg"}
        assert set(c["resize_skipped"]) == {"5000"}
        assert f"only {c['box']['w']} px wide" in c["resize_skipped"]["5000"]
        assert "never upscaled" in c["resize_skipped"]["5000"]
    err = cap.err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith(f"multicrop: {photo}: warning: crop ") for line in err)
    assert rec["warnings"] == [line.split("warning: ", 1)[1] for line in err]
    assert _record(out, "ex") == rec


def test_width_equal_to_the_crop_is_written(tmp_path, photo, capsys):
    assert main(["crop", str(photo), "-o", str(tmp_path / "a"), "--json", *FAST]) == 0
    w = json.loads(capsys.readouterr().out)["crops"][0]["box"]["w"]
    assert main(["crop", str(photo), "-o", str(tmp_path / "b"), "-w", str(w), "--json", *FAST]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["crops"][0]["resized"][str(w)] == f"ex_1_w{w}.jpg" and rec["crops"][0]["resize_skipped"] == {}


# -- 4. batch-wide option errors stop before the first photo -----------------------------------

@pytest.fixture
def no_analysis(monkeypatch):
    calls = []

    def spy(*a, **k):
        calls.append(a)
        raise AssertionError("a photo was analysed")

    monkeypatch.setattr(multicrop.crop.pipeline, "crop_photo", spy)
    return calls


def test_bad_format_stops_before_any_photo(tmp_path, photo, capsys, no_analysis):
    assert main(["crop", str(photo), str(photo), "-o", str(tmp_path / "o"), "-f", "bmp", *FAST]) == 1
    assert _err_lines(capsys) == [
        "multicrop: error: --format: format must be one of jpeg, jpg, png, tif, tiff, webp, got 'bmp'"
    ]
    assert no_analysis == [] and not (tmp_path / "o").exists()


def test_out_is_a_file_stops_before_any_photo(tmp_path, photo, capsys, no_analysis):
    (tmp_path / "f").write_text("")
    assert main(["crop", str(photo), str(photo), "-o", str(tmp_path / "f"), *FAST]) == 1
    assert _err_lines(capsys) == [f"multicrop: error: --out {tmp_path / 'f'}: exists and is not a directory"]
    assert main(["crop", str(photo), "-o", str(tmp_path / "f" / "sub"), *FAST]) == 1
    err = _err_lines(capsys)
    assert len(err) == 1 and err[0].startswith(f"multicrop: error: --out {tmp_path / 'f' / 'sub'}: cannot create")
    assert no_analysis == []


# -- 5. --max-pixels ---------------------------------------------------------------------------

def test_max_pixels_option_and_the_message_that_names_it(tmp_path, photo, capsys):
    out = tmp_path / "o"
    assert main(["crop", str(photo), "-o", str(out), "--max-pixels", "300000", *FAST]) == 1
    err = _err_lines(capsys)
    assert err == [
        f"multicrop: {photo}: 900x350 = 315,000 pixels exceeds the limit of 300,000 pixels; if this is a "
        "real photo, raise the limit with --max-pixels (OutputConfig.max_pixels)"
    ]
    assert list(out.iterdir()) == []
    assert main(["crop", str(photo), "-o", str(out), "--max-pixels", "315000", "--json", *FAST]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["size"] == [900, 350] and "max_pixels" not in rec["config"]  # how files are read is not hashed
    assert main(["crop", str(photo), "--max-pixels", "0"]) == 2  # not a positive integer: usage error


# -- 6. EXIF orientation and truncated files, end to end ---------------------------------------

# Orientation -> how the stored pixels relate to the upright photo (np.rot90's k; 90 degrees CCW each)
_STORED = {3: 2, 6: 1, 8: -1}


@pytest.mark.parametrize("orientation", sorted(_STORED))
def test_exif_rotated_photo_gives_the_crops_of_the_upright_photo(tmp_path, upright, orientation, capsys):
    Image.fromarray(upright).save(tmp_path / "up.jpg", quality=95, subsampling=0)
    exif = Image.Exif()
    exif[0x0112] = orientation
    stored = np.ascontiguousarray(np.rot90(upright, _STORED[orientation]))
    Image.fromarray(stored).save(tmp_path / "rot.jpg", quality=95, subsampling=0, exif=exif.tobytes())
    out = tmp_path / "o"
    # --lossless never: a lossless crop of up.jpg would move its box to the JPEG block grid
    assert main(["crop", str(tmp_path / "up.jpg"), str(tmp_path / "rot.jpg"), "-o", str(out), "-k", "3",
                 "--lossless", "never", *FAST]) == 0
    up, rot = _record(out, "up"), _record(out, "rot")
    assert rot["size"] == up["size"] == [900, 350]
    for cu, cr in zip(up["crops"], rot["crops"], strict=True):
        # same content, so the same crops (a JPEG round trip may move a box by a pixel or two)
        assert all(abs(cu["box"][k] - cr["box"][k]) <= 2 for k in ("x", "y", "w", "h"))
        with Image.open(out / cr["path"]) as im:
            assert im.getexif().get(0x0112, 1) == 1  # the pixels are upright; no tag may rotate them again
            got = np.asarray(im).astype(int)
        assert got.shape[:2] == (cr["box"]["h"], cr["box"]["w"])
        assert np.abs(got - _crop_of(upright, cr["box"]).astype(int)).mean() < 4
        if cu["box"] == cr["box"]:
            with Image.open(out / cu["path"]) as im:
                assert np.abs(got - np.asarray(im).astype(int)).mean() < 4


def test_truncated_jpeg_one_line_batch_continues_no_partial_files(tmp_path, photo, capsys):
    buf = io.BytesIO()
    Image.fromarray(example_image(width=900, height=350)).save(buf, format="JPEG", quality=90)
    data = buf.getvalue()
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(data[: len(data) // 2])
    out = tmp_path / "o"
    assert main(["crop", str(cut), str(photo), "-o", str(out), *FAST]) == 1
    cap = capsys.readouterr()
    err = cap.err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"multicrop: {cut}: truncated or corrupt image")
    assert f"{photo}: ex_1.jpg, ex_2.jpg" in cap.out
    assert sorted(p.name for p in out.iterdir()) == ["ex.json", "ex_1.jpg", "ex_2.jpg"]  # no .part file


def test_file_truncated_after_analysis_leaves_nothing(tmp_path, photo, capsys, monkeypatch):
    # The reduced decode succeeded, then the file went bad before the full-resolution decode.
    import multicrop.crop.pipeline as pipeline

    path = tmp_path / "late.jpg"
    path.write_bytes(photo.read_bytes())
    real = pipeline.crop_photo

    def then_truncate(src, cfg, **options):
        res = real(src, cfg, **options)
        if str(src) == str(path):
            path.write_bytes(photo.read_bytes()[:3000])
        return res

    monkeypatch.setattr(pipeline, "crop_photo", then_truncate)
    out = tmp_path / "o"
    assert main(["crop", str(path), str(photo), "-o", str(out), *FAST]) == 1
    err = _err_lines(capsys)
    assert len(err) == 1 and err[0].startswith(f"multicrop: {path}: truncated or corrupt image")
    assert sorted(p.name for p in out.iterdir()) == ["ex.json", "ex_1.jpg", "ex_2.jpg"]
