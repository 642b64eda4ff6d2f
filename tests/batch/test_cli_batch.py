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


def test_batch_judge_names_its_failed_images_and_writes_only_parquet(app, tree, tmp_path):
    root, good, bad = tree
    args = ["batch", "judge", str(root), "--db", str(tmp_path / "r.sqlite"), "-j", "1"]
    res = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "rows.txt")])
    assert isinstance(res.exception, InvalidParameterError) and not (tmp_path / "rows.txt").exists()
    assert "the per-image manifest is a Parquet file" in str(res.exception)
    res = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "rows.parquet")])
    assert res.exit_code == 1 and (tmp_path / "rows.parquet").is_file()
    lines = res.stdout.splitlines()
    assert lines[1] == "failed:" and len(lines) == 2 + len(bad)  # as batch crop names them, the path once each
    assert sorted(line.split(": ", 1)[0].strip() for line in lines[2:]) == sorted(str(b.resolve()) for b in bad)


def test_a_manifest_kept_apart_serves_a_new_destination(app, tree, tmp_path):
    """``-m`` outside OUT: a second destination gets the crops (its files are not there), a rerun skips them."""
    root, good, _ = tree
    base = ["batch", "crop", str(root), "-m", str(tmp_path / "shared.parquet"), "-j", "1", "--saliency", "spectral",
            "--no-faces", "--no-preview", "--json"]
    runs = []
    for out in ("a", "b", "b"):
        res = CliRunner().invoke(app, [*base, "-o", str(tmp_path / out)])
        s = json.loads(res.stdout)
        runs.append((s["done"], s["skipped"]))
    assert runs == [(len(good), 0), (len(good), 0), (0, len(good))]
    made = [sorted(p.name for p in (tmp_path / out).rglob("*.json")) for out in ("a", "b")]
    assert made[0] == made[1] and len(made[0]) == len(good)
