"""The JSON API of ``multicrop serve`` (carousel mode), through FastAPI's test client."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from fastapi.testclient import TestClient
from PIL import Image

from multicrop.crop import analysis as pipeline  # where the saliency model is called
from multicrop.crop.pipeline import crop_photo
from multicrop.ratios import parse_ratio

from .conftest import FAST, photo_bytes


def _upload(client, *files):
    return client.post("/api/photos", files=[("files", (name, data, "application/octet-stream")) for name, data in files])


@pytest.fixture
def client(make_app):
    with TestClient(make_app(max_upload_mb=1)) as c:
        yield c


def test_upload_analyses_once_and_settings_reuse_the_analysis(make_app, monkeypatch, tmp_path):
    calls = []
    original = pipeline.compute_saliency

    def counting(image, **kwargs):
        calls.append(image.shape)
        return original(image, **kwargs)

    monkeypatch.setattr(pipeline, "compute_saliency", counting)
    data = photo_bytes()
    with TestClient(make_app()) as c:
        pid = _upload(c, ("two.jpg", data)).json()["photos"][0]["id"]
        results = {}
        for k, ratios in [(2, "2:3,3:2"), (3, "2:3,3:2"), (2, "1:1"), (1, "4:5")]:
            r = c.post(f"/api/photos/{pid}/crops", json={"k": k, "ratios": ratios})
            assert r.status_code == 200, r.text
            results[k, ratios] = r.json()
        assert len(calls) == 1  # four settings, one saliency map
        assert c.get(f"/api/photos/{pid}").json()["status"] == "ready"
    for (k, ratios), rec in results.items():
        allowed = {str(parse_ratio(t)) for t in ratios.split(",")}
        assert len(rec["crops"]) == k
        assert {c["ratio"] for c in rec["crops"]} <= allowed
        for crop in rec["crops"]:
            b = crop["box"]
            assert abs(b["w"] / b["h"] - parse_ratio(crop["ratio"]).value) * b["h"] <= 1.0
    # the cached path chooses exactly what crop_photo chooses on its own
    path = tmp_path / "two.jpg"
    path.write_bytes(data)
    direct = crop_photo(path, FAST.replace(k=3))
    assert [c["box"] for c in results[3, "2:3,3:2"]["crops"]] == [c.box.to_dict() for c in direct.crops]
    assert len(calls) == 2  # and that run computed its own


def test_every_strategy_and_auto_k_reuse_the_analysis(make_app, monkeypatch):
    from multicrop.crop.config import STRATEGIES

    calls = []
    original = pipeline.compute_saliency
    monkeypatch.setattr(pipeline, "compute_saliency", lambda image, **kw: calls.append(1) or original(image, **kw))
    with TestClient(make_app()) as c:
        s = c.get("/api/settings").json()
        assert s["strategies"] == list(STRATEGIES)
        pid = _upload(c, ("two.jpg", photo_bytes())).json()["photos"][0]["id"]
        for strategy in STRATEGIES:
            r = c.post(f"/api/photos/{pid}/crops", json={"k": 2, "strategy": strategy})
            assert r.status_code == 200, (strategy, r.text)
            assert r.json()["config"]["strategy"] == strategy and len(r.json()["crops"]) >= 1
        for strategy in s["auto_k"]:
            r = c.post(f"/api/photos/{pid}/crops", json={"k": "auto", "strategy": strategy})
            assert r.status_code == 200, (strategy, r.text)
            assert r.json()["k"] >= 1
        no_auto = [x for x in STRATEGIES if x not in s["auto_k"]]
        if no_auto:
            r = c.post(f"/api/photos/{pid}/crops", json={"k": "auto", "strategy": no_auto[0]})
            assert r.status_code == 422 and "auto" in r.json()["detail"]
    assert len(calls) == 1


def test_refused_uploads_are_named_and_the_batch_goes_on(client):
    r = _upload(client, ("notes.jpg", b"this is not a photo"), ("ok.png", photo_bytes(fmt="PNG")),
                ("empty.jpg", b""))
    assert r.status_code == 200
    body = r.json()
    assert [p["name"] for p in body["photos"]] == ["ok.png"]
    assert body["photos"][0]["width"] == 900 and body["photos"][0]["height"] == 400
    errors = {x["name"]: x["error"] for x in body["refused"]}
    assert set(errors) == {"notes.jpg", "empty.jpg"}
    assert errors["notes.jpg"].startswith("notes.jpg: ") and "\n" not in errors["notes.jpg"]
    assert "/tmp" not in errors["notes.jpg"] and "multicrop-web" not in errors["notes.jpg"]
    assert errors["empty.jpg"] == "empty.jpg: the file is empty"


def test_all_refused_is_a_4xx_with_one_line(client):
    r = _upload(client, ("a.txt", b"hello"))
    assert r.status_code == 422
    assert r.json()["detail"].startswith("a.txt: ")
    big = _upload(client, ("big.jpg", b"\xff" * (1024 * 1024 + 1)))
    assert big.status_code == 413
    assert big.json()["detail"] == "big.jpg: larger than the 1 MB upload limit"


def test_decompression_bomb_refused(make_app):
    with TestClient(make_app(max_pixels=100_000)) as c:
        r = _upload(c, ("huge.png", photo_bytes(900, 400, fmt="PNG")))  # 360 000 px
    assert r.status_code == 422
    assert r.json()["detail"].startswith("huge.png: ")


def test_bad_settings_and_unknown_photo(client):
    pid = _upload(client, ("p.jpg", photo_bytes())).json()["photos"][0]["id"]
    r = client.post(f"/api/photos/{pid}/crops", json={"k": 0})
    assert r.status_code == 422 and "k must be" in r.json()["detail"] and "0" in r.json()["detail"]
    r = client.post(f"/api/photos/{pid}/crops", json={"ratios": "5:0"})
    assert r.status_code == 422 and "ratio" in r.json()["detail"]
    r = client.post(f"/api/photos/{pid}/crops", json={"strategy": "random"})
    assert r.status_code == 422 and "strategy" in r.json()["detail"]
    assert client.get("/api/photos/../../etc/passwd").status_code == 404
    r = client.post("/api/photos/nope/crops", json={})
    assert r.status_code == 404 and r.json()["detail"].startswith("no photo 'nope'")


def test_k_reads_as_the_command_line_reads_it(client):
    """One k grammar: the page's k and ``--k`` take the same values and refuse the rest with one error."""
    from multicrop.cli.options import k_option
    from multicrop.errors import InvalidParameterError
    from multicrop.web.crop_settings import _parse_k

    for value, want in ((" AUTO ", "auto"), ("auto", "auto"), (" 3 ", 3), (3, 3)):
        assert _parse_k(value) == k_option(str(value), "k") == want
    for bad in ("two", "0", "-1", "2.5", 0, -1):
        with pytest.raises(InvalidParameterError) as web:
            _parse_k(bad)
        with pytest.raises(InvalidParameterError) as cli:
            k_option(bad, "k")
        assert str(web.value) == str(cli.value) == f"k must be a positive integer or auto, got {bad!r}"
    pid = _upload(client, ("p.jpg", photo_bytes())).json()["photos"][0]["id"]
    r = client.post(f"/api/photos/{pid}/crops", json={"k": " Auto ", "strategy": "direct"})
    assert r.status_code == 200 and r.json()["config"]["k"] == "auto", r.text
    r = client.post(f"/api/photos/{pid}/crops", json={"k": "two"})
    assert r.status_code == 422 and r.json()["detail"].endswith("k must be a positive integer or auto, got 'two'")


