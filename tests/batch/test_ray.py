"""The Ray engine (a local Ray started by the test, 2 CPUs): the same rows as the local pool."""

from __future__ import annotations

import pytest

from multicrop.batch import MANIFEST_NAME, latest_rows, read_manifest, run_crop_batch
from multicrop.batch.manifest import TIMING_COLUMNS

from .conftest import FAST, NO_PREVIEW

ray = pytest.importorskip("ray", reason="the ray extra is not installed")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _rows(out):
    return {p: {k: v for k, v in r.items() if k not in TIMING_COLUMNS}
            for p, r in sorted(latest_rows(read_manifest(out / MANIFEST_NAME)).items())}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::ResourceWarning")
def test_ray_engine_writes_the_rows_and_files_the_local_engine_writes(tree, tmp_path, local_ray):
    root, good, bad = tree
    s_local = run_crop_batch(root, tmp_path / "local", crop=FAST, output=NO_PREVIEW, engine="local", workers=2)
    s_ray = run_crop_batch(root, tmp_path / "ray", crop=FAST, output=NO_PREVIEW, engine="ray")
    assert (s_ray.done, s_ray.failed, s_ray.workers) == (s_local.done, s_local.failed, 2) == (len(good), len(bad), 2)
    local, on_ray = _rows(tmp_path / "local"), _rows(tmp_path / "ray")
    assert local == on_ray
    assert [r["status"] for r in on_ray.values()].count("done") == len(good)
    for g in good:  # byte-identical crops
        row = on_ray[str(g)]
        for name in row["outputs"]:
            rel = (tmp_path / "ray" / row["stem"]).parent.relative_to(tmp_path / "ray") / name
            assert (tmp_path / "ray" / rel).read_bytes() == (tmp_path / "local" / rel).read_bytes()
    # A rerun on Ray skips what is done (and, without retries, what failed).
    again = run_crop_batch(root, tmp_path / "ray", crop=FAST, output=NO_PREVIEW, engine="ray", retry_failed=False)
    assert (again.skipped, again.done, again.failed) == (len(good) + len(bad), 0, 0)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::ResourceWarning")
def test_ray_judge_batch_records_through_one_writer_the_calls_the_local_engine_records(tree, tmp_path, local_ray):
    from multicrop.batch.judge_job import run_judge_batch
    from multicrop.judges.store import CallStore

    root, good, bad = tree
    s_local = run_judge_batch(root, tmp_path / "local.sqlite", engine="local", workers=2, chunk=3)
    s_ray = run_judge_batch(root, tmp_path / "ray.sqlite", engine="ray", chunk=3)
    assert (s_ray.done, s_ray.failed, s_ray.performed) == (s_local.done, s_local.failed, s_local.performed)
    with CallStore(tmp_path / "local.sqlite") as a, CallStore(tmp_path / "ray.sqlite") as b:
        assert a.completed_keys() == b.completed_keys() and len(b) == s_ray.performed > 0
        assert b.verify().ok
    again = run_judge_batch(root, tmp_path / "ray.sqlite", engine="ray", chunk=3)
    rows = s_ray.planned // s_ray.total  # planned rows an image (repetitions of one call included)
    assert (again.performed, again.already_done) == (0, rows * s_ray.done)
