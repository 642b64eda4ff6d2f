"""Label mode: boxes saved in the Carousel label layout, read back by the dataset loader."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from multicrop.datasets.carousel import load_carousel
from multicrop.errors import DatasetError
from multicrop.geometry import Box
from multicrop.ratios import Ratio
from multicrop.web.labels import LabelFolder, ratio_label

BOXES = [{"x": 10, "y": 20, "w": 200, "h": 300, "ratio": "2:3"},
         {"x": 400.5, "y": 50, "w": 300, "h": 200, "ratio": "3:2"}]
META = {"k": 2, "title": "Two lamps", "creator": "A. Person", "licence": "CC BY 4.0",
        "url": "https://example.org/p/1"}


def test_save_then_load_carousel_reads_the_folder(make_app, label_dir):
    with TestClient(make_app(label_dir=label_dir)) as c:
        items = c.get("/api/label/items").json()
        assert [i["name"] for i in items["items"]] == ["photo0", "photo1", "photo2"]
        assert items["progress"] == {"labelled": 0, "total": 3}
        r = c.put("/api/label/items/photo0", json={"boxes": BOXES, "metadata": META})
        assert r.status_code == 200, r.text
        assert r.json()["progress"] == {"labelled": 1, "total": 3}
    ds = load_carousel(label_dir)
    assert [i.name for i in ds.items] == ["photo0"]  # the other two have no label file yet
    item = ds["photo0"]
    assert item.k == 2 and (item.width, item.height) == (900, 400)
    assert item.boxes == (Box(10, 20, 200, 300), Box(400.5, 50, 300, 200))
    assert item.ratios == (Ratio(2, 3), Ratio(3, 2))
    assert item.labels == ("2x3", "3x2") and item.notes == ()
    assert (item.metadata.title, item.metadata.creator, item.metadata.licence, item.metadata.url) == (
        "Two lamps", "A. Person", "CC BY 4.0", "https://example.org/p/1")
    assert item.image_path == label_dir / "dataset" / "photo0.jpg"
    raw = json.loads((label_dir / "dataset" / "photo0.json").read_text())
    assert set(raw) == {"version", "flags", "shapes", "imagePath", "imageData", "imageHeight", "imageWidth", "text"}
    assert raw["shapes"][0]["shape_type"] == "rectangle (2:3)" and raw["imagePath"] == "photo0.jpg"
    meta = json.loads((label_dir / "dataset" / "photo0_metadata.json").read_text())
    assert meta == {"website_url": "https://example.org/p/1", "subcrops": 2, "title": "Two lamps",
                    "creator": "A. Person", "copyright_license_type": "CC BY 4.0"}


def test_labels_survive_a_server_restart(make_app, label_dir):
    with TestClient(make_app(label_dir=label_dir)) as c:
        c.put("/api/label/items/photo1", json={"boxes": BOXES[:1], "metadata": {"title": "t"}})
    with TestClient(make_app(label_dir=label_dir)) as c:  # a new process reading the same folder
        got = c.get("/api/label/items/photo1").json()
    assert got["boxes"] == [{"x": 10.0, "y": 20.0, "w": 200.0, "h": 300.0, "ratio": "2:3"}]
    assert got["metadata"]["k"] == 1 and got["metadata"]["title"] == "t" and got["labelled"] is True


def test_reads_the_real_carousel_files_the_same_way(carousel_labels, tmp_path):
    # A real label file written back by the label folder gives the loader the same item.
    from multicrop.datasets.carousel import load_item

    name = "090717-N-4234E-473"
    real = load_item(carousel_labels, name, require_image=False)
    d = tmp_path / "copy" / "dataset"
    d.mkdir(parents=True)
    from PIL import Image

    Image.new("RGB", (real.width, real.height)).save(d / f"{name}.jpg")
    folder = LabelFolder(d.parent)
    boxes = [{**b.to_dict(), "ratio": str(r)} for b, r in zip(real.boxes, real.ratios)]
    folder.save(name, boxes, {"k": real.k, "title": real.metadata.title, "creator": real.metadata.creator,
                              "licence": real.metadata.licence, "url": real.metadata.url})
    again = load_item(d.parent, name)
    assert (again.ratios, again.k, again.metadata) == (real.ratios, real.k, real.metadata)
    # corners are written to a hundredth of a pixel: every corner within 0.005 px of the original
    for a, b in zip(again.boxes, real.boxes, strict=True):
        assert max(abs(u - v) for u, v in zip(a.corners(), b.corners())) <= 0.005 + 1e-9
    assert [b["ratio"] for b in folder.load(name)["boxes"]] == [b["ratio"] for b in boxes]


def test_no_client_path_reaches_the_file_system(make_app, label_dir, tmp_path):
    (tmp_path / "secret.jpg").write_bytes(b"x")
    with TestClient(make_app(label_dir=label_dir)) as c:
        for name in ["../secret", "..%2Fsecret", "%2E%2E%2F%2E%2E%2Fsecret", "photo0.jpg", "/etc/passwd", "photo0%2F..%2Fphoto1", "photo0%00"]:
            for r in (c.get(f"/api/label/items/{name}"), c.get(f"/api/label/items/{name}/image"),
                      c.put(f"/api/label/items/{name}", json={"boxes": BOXES})):
                assert r.status_code == 404, (name, r.status_code)
        assert c.get("/static/../labels/dataset/photo0.jpg").status_code == 404
    assert sorted(p.name for p in (label_dir / "dataset").iterdir()) == ["photo0.jpg", "photo1.jpg", "photo2.jpg"]


def test_bad_boxes_are_refused_with_one_line(make_app, label_dir):
    with TestClient(make_app(label_dir=label_dir)) as c:
        r = c.put("/api/label/items/photo0", json={"boxes": [{**BOXES[0], "ratio": "1:1"}]})
        assert r.status_code == 422
        assert r.json()["detail"] == "boxes[1]: ratio 1:1 is not allowed; allowed: 2:3, 3:2"
        r = c.put("/api/label/items/photo0", json={"boxes": [{**BOXES[0], "x": 800}]})
        assert r.status_code == 422 and "not inside the 900x400 photo" in r.json()["detail"]
        assert not (label_dir / "dataset" / "photo0.json").exists()
        # deleting every box un-labels the photo but keeps its metadata
        c.put("/api/label/items/photo0", json={"boxes": BOXES, "metadata": META})
        r = c.put("/api/label/items/photo0", json={"boxes": [], "metadata": META})
        assert r.json()["labelled"] is False and r.json()["metadata"]["title"] == "Two lamps"
        assert not (label_dir / "dataset" / "photo0.json").exists()
    with TestClient(make_app()) as c:
        r = c.get("/api/label/items")
        assert r.status_code == 404 and "--label" in r.json()["detail"]


def test_suggestions_and_listed_ratios(make_app, label_dir):
    with TestClient(make_app(label_dir=label_dir, label_ratios="4:5,1:1")) as c:
        r = c.post("/api/label/items/photo0/suggest", json={"k": 2})
        assert r.status_code == 200, r.text
        boxes = r.json()["boxes"]
        assert len(boxes) == 2 and {b["ratio"] for b in boxes} <= {"4:5", "1:1"}
        saved = c.put("/api/label/items/photo0", json={"boxes": boxes}).json()
    assert [b["ratio"] for b in saved["boxes"]] == [b["ratio"] for b in boxes]
    raw = json.loads((label_dir / "dataset" / "photo0.json").read_text())
    assert {s["label"] for s in raw["shapes"]} <= {"4x5", "1x1"}


def test_folder_errors_and_ratio_labels(tmp_path):
    with pytest.raises(DatasetError, match="not a directory"):
        LabelFolder(tmp_path / "nope")
    with pytest.raises(DatasetError, match="no photo in"):
        LabelFolder(tmp_path)
    assert [ratio_label(Ratio(*r)) for r in [(2, 3), (3, 2), (1.91, 1)]] == ["2x3", "3x2", "1.91x1"]


def test_label_corners_are_saved_to_a_hundredth_of_a_pixel(make_app, label_dir):
    box = {"x": 10.123456789012, "y": 20.987654321098, "w": 200.00000000001, "h": 300.0049, "ratio": "2:3"}
    with TestClient(make_app(label_dir=label_dir)) as c:
        assert c.put("/api/label/items/photo0", json={"boxes": [box]}).status_code == 200
    text = (label_dir / "dataset" / "photo0.json").read_text()
    raw = json.loads(text)
    assert raw["shapes"][0]["points"] == [[10.12, 20.99], [210.12, 320.99]]
    assert "0000000" not in text and "9999999" not in text


def test_the_folder_lists_its_photos_by_the_one_photo_rule(tmp_path):
    """A macOS ``._`` resource fork and a non-photo are not offered, a GIF and a WebP are: as ``multicrop crop``."""
    from multicrop.io import list_photos

    for name in ("a.jpg", "._a.jpg", "notes.txt", "b.GIF", "c.webp"):
        (tmp_path / name).write_bytes(b"")
    folder = LabelFolder(tmp_path)
    assert folder.names == ["a", "b", "c"] and folder.skipped == {}
    assert [folder.photo(n).name for n in folder.names] == ["a.jpg", "b.GIF", "c.webp"]
    assert [p.name for p in list_photos([tmp_path])] == ["a.jpg", "b.GIF", "c.webp"]
