"""The server's door (issue 29 class 7, issue 30 point 9): every failure one JSON line naming the
file or field, one bad upload never failing its neighbours, sizes refused from Content-Length before
the body is read, settings that cannot work refused when the server starts."""

from __future__ import annotations

import io
import json
import socket
import struct
import zlib

import numpy as np
import pytest
from fastapi.testclient import TestClient
from PIL import Image

from multicrop.crop.config import CropConfig
from multicrop.errors import InvalidParameterError

from .conftest import FAST, LiveServer, photo_bytes


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def palette_png_long_trns(w: int = 200, h: int = 160) -> bytes:
    """A palette PNG of 4 colours whose tRNS chunk holds 10 entries (longer than its palette)."""
    raw = b"".join(b"\x00" + bytes(((x // 20) + (y // 20)) % 4 for x in range(w)) for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0))
            + _chunk(b"PLTE", bytes([0, 0, 0, 255, 255, 255, 200, 60, 60, 60, 60, 200]))
            + _chunk(b"tRNS", bytes([255] * 10)) + _chunk(b"IDAT", zlib.compress(raw)) + _chunk(b"IEND", b""))


def png(w: int, h: int) -> bytes:
    buf = io.BytesIO()
    Image.fromarray((np.random.default_rng(0).random((h, w, 3)) * 255).astype(np.uint8)).save(buf, "PNG")
    return buf.getvalue()


@pytest.fixture
def client(make_app):
    with TestClient(make_app(max_upload_mb=1)) as c:
        yield c


def _post(client, *files):
    return client.post("/api/photos", files=[("files", (n, d, "application/octet-stream")) for n, d in files])


def test_a_long_trns_palette_png_never_fails_its_neighbours_and_every_reply_is_json(client):
    r = _post(client, ("a.png", photo_bytes(fmt="PNG")), ("pal.png", palette_png_long_trns()),
              ("c.png", photo_bytes(fmt="PNG")))
    assert r.status_code == 200, r.text
    body = r.json()
    names = [p["name"] for p in body["photos"]] + [x["name"] for x in body["refused"]]
    assert sorted(names) == ["a.png", "c.png", "pal.png"]
    assert {"a.png", "c.png"} <= {p["name"] for p in body["photos"]}  # the neighbours are in
    for bad in body["refused"]:
        assert bad["error"].startswith(bad["name"] + ": ") and "multicrop-web" not in bad["error"]
    for p in body["photos"]:
        for route, req in (("crops", {}), ("crops", {"k": "auto", "strategy": "direct"}), ("seamless", {})):
            rr = client.post(f"/api/photos/{p['id']}/{route}", json=req)
            assert rr.headers["content-type"].startswith("application/json"), (p["name"], route, rr.text)
            assert rr.status_code in (200, 422), (p["name"], route, rr.text)
            if rr.status_code == 422:
                assert rr.json()["detail"].startswith(p["name"] + ": ")


def test_small_photos_and_extreme_ratios_answer_json_naming_the_file_or_field(client):
    pid = _post(client, ("s.png", png(64, 64))).json()["photos"][0]["id"]
    r = client.post(f"/api/photos/{pid}/crops", json={"k": "auto", "strategy": "direct"})
    assert r.status_code == 200 and len(r.json()["crops"]) == 1, r.text
    for req in ({"ratios": "1:1000"}, {"ratios": "1:1000", "k": "auto", "strategy": "direct"}, {"ratios": "1e6:1"}):
        r = client.post(f"/api/photos/{pid}/crops", json=req)
        assert r.status_code == 422, (req, r.text)
        assert r.json()["detail"].startswith(("s.png: ", "ratio")), (req, r.text)


def test_a_1x1_photo_is_refused_at_upload_naming_it_and_its_batch_goes_on(client):
    r = _post(client, ("one.png", png(1, 1)), ("ok.jpg", photo_bytes()))
    assert r.status_code == 200
    body = r.json()
    assert [p["name"] for p in body["photos"]] == ["ok.jpg"]
    assert body["refused"] == [{"name": "one.png", "status": 422, "error":
                                "one.png: 1×1 px is smaller than the smallest crop (64 px a side), "
                                "so no carousel can be cut from it"}]
    r = _post(client, ("one.png", png(1, 1)))
    assert r.status_code == 422 and r.json()["detail"].startswith("one.png: 1×1 px")
    assert client.get("/api/photos").json()["photos"][0]["name"] == "ok.jpg"


def test_k_true_is_refused_naming_the_field(client):
    pid = _post(client, ("p.jpg", photo_bytes())).json()["photos"][0]["id"]
    for bad in (True, False):
        r = client.post(f"/api/photos/{pid}/crops", json={"k": bad})
        assert r.status_code == 422 and r.json()["field"] == "k", r.text
        assert r.json()["detail"].startswith("k: must be a whole number of crops"), r.text
    assert client.post(f"/api/photos/{pid}/crops", json={"k": 1}).status_code == 200


def test_an_unexpected_failure_is_a_json_line_naming_the_photo_without_server_paths(make_app, monkeypatch):
    app = make_app()
    store = app.state.store
    with TestClient(app) as c:
        pid = _post(c, ("girl.jpg", photo_bytes())).json()["photos"][0]["id"]

        def broken(photo, config, *, focus=None):
            raise RuntimeError(f"argmax of an empty sequence in {photo.path}")

        monkeypatch.setattr(store, "crops", broken)
        r = c.post(f"/api/photos/{pid}/crops", json={})
        assert r.status_code == 500 and r.headers["content-type"].startswith("application/json")
        detail = r.json()["detail"]
        assert detail.startswith("girl.jpg: the server could not do this (RuntimeError: argmax of an empty sequence")
        assert str(store.dir) not in detail and "the file" in detail

        def decode_fails(*a, **k):
            raise OSError("broken PNG chunk")

        monkeypatch.setattr(store, "add", decode_fails)
        r = _post(c, ("x.png", b"\x89PNG...."), ("y.png", b"\x89PNG...."))
        assert r.status_code == 422  # every file refused, each named, the server alive
        assert r.json()["detail"].count("could not do this (OSError: broken PNG chunk)") == 2


def test_an_upload_over_the_limit_is_refused_from_content_length_before_its_body(make_app):
    with LiveServer(make_app(max_upload_mb=1)) as srv, socket.create_connection(("127.0.0.1", srv.port)) as s:
        head = ("POST /api/photos?name=big%20one.jpg HTTP/1.1\r\nHost: x\r\n"
                "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 60000000\r\n\r\n")
        s.sendall(head.encode())  # and not one byte of the 60 MB body
        s.settimeout(20)
        reply = b""
        while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
            got = s.recv(65536)
            if not got:
                break
            reply += got
    status, _, body = reply.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 413")
    assert json.loads(body) == {"detail": "big one.jpg: larger than the 1 MB upload limit", "field": "upload"}


def test_settings_that_cannot_work_fail_when_the_server_starts(make_app):
    with pytest.raises(InvalidParameterError, match=r"--saliency sam: unknown saliency 'sam'.*u2netp"):
        make_app(config=CropConfig(saliency="sam", faces=False))
    from multicrop.saliency import SALIENCY

    class Broken:
        def __init__(self, **kw):
            pass

        def __call__(self, image):
            raise FileNotFoundError("models/u2netp.onnx")

    real = SALIENCY.create
    try:
        SALIENCY.create = lambda name, **kw: Broken() if name == "spectral" else real(name, **kw)
        with pytest.raises(InvalidParameterError, match=r"saliency 'spectral'.*cannot run: FileNotFoundError"):
            make_app(config=FAST)
    finally:
        SALIENCY.create = real


MISSHAPEN = {"x": 0, "y": 0, "w": 300, "h": 100, "ratio": "2:3"}


def test_a_box_not_of_its_ratio_is_refused_by_download_and_scores_never_reshaped(client):
    pid = _post(client, ("p.jpg", photo_bytes())).json()["photos"][0]["id"]
    for route, extra in (("download", {}), ("scores", {}), ("download", {"seamless": True})):
        r = client.post(f"/api/photos/{pid}/{route}", json={"boxes": [MISSHAPEN], **extra})
        assert r.status_code == 422, (route, extra, r.text)
        assert r.json()["detail"].startswith("boxes[1]: a 300x100 box is not 2:3"), r.text
    ok = client.post(f"/api/photos/{pid}/scores", json={"boxes": [{**MISSHAPEN, "w": 200, "h": 300}]})
    assert ok.status_code == 200 and ok.json()["crops"][0]["box"] == {"x": 0, "y": 0, "w": 200, "h": 300}


def test_the_label_page_refuses_a_misshapen_box_and_offers_no_shared_stem(make_app, tmp_path):
    d = tmp_path / "labels"
    d.mkdir()
    for name in ("x.jpg", "x.png", "y.jpg"):
        Image.open(io.BytesIO(photo_bytes(600, 400))).save(d / name)
    with TestClient(make_app(label_dir=d)) as c:
        items = c.get("/api/label/items").json()
        assert [it["file"] for it in items["items"]] == ["y.jpg"]
        assert {s["file"] for s in items["skipped"]} == {"x.jpg", "x.png"}
        assert all("share one label x.json" in s["why"] for s in items["skipped"])
        assert c.get("/api/label/items/x").status_code == 404
        r = c.put("/api/label/items/y", json={"boxes": [MISSHAPEN]})
        assert r.status_code == 422 and r.json()["detail"].startswith("boxes[1]: a 300x100 box is not 2:3")
        assert sorted(p.name for p in d.iterdir()) == ["x.jpg", "x.png", "y.jpg"]  # nothing written


def test_the_zip_record_names_the_uploaded_file_never_a_server_path(make_app):
    import zipfile

    app = make_app()
    with TestClient(app) as c:
        pid = _post(c, ("Holiday 2026.jpg", photo_bytes())).json()["photos"][0]["id"]
        r = c.post(f"/api/photos/{pid}/download", json={})
        assert r.status_code == 200, r.text
        z = zipfile.ZipFile(io.BytesIO(r.content))
        text = z.read(next(n for n in z.namelist() if n.endswith(".json"))).decode()
        assert json.loads(text)["source"] == "Holiday 2026.jpg"
        assert str(app.state.store.dir) not in text and "multicrop-web-" not in text


def test_a_focus_click_on_a_persons_body_frames_that_person(make_app, tmp_path):
    from multicrop.datasets.examples import example_photo

    src = example_photo(tmp_path / "astronaut.jpg")  # 3600x1400: a person left, a cat, a cup
    with TestClient(make_app()) as c:
        pid = _post(c, ("astronaut.jpg", src.read_bytes())).json()["photos"][0]["id"]
        plain = c.post(f"/api/photos/{pid}/crops", json={"k": 2, "strategy": "direct"}).json()
        chest = [492, 880]  # below her chin, on the suit
        r = c.post(f"/api/photos/{pid}/crops", json={"k": 2, "strategy": "direct", "focus": chest})
        assert r.status_code == 200, r.text
        body = r.json()
        named = body["focus_subject"]
        assert named["kind"] == "person"
        sub = named["box"]
        assert sub["x"] <= chest[0] <= sub["x"] + sub["w"] and sub["y"] < chest[1] - 300  # the head is in it
        first = body["crops"][0]["box"]
        assert first["y"] <= sub["y"] + 2 and first["y"] + first["h"] >= sub["y"] + sub["h"] - 2  # head to toe
        assert first["x"] <= sub["x"] + 2 and first["x"] + first["w"] >= sub["x"] + sub["w"] - 2
        assert body["plain_notes"][0] == "Crop 1 frames the person you clicked."
        assert plain.get("focus_subject") is None
        # a click on nothing in particular stays a point
        r = c.post(f"/api/photos/{pid}/crops", json={"k": 2, "strategy": "direct", "focus": [3000, 100]})
        assert r.status_code == 200 and r.json()["focus_subject"] is None


def test_a_lossless_jpeg_cut_says_how_far_it_moved_the_crops(client):
    import zipfile

    pid = _post(client, ("p.jpg", photo_bytes(900, 400))).json()["photos"][0]["id"]
    box = {"x": 203, "y": 37, "w": 300, "h": 300, "ratio": "1:1"}
    r = client.post(f"/api/photos/{pid}/download", json={"boxes": [box]})
    assert r.status_code == 200
    rec = json.loads(zipfile.ZipFile(io.BytesIO(r.content)).read("p.json"))
    got = rec["crops"][0]["box"]
    want = max(abs(got[k] - box[k]) for k in "xywh")
    assert int(r.headers["X-Crops-Moved-Px"]) == want > 0  # x=203, y=37 lie off the block grid
    png = _post(client, ("q.png", photo_bytes(900, 400, fmt="PNG"))).json()["photos"][0]["id"]
    r = client.post(f"/api/photos/{png}/download", json={"boxes": [box]})
    assert r.headers["X-Crops-Moved-Px"] == "0"  # PNG crops are exact


def test_a_text_chunk_bomb_is_refused_for_what_it_is(client):
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    small = png(64, 64)
    bomb = small[:33] + chunk(b"zTXt", b"k\x00\x00" + zlib.compress(b"A" * (100 << 20), 9)) + small[33:]
    assert len(bomb) < 1 << 20
    r = _post(client, ("z.png", bomb), ("ok.jpg", photo_bytes()))
    assert r.status_code == 200
    (refused,) = r.json()["refused"]
    assert refused["name"] == "z.png" and "embedded text" in refused["error"]
    assert "more pixels" not in refused["error"]
