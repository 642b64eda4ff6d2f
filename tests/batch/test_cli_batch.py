"""``multicrop batch crop`` / ``batch judge`` through the command group's ``register``."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from multicrop.cli import batch
from multicrop.errors import InvalidParameterError


@pytest.fixture
def app():
    app = typer.Typer()
    app.callback()(lambda: None)
    batch.register(app)
    return app


def test_batch_crop_prints_the_summary_and_exits_1_when_photos_failed(app, tree, tmp_path):
    root, good, bad = tree
    args = ["batch", "crop", str(root), "-o", str(tmp_path / "out"), "-j", "1", "--saliency", "spectral",
            "--no-faces", "--no-preview", "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 1, res.output
    summary = json.loads(res.stdout)
    assert (summary["done"], summary["failed"], summary["skipped"]) == (len(good), len(bad), 0)
    assert summary["failed_by_reason"] == {"ImageLoadError": 1, "ImageTruncatedError": 1}  # corrupt, truncated
    again = CliRunner().invoke(app, args[:-1] + ["--no-retry-failed"])
    assert again.exit_code == 0, again.output
    assert f"{len(good) + len(bad)} skipped" in again.stdout


def test_unknown_engine_is_one_clear_error(app, tree, tmp_path):
    root, _, _ = tree
    res = CliRunner().invoke(app, ["batch", "crop", str(root), "-o", str(tmp_path / "o"), "--engine", "spark"])
    assert isinstance(res.exception, InvalidParameterError)
    assert "--engine must be one of local, ray, got 'spark'" in str(res.exception)


def test_batch_judge_reports_images_and_calls(app, tree, tmp_path):
    root, good, bad = tree
    res = CliRunner().invoke(app, ["batch", "judge", str(root), "--db", str(tmp_path / "r.sqlite"), "-j", "1",
                                   "--json"])
    assert res.exit_code == 1, res.output
    s = json.loads(res.stdout)
    assert (s["done"], s["failed"], s["already_done"]) == (len(good), len(bad), 0) and s["performed"] > 0