def _zip(resp) -> zipfile.ZipFile:
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"] == "application/zip"
    return zipfile.ZipFile(io.BytesIO(resp.content))


def test_zip_of_platform_width_copies_has_no_gps(client):
    pid = _upload(client, ("trip.jpg", photo_bytes(1800, 800, gps=True))).json()["photos"][0]["id"]
    rec = client.post(f"/api/photos/{pid}/crops", json={"k": 2, "ratios": "4:5"}).json()
    z = _zip(client.post(f"/api/photos/{pid}/download", json={"k": 2, "ratios": "4:5", "width": 200}))
    assert sorted(z.namelist()) == ["trip.json", "trip_1_w200.jpg", "trip_2_w200.jpg"]
    record = json.loads(z.read("trip.json"))
    assert record["files"] == ["trip_1_w200.jpg", "trip_2_w200.jpg"]
    # JPEG crops of a JPEG are cut losslessly, their corner moved onto the 8/16 px block grid
    for got, want in zip(record["crops"], rec["crops"]):
        assert (got["box"]["w"], got["box"]["h"]) == (want["box"]["w"], want["box"]["h"])
        assert abs(got["box"]["x"] - want["box"]["x"]) < 16 and abs(got["box"]["y"] - want["box"]["y"]) < 16
    for name in record["files"]:
        im = Image.open(io.BytesIO(z.read(name)))
        assert im.width == 200 and abs(im.height - 250) <= 1
        assert 0x8825 not in im.getexif()  # no GPS block


