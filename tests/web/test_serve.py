"""``multicrop serve`` options, and the server staying responsive while a photo is analysed."""

from __future__ import annotations

import threading

import typer
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from multicrop.cli import serve as serve_cli
from multicrop.crop import analysis as pipeline  # where the saliency model is called

from .conftest import photo_bytes


def _cli() -> typer.Typer:
    app = typer.Typer()
    serve_cli.register(app)

    @app.command("other")
    def _other() -> None:  # a second command keeps `serve` a named subcommand
        pass

    return app


def test_serve_binds_loopback_and_passes_its_options(monkeypatch, label_dir):
    seen = {}

    def fake_run(app, host, port, log_level):
        seen.update(app=app, host=host, port=port)

    import uvicorn

    monkeypatch.setattr(uvicorn, "run", fake_run)
    r = CliRunner().invoke(_cli(), ["serve", "--no-faces", "--saliency", "spectral", "--port", "8123",
                                    "--label", str(label_dir), "--max-upload-mb", "2"])
    assert r.exit_code == 0, r.output
    assert (seen["host"], seen["port"]) == ("127.0.0.1", 8123)
    app = seen["app"]
    try:
        assert app.state.labels.root == label_dir
        assert app.state.store.config.faces is False and app.state.store.config.saliency == "spectral"
        with TestClient(app) as c:
            s = c.get("/api/settings").json()
            assert s["max_upload_mb"] == 2 and s["label_mode"] is True
            assert "label.js" in c.get("/").text
    finally:
        app.state.store.close()


def test_serve_panel_option(monkeypatch, tmp_path):
    import uvicorn

    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, log_level: seen.update(app=app))
    toml = tmp_path / "panel.toml"
    toml.write_text('[[families]]\nname = "m"\nbackend = "measured"\nmodel = "measured-v1"\n', encoding="utf-8")
    r = CliRunner().invoke(_cli(), ["serve", "--no-faces", "--panel", str(toml)])
    assert r.exit_code == 0, r.output
    try:
        assert [f.name for f in seen["app"].state.panel.families] == ["m"]
    finally:
        seen["app"].state.store.close()
    r = CliRunner().invoke(_cli(), ["serve", "--panel", str(tmp_path / "nope.toml")])
    assert r.exit_code != 0 and "nope.toml does not exist" in str(r.exception)  # main prints it as one line


def test_page_stays_responsive_while_a_photo_is_analysed(make_app, monkeypatch):
    release = threading.Event()
    original = pipeline.compute_saliency

    started = threading.Event()

    def slow(image, **kwargs):
        started.set()
        release.wait(timeout=30)
        return original(image, **kwargs)

    monkeypatch.setattr(pipeline, "compute_saliency", slow)
    with TestClient(make_app()) as c:
        first = c.post("/api/photos", files=[("files", ("a.jpg", photo_bytes(), "image/jpeg"))]).json()["photos"][0]
        second = c.post("/api/photos", files=[("files", ("b.jpg", photo_bytes(), "image/jpeg"))]).json()["photos"][0]
        # the worker is stuck in the first analysis; the server still answers
        started.wait(timeout=30)
        assert c.get(f"/api/photos/{first['id']}").json()["status"] == "analysing"
        assert c.get(f"/api/photos/{second['id']}").json()["status"] == "queued"
        assert c.get(f"/api/photos/{second['id']}/image").status_code == 200
        release.set()
        r = c.post(f"/api/photos/{second['id']}/crops", json={"k": 2})
        assert r.status_code == 200 and len(r.json()["crops"]) == 2
        assert c.get(f"/api/photos/{first['id']}").json()["status"] == "ready"


def test_flat_label_folder(make_app, tmp_path):
    (tmp_path / "one.png").write_bytes(photo_bytes(fmt="PNG"))
    (tmp_path / "notes.txt").write_text("not a photo")
    with TestClient(make_app(label_dir=tmp_path)) as c:
        assert [i["file"] for i in c.get("/api/label/items").json()["items"]] == ["one.png"]
        c.put("/api/label/items/one", json={"boxes": [{"x": 0, "y": 0, "w": 200, "h": 300, "ratio": "2:3"}]})
    assert (tmp_path / "one.json").is_file() and (tmp_path / "one_metadata.json").is_file()


def test_serve_starts_with_the_ratio_setting_given(monkeypatch):
    seen = {}
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, log_level: seen.update(app=app))
    r = CliRunner().invoke(_cli(), ["serve", "--no-faces", "--ratios", "carousel"])
    assert r.exit_code == 0, r.output
    try:
        with TestClient(seen["app"]) as c:
            s = c.get("/api/settings").json()
        assert s["default"]["ratios"] == "carousel" and s["one_ratio"]["instagram"] is True
        assert s["preset_ratios"]["instagram"] == ["4:5", "1:1", "1.91:1"]
    finally:
        seen["app"].state.store.close()
    r = CliRunner().invoke(_cli(), ["serve", "--ratios", "wide"])
    assert r.exit_code != 0 and "--ratios" in r.output and "wide" in r.output
