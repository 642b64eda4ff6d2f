"""Lossless JPEG crops: decoded pixels equal the same region of the decoded original, by either backend."""

import io
import json

import numpy as np
import pytest
from PIL import Image

from multicrop.cli.main import main
from multicrop.datasets.examples import example_image
from multicrop.errors import MulticropError
from multicrop.geometry import Box
from multicrop.io import lossless
from multicrop.io.lossless import cut_jpeg, insert_segments, jpeg_header, kept_segments, snap_to_blocks

# partition: exactly k crops every time (direct writes fewer when it finds fewer distinct subjects)
FAST = ["--saliency", "spectral", "--no-faces", "--no-preview", "-s", "partition"]
BACKENDS = ["libturbojpeg", "jpegtran"]


def _clear():
    lossless.turbojpeg.cache_clear()
    lossless.jpegtran.cache_clear()


def _select(name, monkeypatch):
    """Make ``name`` the backend in use, or skip the test where it is not installed."""
    _clear()
    if name == "jpegtran":
        monkeypatch.setenv("MULTICROP_TURBOJPEG", "")
    if lossless.backend() != name:
        _clear()
        pytest.skip(f"{name} is not installed (.ci/run installs libturbojpeg0 and libjpeg-turbo-progs)")


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    """Each test once per backend (skipped where that backend is not installed)."""
    _select(request.param, monkeypatch)
    yield request.param
    monkeypatch.undo()
    _clear()


@pytest.fixture
def turbo(monkeypatch):
    yield _select("libturbojpeg", monkeypatch)
    _clear()


@pytest.fixture
def only_jpegtran(monkeypatch):
    yield _select("jpegtran", monkeypatch)
    monkeypatch.undo()
    _clear()


def _jpeg(path, subsampling, *, progressive=False, grey=False, **kw):
    img = Image.fromarray(example_image(width=1003, height=389))  # sizes off the block grid
    if grey:
        img = img.convert("L")
    img.save(path, quality=88, subsampling=subsampling, progressive=progressive, **kw)
    return path


def _decode(data, mode):
    with Image.open(io.BytesIO(data) if isinstance(data, bytes) else data) as im:
        if mode == "L" and im.mode != "L":
            im.draft("L", im.size)  # luma straight from the decoder, no colour conversion
        return np.asarray(im.convert(mode) if im.mode != mode else im).astype(int)


BOXES = [Box(21, 9, 333, 200), Box(0, 0, 1003, 389), Box(500, 100, 503, 289), Box(7, 380, 9, 9)]


@pytest.mark.parametrize("subsampling,block", [(0, (8, 8)), (1, (16, 8)), (2, (16, 16))])
def test_decoded_pixels_equal_the_original_region(tmp_path, backend, subsampling, block):
    src = _jpeg(tmp_path / "s.jpg", subsampling)
    assert jpeg_header(src.read_bytes()).block == block
    cuts = cut_jpeg(src, BOXES)
    luma_src, rgb_src = _decode(src, "L"), _decode(src, "RGB")
    for box, cut in zip(BOXES, cuts):
        moved = cut.box
        assert cut.error is None and moved == snap_to_blocks(box, block, (1003, 389))
        assert (moved.w, moved.h) == (box.w, box.h) and moved.x % block[0] == 0 and moved.y % block[1] == 0
        assert abs(moved.x - box.x) < block[0] and abs(moved.y - box.y) < block[1]
        assert moved.x + moved.w <= 1003 and moved.y + moved.h <= 389
        x, y, w, h = moved.x, moved.y, moved.w, moved.h
        luma = _decode(cut.data, "L")
        assert luma.shape == (h, w)
        assert np.array_equal(luma, luma_src[y:y + h, x:x + w])  # the DCT blocks are the same blocks
        if subsampling == 0:  # no chroma upsampling across the cut: every channel equal
            assert np.array_equal(_decode(cut.data, "RGB"), rgb_src[y:y + h, x:x + w])