def test_zip_of_edited_boxes_at_full_resolution(client):
    pid = _upload(client, ("e.png", photo_bytes(fmt="PNG"))).json()["photos"][0]["id"]
    boxes = [{"x": 500, "y": 10, "w": 300, "h": 300, "ratio": "1:1"},
             {"x": 0.4, "y": 0, "w": 200.2, "h": 300.4, "ratio": "2:3"},
             {"x": 850, "y": 300, "w": 150, "h": 100, "ratio": "3:2"}]  # reaches past the photo: refused
    r = client.post(f"/api/photos/{pid}/download", json={"boxes": boxes})
    assert r.status_code == 422 and r.json()["detail"] == "boxes[3]: (850, 300, 150x100) must lie in the 900x400 photo"
    boxes[2]["x"] = 750
    z = _zip(client.post(f"/api/photos/{pid}/download", json={"boxes": boxes}))
    assert sorted(z.namelist()) == ["e.json", "e_1.png", "e_2.png", "e_3.png"]
    sizes = [Image.open(io.BytesIO(z.read(f"e_{i}.png"))).size for i in (1, 2, 3)]
    assert sizes == [(300, 300), (200, 300), (150, 100)]
    record = json.loads(z.read("e.json"))
    assert [c["box"] for c in record["crops"]] == [
        {"x": 500, "y": 10, "w": 300, "h": 300}, {"x": 0, "y": 0, "w": 200, "h": 300},
        {"x": 750, "y": 300, "w": 150, "h": 100}]
    r = client.post(f"/api/photos/{pid}/download", json={"boxes": [{"x": 0, "y": 0, "w": 0, "h": 5, "ratio": "1:1"}]})
    assert r.status_code == 422 and "boxes[1]" in r.json()["detail"]


def test_render_one_crop_and_saliency(client):
    pid = _upload(client, ("r.jpg", photo_bytes())).json()["photos"][0]["id"]
    r = client.get(f"/api/photos/{pid}/render", params={"x": 100, "y": 50, "w": 300, "h": 200, "width": 150})
    assert r.status_code == 200
    assert Image.open(io.BytesIO(r.content)).size == (150, 100)
    sal = Image.open(io.BytesIO(client.get(f"/api/photos/{pid}/saliency").content))
    assert sal.mode == "L" and max(sal.size) <= FAST.analysis_max_side
    assert client.get(f"/api/photos/{pid}/render", params={"x": 5000, "y": 0, "w": 10, "h": 10}).status_code == 422


def test_files_deleted_on_expiry_delete_and_shutdown(make_app):
    app = make_app()
    store = app.state.store
    with TestClient(app) as c:
        a = _upload(c, ("a.jpg", photo_bytes())).json()["photos"][0]["id"]
        b = _upload(c, ("b.jpg", photo_bytes())).json()["photos"][0]["id"]
        assert (store.dir / a).is_dir() and (store.dir / b).is_dir()
        assert c.delete(f"/api/photos/{a}").status_code == 200
        assert not (store.dir / a).exists()
        store.ttl_s = 0
        assert store.expire() == [b] and not (store.dir / b).exists()
        assert c.get(f"/api/photos/{b}").status_code == 404
        _upload(c, ("c.jpg", photo_bytes()))
    assert not store.dir.exists()  # shutdown removes the session directory


def test_openapi_documents_the_api(client):
    paths = client.get("/openapi.json").json()["paths"]
    for p in ["/api/photos", "/api/photos/{pid}/crops", "/api/photos/{pid}/render", "/api/photos/{pid}/download",
              "/api/label/items/{name}"]:
        assert p in paths
    page = client.get("/")
    assert page.status_code == 200 and "carousel.js" in page.text
