"""crop_photo end to end on small images."""

import json

import numpy as np
import pytest
from PIL import Image

from multicrop import CropConfig, CropResult, crop_photo
from multicrop.errors import ImageLoadError, ImageTooSmallError
from multicrop.datasets.examples import EXAMPLE_SUBJECTS, example_image
from multicrop.geometry import Box

W, H = 1200, 460


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    path = tmp_path_factory.mktemp("ex") / "example.jpg"
    Image.fromarray(example_image(width=W, height=H)).save(path, quality=90)
    return path


def subject_centres(width=W, height=H):
    return [(cx * width, height / 2) for _, cx in EXAMPLE_SUBJECTS]


def contains_point(box: Box, p) -> bool:
    return box.x <= p[0] <= box.x2 and box.y <= p[1] <= box.y2


@pytest.mark.parametrize("strategy", ["partition", "topk"])
def test_three_crops_one_per_subject(example, strategy):
    res = crop_photo(example, CropConfig(k=3, strategy=strategy, analysis_max_side=512))
    assert isinstance(res, CropResult) and len(res.crops) == 3 and res.failure is None
    for c in res.crops:
        b = c.box
        assert 0 <= b.x and 0 <= b.y and b.x2 <= W and b.y2 <= H
        assert abs(b.h - b.w / c.ratio.value) <= 1
        assert str(c.ratio) in ("2:3", "3:2")
    hits = [[contains_point(c.box, p) for p in subject_centres()] for c in res.crops]
    for j in range(3):  # every subject is in some crop
        assert any(row[j] for row in hits)
    if strategy == "partition":
        assert [row.index(True) for row in hits] == [0, 1, 2]  # one each, left to right
        regions = res.partition_regions_source
        assert sum(r.w for r in regions) == pytest.approx(W) and regions[0].h == pytest.approx(H)
        for c, r in zip(res.crops, regions):
            # a crop may reach past its region towards its subject, but it belongs to the region
            assert contains_point(r, c.box.center)
            assert c.box.intersection(r) >= 0.5 * c.box.area
    else:
        assert res.partition is None and res.partition_regions_source == ()


def test_result_record_is_json_with_config_and_versions(example):
    res = crop_photo(example, CropConfig(k=2, strategy="partition", analysis_max_side=256, saliency="spectral"))
    d = json.loads(json.dumps(res.to_dict()))
    assert d["size"] == [W, H] and d["k"] == 2 and len(d["crops"]) == 2
    assert set(d["crops"][0]) == {"box", "score", "parts", "ratio"}
    assert {"kept", "border", "thirds", "face_cut"} <= set(d["crops"][0]["parts"])
    assert CropConfig.from_dict(d["config"]) == res.config
    assert d["versions"]["scorer"] == "composition/composition-3"
    assert d["versions"]["partition"] == "partition-2"
    assert set(d["partition"]) >= {"subjects", "fallback"}
    assert d["versions"]["saliency"].startswith("spectral/")
    assert d["partition"]["size"] == [W, H]
    # what the result carries for writing files stays out; timings to 0.1 ms; no ranking without a judge
    assert not {"image", "saliency", "shortlists", "ranking"} & set(d)
    assert d["timings"] and all(v == round(v, 4) for v in d["timings"].values())
    assert d["partition"] == res.partition_source.to_dict()  # in source pixels, not the analysis's


def test_exif_rotated_input_gives_rotated_crops(tmp_path):
    upright = example_image(width=900, height=350)
    # store the pixels rotated by 90 degrees with Orientation=6 (display: rotate back)
    stored = np.rot90(upright, k=1)
    exif = Image.Exif()
    exif[0x0112] = 6
    path = tmp_path / "rot.jpg"
    Image.fromarray(stored).save(path, exif=exif.tobytes(), quality=95)
    res = crop_photo(path, CropConfig(k=3, strategy="partition", saliency="spectral", faces=False, analysis_max_side=256))
    assert res.size == (900, 350)
    assert res.partition.orientation == "vertical"
    full = np.asarray(res.image.open_full())
    assert full.shape == (350, 900, 3)
    assert np.abs(full.astype(int) - upright.astype(int)).mean() < 6


def test_arrays_are_accepted():
    img = np.full((200, 600, 3), 30, np.uint8)
    img[60:140, 60:140] = 220
    img[60:140, 460:540] = 220
    res = crop_photo(img, CropConfig(k=2, ratios="1:1", saliency="spectral", faces=False))
    assert res.source is None and len(res.crops) == 2
    assert res.crops[0].box.x2 <= 300 <= res.crops[1].box.x


def test_too_small_and_too_many_crops():
    with pytest.raises(ImageTooSmallError, match="smaller than the smallest crop side"):
        crop_photo(np.zeros((40, 40, 3), np.uint8), CropConfig(saliency="spectral"))
    with pytest.raises(ImageTooSmallError, match="cannot hold k=9 crops"):
        crop_photo(np.zeros((100, 300, 3), np.uint8), CropConfig(k=9, saliency="spectral"))


def test_bad_file_raises(tmp_path):
    (tmp_path / "x.jpg").write_bytes(b"\xff\xd8\xff garbage")
    with pytest.raises(ImageLoadError):
        crop_photo(tmp_path / "x.jpg")


def test_region_too_narrow_for_a_crop_is_reported_not_fatal():
    img = np.full((300, 900, 3), 20, np.uint8)
    img[100:200, 100:200] = 255  # one subject, three crops asked
    res = crop_photo(img, CropConfig(k=3, strategy="partition", saliency="spectral", faces=False))
    assert len(res.crops) == 3
    assert res.failure is not None
    for c in res.crops:
        assert min(c.box.w, c.box.h) >= 64