@pytest.mark.parametrize("kind", ["progressive", "grey"])
def test_progressive_and_grey(tmp_path, backend, kind):
    src = _jpeg(tmp_path / "s.jpg", 2, progressive=kind == "progressive", grey=kind == "grey")
    (cut,) = cut_jpeg(src, [Box(32, 16, 400, 300)])
    assert cut.box == Box(32, 16, 400, 300)
    assert np.array_equal(_decode(cut.data, "L"), _decode(src, "L")[16:316, 32:432])


def test_both_backends_write_the_same_bytes(tmp_path, monkeypatch):
    _clear()
    if lossless.turbojpeg() is None or lossless.jpegtran() is None:
        pytest.skip("needs libturbojpeg and jpegtran")
    src = _jpeg(tmp_path / "s.jpg", 2, icc_profile=b"\0" * 300)
    one = cut_jpeg(src, BOXES[:3])
    monkeypatch.setenv("MULTICROP_TURBOJPEG", "")
    _clear()
    try:
        assert [c.data for c in cut_jpeg(src, BOXES[:3])] == [c.data for c in one]
    finally:
        monkeypatch.undo()
        _clear()


def _mpo(path):
    first = Image.fromarray(example_image(width=1003, height=389))
    second = Image.new("RGB", (320, 240), (200, 30, 30))
    first.save(path, format="MPO", save_all=True, append_images=[second], quality=88)
    return path


def test_mpo_is_cut_from_its_first_picture_without_its_mpf_index(tmp_path, backend):
    src = _mpo(tmp_path / "m.jpg")
    with Image.open(src) as im:
        assert im.format == "MPO" and im.n_frames == 2
    data = src.read_bytes()
    assert any(s[1] == 0xE2 and s[4:8] == b"MPF\0" for s in jpeg_header(data).segments)
    for keep_all in (False, True):
        (cut,) = cut_jpeg(src, [Box(16, 16, 300, 200)], keep_all=keep_all)
        assert np.array_equal(_decode(cut.data, "L"), _decode(src, "L")[16:216, 16:316])
        assert b"MPF\0" not in cut.data and cut.data.count(b"\xff\xd8") == 1
        with Image.open(io.BytesIO(cut.data)) as im:
            assert im.format == "JPEG"


def test_segments_kept_by_default_and_with_keep_all(tmp_path):
    ex = Image.Exif()
    ex[0x010F] = "Cam"
    icc = bytes(range(256)) * 3
    src = tmp_path / "s.jpg"
    Image.new("RGB", (64, 48), (10, 200, 30)).save(src, quality=90, exif=ex.tobytes(), icc_profile=icc)
    data = src.read_bytes()[:2] + b"\xff\xfe\x00\x07hello" + src.read_bytes()[2:]  # a COM segment
    header = jpeg_header(data)
    assert [s[1] for s in header.segments] == [0xFE, 0xE0, 0xE1, 0xE2]
    filtered = b"Exif\0\0filtered"
    default = kept_segments(header, exif=filtered)
    assert default == [b"\xff\xe1\x00\x10" + filtered, header.segments[3]]  # EXIF asked for, ICC
    assert kept_segments(header, exif=filtered, keep_all=True) == [header.segments[0], header.segments[2],
                                                                    header.segments[3]]
    assert kept_segments(header, exif=b"x" * 0xFFFF) == [header.segments[3]]  # too large for one segment


def test_cut_crops_carry_the_icc_profile_and_the_given_exif(tmp_path, backend):
    ex = Image.Exif()
    ex[0x010F] = "Cam"
    icc = bytes(range(256)) * 3
    src = _jpeg(tmp_path / "s.jpg", 2, exif=ex.tobytes(), icc_profile=icc)
    mine = Image.Exif()
    mine[0x0110] = "Model"
    (cut,) = cut_jpeg(src, [Box(0, 0, 64, 64)], exif=mine.tobytes())
    with Image.open(io.BytesIO(cut.data)) as im:
        assert im.info["icc_profile"] == icc and dict(im.getexif()) == {0x0110: "Model"}
    (cut,) = cut_jpeg(src, [Box(0, 0, 64, 64)], exif=mine.tobytes(), keep_all=True)
    with Image.open(io.BytesIO(cut.data)) as im:
        assert im.info["icc_profile"] == icc and dict(im.getexif()) == {0x010F: "Cam"}


