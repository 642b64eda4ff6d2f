"""The API as an editor people trust: boxes outside the photo refused, one ratio for a platform preset,
sessions that do not see each other's photos, plain notes, and the seamless panorama."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
from fastapi.testclient import TestClient
from PIL import Image

from multicrop.web.app import SESSION_COOKIE

from .conftest import photo_bytes


def _upload(client, name, data):
    r = client.post("/api/photos", files=[("files", (name, data, "application/octet-stream"))])
    assert r.status_code == 200, r.text
    return r.json()["photos"][0]["id"]


@pytest.fixture
def client(make_app):
    with TestClient(make_app()) as c:
        yield c


BAD_BOXES = [
    ({"x": -5, "y": 0, "w": 100, "h": 100}, "(-5, 0, 100x100) must lie in the 900x400 photo"),
    ({"x": 0, "y": 0, "w": 1e6, "h": 1e6}, "(0, 0, 1e+06x1e+06) must lie in the 900x400 photo"),
    ({"x": 0, "y": 0, "w": 1e308, "h": 1e308}, "must lie in the 900x400 photo"),
    ({"x": 1e308, "y": 1e308, "w": 10, "h": 10}, "must lie in the 900x400 photo"),
    ({"x": 0, "y": 0, "w": -100, "h": -100}, "-100x-100 has no area"),
    ({"x": 800, "y": 0, "w": 200, "h": 200}, "(800, 0, 200x200) must lie in the 900x400 photo"),
]


@pytest.mark.parametrize("box, words", BAD_BOXES)
def test_boxes_outside_the_photo_are_refused_never_moved(client, box, words):
    pid = _upload(client, "p.png", photo_bytes(fmt="PNG"))
    r = client.get(f"/api/photos/{pid}/render", params=box)
    assert r.status_code == 422 and words in r.json()["detail"], r.text
    for route in ("download", "scores"):
        body = {"boxes": [{**box, "ratio": "1:1"}]}
        r = client.post(f"/api/photos/{pid}/{route}", json=body)
        assert r.status_code == 422, (route, r.text)
        assert r.json()["detail"].startswith("boxes[1]: ") and words in r.json()["detail"]


def test_a_box_on_the_edge_is_kept_where_it_is(client):
    pid = _upload(client, "p.png", photo_bytes(fmt="PNG"))
    box = {"x": 500, "y": 0, "w": 400, "h": 400, "ratio": "1:1"}  # touches the right and bottom edges
    r = client.post(f"/api/photos/{pid}/scores", json={"boxes": [box]})
    assert r.status_code == 200 and r.json()["crops"][0]["box"] == {"x": 500, "y": 0, "w": 400, "h": 400}
    assert client.get(f"/api/photos/{pid}/render", params={**box, "width": 100}).status_code == 200


def test_a_negative_platform_width_is_refused_naming_the_field(client):
    pid = _upload(client, "p.png", photo_bytes(fmt="PNG"))
    r = client.post(f"/api/photos/{pid}/download", json={"width": -50})
    assert r.status_code == 422
    assert r.json()["field"] == "width" and r.json()["detail"].startswith("width: ") and "-50" in r.json()["detail"]


def test_two_browser_sessions_do_not_see_each_others_photos(make_app):
    app = make_app()
    with TestClient(app) as alice, TestClient(app) as bob:
        pid = _upload(alice, "mine.png", photo_bytes(fmt="PNG"))
        bob.get("/api/settings")
        a, b = alice.cookies.get(SESSION_COOKIE), bob.cookies.get(SESSION_COOKIE)
        assert a and b and a != b and len(a) >= 32
        assert [p["name"] for p in alice.get("/api/photos").json()["photos"]] == ["mine.png"]
        assert bob.get("/api/photos").json()["photos"] == []
        for method, url in [("GET", f"/api/photos/{pid}"), ("GET", f"/api/photos/{pid}/image"),
                            ("POST", f"/api/photos/{pid}/crops"), ("DELETE", f"/api/photos/{pid}")]:
            r = bob.request(method, url, json={} if method == "POST" else None)
            assert r.status_code == 404, (url, r.text)
        assert alice.get(f"/api/photos/{pid}").status_code == 200  # bob's delete did nothing
        assert alice.delete(f"/api/photos/{pid}").status_code == 200
        assert alice.get("/api/photos").json()["photos"] == []


def test_instagram_keeps_one_ratio_unless_mixed_is_asked_for(client):
    # a 3:1 panorama with three subjects: per-crop freedom would mix shapes
    img = np.full((600, 1800, 3), 40, np.uint8)
    for x0 in (100, 800, 1500):
        img[150:450, x0:x0 + 200] = (230, 200, 90)
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG")
    pid = _upload(client, "pano.png", buf.getvalue())
    one = client.post(f"/api/photos/{pid}/crops", json={"k": 3, "ratios": "instagram"}).json()
    ratios = {c["ratio"] for c in one["crops"]}
    assert len(ratios) == 1 and ratios <= {"4:5", "1:1", "1.91:1"} and one["config"]["one_ratio"] is True
    said, only = [one["ratio_note"] or "", *one["plain_notes"]], ratios.pop()
    assert any(n.startswith(f"All slides are {only}") for n in said), said
    mixed = client.post(f"/api/photos/{pid}/crops", json={"k": 3, "ratios": "instagram", "mixed": True}).json()
    assert mixed["config"]["one_ratio"] is False
    if len({c["ratio"] for c in mixed["crops"]}) > 1:
        assert "re-crop" in mixed["ratio_note"]
    listed = client.post(f"/api/photos/{pid}/crops", json={"k": 2, "ratios": "1080x1350"}).json()
    assert {c["ratio"] for c in listed["crops"]} == {"4:5"}


def test_notes_are_plain_sentences(client):
    pid = _upload(client, "p.png", photo_bytes(fmt="PNG"))
    rec = client.post(f"/api/photos/{pid}/crops", json={"k": 5, "ratios": "2:3", "strategy": "partition"}).json()
    raw = ([rec["failure"]] if rec["failure"] else []) + rec["notes"]
    assert raw, "five narrow crops of a 900x400 photo always come with a note"
    assert len(rec["plain_notes"]) >= 1
    for text in rec["plain_notes"]:
        assert "IoU" not in text and "bisects" not in text and "x=" not in text and "analysis px" not in text
        assert text[0].isupper() and text.endswith(".")
    bad = client.post("/api/photos", files=[("files", ("notes.jpg", b"hello", "image/jpeg"))])
    assert bad.status_code == 422 and "Pillow" not in bad.json()["detail"]


def test_seamless_slides_tile_the_panorama_exactly(client):
    rng = np.random.default_rng(3)
    img = rng.integers(0, 255, (500, 2400, 3), dtype=np.uint8)
    img[150:350, 1150:1300] = 255  # a bright subject near the middle
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG")
    pid = _upload(client, "pano.png", buf.getvalue())
    lay = client.post(f"/api/photos/{pid}/seamless", json={"ratios": "instagram"}).json()
    assert lay["slides"] >= 2 and lay["ratio"] in ("4:5", "1:1", "1.91:1")
    w, h = lay["slide_size"]
    xs = [b["x"] for b in lay["boxes"]]
    assert xs == [xs[0] + i * w for i in range(lay["slides"])]
    z = zipfile.ZipFile(io.BytesIO(client.post(
        f"/api/photos/{pid}/download",
        json={"boxes": [{**b, "ratio": lay["ratio"]} for b in lay["boxes"]], "seamless": True}).content))
    record = json.loads(z.read("pano.json"))
    assert [c["box"] for c in record["crops"]] == lay["boxes"]
    slides = [np.asarray(Image.open(io.BytesIO(z.read(f"pano_{i + 1}.png")))) for i in range(lay["slides"])]
    band = lay["band"]
    joined = np.concatenate(slides, axis=1)
    assert np.array_equal(joined, img[band["y"]:band["y"] + band["h"], band["x"]:band["x"] + band["w"]])
    r = client.post(f"/api/photos/{pid}/seamless", json={"slides": 0})
    assert r.status_code == 422 and r.json()["field"] == "slides"


def test_a_photo_too_small_for_k_says_so_in_plain_words_without_server_paths(client):
    pid = _upload(client, "strip.png", photo_bytes(640, 120, fmt="PNG"))
    r = client.post(f"/api/photos/{pid}/crops", json={"k": 20, "ratios": "2:3", "strategy": "partition"})
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert detail.startswith("strip.png: The photo is too small for") and "fewer" in detail, detail
    assert "/tmp" not in detail and "upload" not in detail and "partition" not in detail


def test_a_photo_with_room_for_one_crop_says_choose_1_crop_not_1_or_fewer(client):
    pid = _upload(client, "s.png", photo_bytes(64, 64, fmt="PNG"))
    r = client.post(f"/api/photos/{pid}/crops", json={"k": 2, "ratios": "instagram", "strategy": "partition"})
    assert r.status_code == 422
    assert r.json()["detail"] == "s.png: The photo is too small for 2 crops of at least 64 px: choose 1 crop."


def test_a_focus_point_reaches_the_crop_library_and_must_lie_in_the_photo(client):
    pid = _upload(client, "p.png", photo_bytes(fmt="PNG"))
    r = client.post(f"/api/photos/{pid}/crops", json={"k": 1, "strategy": "direct", "focus": [750, 200]})
    assert r.status_code == 200, r.text
    rec = r.json()
    assert rec["focus"] == {"x": 750, "y": 200, "w": 0, "h": 0}
    assert "Crop 1 holds the point you chose." in rec["plain_notes"]
    b = rec["crops"][0]["box"]
    assert b["x"] <= 750 <= b["x"] + b["w"] and b["y"] <= 200 <= b["y"] + b["h"]  # one crop holds the point
    r = client.post(f"/api/photos/{pid}/crops", json={"k": 1, "focus": [-5, 10]})
    assert r.status_code == 422 and r.json()["detail"] == "focus: (-5, 10) must be a point in the 900x400 photo"