def test_very_wide_photo_uses_sliding_windows():
    img = np.full((153, 1072, 3), 40, np.uint8)  # 4288x613 scaled by 1/4: no GAIC anchor for 2:3
    img[40:110, 100:150] = 230
    img[40:110, 900:950] = 230
    res = crop_photo(img, CropConfig(k=2, ratios="2:3", strategy="partition", saliency="spectral", faces=False))
    (a, b) = (c.box for c in res.crops)
    assert (a.w, a.h) == (b.w, b.h) == (102, 153)  # full-height 2:3 windows
    assert a.x <= 100 and a.x2 >= 150 and b.x <= 900 and b.x2 >= 950  # each holds its subject


# --- subject framing (partition-2 / composition-2) ------------------------------------------


def _with_saliency(monkeypatch, sal):
    import multicrop.crop.analysis as analysis

    monkeypatch.setattr(analysis, "compute_saliency", lambda image, method, threads=None: sal)


def _scene(shape, rects):
    h, w = shape
    img = np.full((h, w, 3), 60, np.uint8)
    sal = np.zeros((h, w))
    for x, y, bw, bh in rects:
        img[y:y + bh, x:x + bw] = 220
        img[y:y + bh:8, x:x + bw] = 30  # some texture
        sal[y:y + bh, x:x + bw] = 1.0
    return img, sal


def test_in_a_tall_strip_a_wide_subject_gets_a_landscape_crop(monkeypatch):
    # two wide subjects side by side: vertical cut, each region a 400x600 (2:3) strip in which
    # the largest 3:2 box is only 44 % of the region (GAIC's 50 % rule alone excludes it)
    rects = [(60, 260, 280, 90), (460, 260, 280, 90)]
    img, sal = _scene((600, 800), rects)
    _with_saliency(monkeypatch, sal)
    res = crop_photo(img, CropConfig(k=2, ratios="2:3,3:2", strategy="partition", faces=False))
    assert res.partition.orientation == "vertical" and res.failure is None
    assert [str(c.ratio) for c in res.crops] == ["3:2", "3:2"]
    for c, (x, y, w, h) in zip(res.crops, rects):
        assert c.box.contains(Box(x, y, w, h), tol=1)


def test_a_subject_straddling_the_cut_is_kept_whole_by_its_crop(monkeypatch):
    # subject 2 starts 20 px left of the least salient line between the subjects (x = 600),
    # within the bisect tolerance, so the cut stands; its crop crosses the cut to keep it whole
    # (overlapping crops are normal in multi-crop sets)
    rects = [(100, 200, 500, 200), (580, 60, 240, 100)]
    img, sal = _scene((500, 1000), rects)
    _with_saliency(monkeypatch, sal)
    res = crop_photo(img, CropConfig(k=2, ratios="2:3,3:2", strategy="partition", faces=False))
    assert res.failure is None and res.partition.orientation == "vertical"
    cut = res.partition.regions[1].x
    assert 580 < cut < 820  # the cut does run through subject 2
    for c, (x, y, w, h) in zip(res.crops, rects):
        assert c.box.contains(Box(x, y, w, h), tol=1)
        assert c.parts["kept"] > 0.99 and c.parts["framing"] > 0.5
    assert res.crops[1].box.x < cut


# --- distinct crops across regions (select-2) ---------------------------------------------


def _distinct_or_reported(res, limit):
    import itertools

    from multicrop.geometry import iou

    for (i, a), (j, b) in itertools.combinations(enumerate(res.crops, 1), 2):
        v = iou(a.box, b.box)
        if v > limit:
            assert res.failure and (f"crop {i} overlaps crop {j}" in res.failure
                                    or f"crop {j} overlaps crop {i}" in res.failure), (i, j, v)


def test_example_with_more_crops_than_subjects_gives_no_near_duplicates(tmp_path):
    # k=4 on the three-subject example: two regions' subject framings both settled on the
    # astronaut (IoU 0.87) before regions chose with an overlap limit.
    path = tmp_path / "example.jpg"
    Image.fromarray(example_image()).save(path, quality=90)
    cfg = CropConfig(k=4, strategy="partition")
    res = crop_photo(path, cfg)
    _distinct_or_reported(res, cfg.distinct_iou)
    assert "overlaps" not in (res.failure or "")  # here a distinct crop exists for every region
    assert res.versions["select"] == "select-2"


@pytest.mark.parametrize("limit", [0.0, 0.3])
def test_crops_of_a_split_subject_are_distinct_or_the_overlap_is_reported(monkeypatch, limit):
    # one large subject, k=2: the cut runs through it and both regions frame it
    img, sal = _scene((500, 1000), [(100, 100, 300, 300)])
    _with_saliency(monkeypatch, sal)
    res = crop_photo(img, CropConfig(k=2, strategy="partition", faces=False, distinct_iou=limit))
    _distinct_or_reported(res, limit)
    assert res.failure  # the partition failure is kept, overlaps are appended


def test_importing_multicrop_does_not_read_package_metadata():
    # __version__ is resolved on first use, from the dist-info folder on sys.path: importlib.metadata
    # (~40 ms of imports) is not imported for it, and says the same version
    import importlib.metadata
    import subprocess
    import sys

    code = ("import sys, multicrop; assert 'importlib.metadata' not in sys.modules, 'eager'; "
            "v = multicrop.__version__; assert 'importlib.metadata' not in sys.modules, 'read by importlib'; print(v)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    import multicrop

    assert out.strip() == multicrop.__version__ == importlib.metadata.version("multicrop") != ""