def test_insert_segments_after_app0():
    buf = io.BytesIO()
    Image.new("RGB", (8, 8)).save(buf, "JPEG")
    data = buf.getvalue()
    assert data[2:4] == b"\xff\xe0"
    ex = Image.Exif()
    ex[0x010F] = "Cam"
    seg = kept_segments(jpeg_header(data), exif=ex.tobytes())
    out = insert_segments(data, seg)
    app0_end = 4 + int.from_bytes(data[4:6], "big")
    assert out[:app0_end] == data[:app0_end] and out[app0_end:app0_end + 2] == b"\xff\xe1"
    with Image.open(io.BytesIO(out)) as im:
        assert im.getexif()[0x010F] == "Cam"
    assert insert_segments(data, []) == data


def test_not_a_jpeg_and_no_backend(tmp_path, monkeypatch):
    with pytest.raises(MulticropError, match="not a JPEG"):
        jpeg_header(b"\x89PNG\r\n")
    src = _jpeg(tmp_path / "s.jpg", 2)
    monkeypatch.setenv("MULTICROP_TURBOJPEG", "")
    monkeypatch.setenv("MULTICROP_JPEGTRAN", "")
    _clear()
    try:
        assert lossless.backend() is None
        with pytest.raises(MulticropError, match="neither libturbojpeg"):
            cut_jpeg(src, [Box(0, 0, 8, 8)])
    finally:
        monkeypatch.undo()
        _clear()


def test_cli_crops_are_lossless_and_say_so(tmp_path, backend):
    src = _jpeg(tmp_path / "s.jpg", 2)
    out = tmp_path / "o"
    assert main(["crop", str(src), "-o", str(out), "-k", "3", *FAST]) == 0
    rec = json.loads((out / "s.json").read_text())
    luma_src = _decode(src, "L")
    for c in rec["crops"]:
        b = c["box"]
        assert c["lossless"] is True and c["lossless_fallback"] is None
        assert b["x"] % 16 == 0 and b["y"] % 16 == 0
        got = _decode(out / c["path"], "L")
        assert np.array_equal(got, luma_src[b["y"]:b["y"] + b["h"], b["x"]:b["x"] + b["w"]])
    for c in rec["crops"]:  # the ratio is the box's, exact to a pixel
        num, den = (float(v) for v in c["ratio"].split(":"))
        assert abs(c["box"]["w"] - c["box"]["h"] * num / den) <= 1


def test_cli_cuts_mpo_sources_losslessly_and_says_so(tmp_path, backend):
    src = _mpo(tmp_path / "m.jpg")
    assert main(["crop", str(src), "-o", str(tmp_path / "o"), "-k", "2", *FAST]) == 0
    rec = json.loads((tmp_path / "o" / "m.json").read_text())
    assert [c["lossless"] for c in rec["crops"]] == [True, True]
    assert any("MPO" in w and "first" in w for w in rec["warnings"])
    luma_src = _decode(src, "L")
    for c in rec["crops"]:
        b = c["box"]
        got = _decode(tmp_path / "o" / c["path"], "L")
        assert np.array_equal(got, luma_src[b["y"]:b["y"] + b["h"], b["x"]:b["x"] + b["w"]])


@pytest.mark.parametrize("case,reason", [
    ("never", "--lossless never"),
    ("png-out", "the output format is png, not JPEG"),
    ("rotated", "EXIF orientation 6 is not applied losslessly"),
    ("no-backend", "neither libturbojpeg (libturbojpeg0) nor jpegtran (libjpeg-turbo-progs) is installed"),
    ("png-in", "the source is not a JPEG file"),
])
def test_fallback_re_encodes_with_the_reason_in_the_json(tmp_path, monkeypatch, case, reason):
    src = _jpeg(tmp_path / "s.jpg", 2)
    args = []
    if case == "never":
        args = ["--lossless", "never"]
    elif case == "png-out":
        args = ["-f", "png"]
    elif case == "rotated":
        ex = Image.Exif()
        ex[0x0112] = 6
        Image.open(src).save(tmp_path / "r.jpg", quality=88, exif=ex.tobytes())
        src = tmp_path / "r.jpg"
    elif case == "no-backend":
        monkeypatch.setenv("MULTICROP_JPEGTRAN", "")
        monkeypatch.setenv("MULTICROP_TURBOJPEG", "")
    elif case == "png-in":
        Image.open(src).save(tmp_path / "p.png")
        src = tmp_path / "p.png"
    _clear()
    try:
        assert main(["crop", str(src), "-o", str(tmp_path / "o"), *args, *FAST]) == 0
    finally:
        monkeypatch.undo()
        _clear()
    rec = json.loads((tmp_path / "o" / f"{src.stem}.json").read_text())
    assert [c["lossless"] for c in rec["crops"]] == [False, False]
    assert {c["lossless_fallback"] for c in rec["crops"]} == {reason}


def test_a_failing_cut_falls_back_per_crop(tmp_path, monkeypatch, backend):
    src = _jpeg(tmp_path / "s.jpg", 2)
    if backend == "jpegtran":
        monkeypatch.setenv("MULTICROP_JPEGTRAN", "/bin/false")
        lossless.jpegtran.cache_clear()
        expected = "jpegtran failed"
    else:
        def broken(*a, **k):
            raise MulticropError("libturbojpeg failed (test)")

        monkeypatch.setattr(lossless, "_tj_cut", broken)
        expected = "libturbojpeg failed (test)"
    assert main(["crop", str(src), "-o", str(tmp_path / "o"), *FAST]) == 0
    rec = json.loads((tmp_path / "o" / "s.json").read_text())
    assert all(c["lossless"] is False and c["lossless_fallback"].startswith(expected) for c in rec["crops"])
    with Image.open(tmp_path / "o" / "s_1.jpg") as im:
        assert im.size == (rec["crops"][0]["box"]["w"], rec["crops"][0]["box"]["h"])


def test_one_library_call_cuts_every_crop(tmp_path, monkeypatch, turbo):
    src = _jpeg(tmp_path / "s.jpg", 2)
    calls = []
    real = lossless._tj_cut

    def counting(lib, data, boxes):
        calls.append(len(boxes))
        return real(lib, data, boxes)

    monkeypatch.setattr(lossless, "_tj_cut", counting)
    assert main(["crop", str(src), "-o", str(tmp_path / "o"), "-k", "3", *FAST]) == 0
    assert calls == [3]


def test_large_photos_run_jpegtran_one_crop_at_a_time(tmp_path, monkeypatch, only_jpegtran):
    """Above the parallel limit each jpegtran call starts only after the previous one ended."""
    src = _jpeg(tmp_path / "s.jpg", 2)
    running, peak = [], []
    real_start, real_finish = lossless._jpegtran_start, lossless._jpegtran_finish

    def start(*a, **k):
        running.append(1)
        peak.append(len(running))
        return real_start(*a, **k)

    def finish(*a, **k):
        try:
            return real_finish(*a, **k)
        finally:
            running.pop()

    monkeypatch.setattr(lossless, "_jpegtran_start", start)
    monkeypatch.setattr(lossless, "_jpegtran_finish", finish)
    boxes = [Box(0, 0, 100, 100), Box(200, 0, 100, 100), Box(400, 0, 100, 100)]
    for limit, expected in ((10**9, 3), (1000, 1)):
        monkeypatch.setattr(lossless, "PARALLEL_JPEGTRAN_PIXELS", limit)
        peak.clear()
        assert all(c.error is None for c in cut_jpeg(src, boxes))
        assert max(peak) == expected and len(peak) == 3
