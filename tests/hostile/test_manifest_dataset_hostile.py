"""Manifest datasets stay datasets: any Parquet reader of ``OUT/manifest.parquet`` sees only our rows.

A quarantined part (another program's Parquet, a part with foreign rows) is
moved outside the dataset folder, so ``pd.read_parquet`` of the folder never
merges it back; a quarantine an earlier version made inside the folder is
moved out too.  A zero-row Parquet input manifest is one line, decided from
its footer.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from multicrop.batch import run_crop_batch
from multicrop.batch.manifest import SCHEMA_COLUMNS
from multicrop.batch.sources import list_photos
from multicrop.crop.config import CropConfig, OutputConfig
from multicrop.errors import InvalidParameterError

FAST = CropConfig(saliency="spectral", faces=False, k=2)
QUIET = OutputConfig(preview=False)


@pytest.fixture(scope="module")
def done_once(tmp_path_factory, batch_builder):
    """A source of three photos and a finished batch over it (copied per test)."""
    return batch_builder.finished(tmp_path_factory.mktemp("dataset"), crop=FAST, output=QUIET)


def _foreign(path: Path, *, rows: int = 5, ours: bool = False) -> None:
    """A Parquet file of someone else's rows (or, ``ours``, rows of our columns with wrong types)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if ours:
        cols = {"path": list(range(rows)), "status": ["x"] * rows, "settings_hash": [1] * rows,
                "run_id": [2] * rows, "seq": [3] * rows}
    else:
        cols = {"who": [f"client{i}" for i in range(rows)], "phone": ["555"] * rows}
    pq.write_table(pa.table(cols), path)


def _dataset_rows(out: Path):
    import pandas as pd

    return pd.read_parquet(out / "manifest.parquet")


@pytest.mark.parametrize("ours", [False, True], ids=["foreign schema", "our columns, wrong types"])
def test_a_quarantined_part_is_never_read_back_by_a_parquet_reader(done_once, batch_builder, tmp_path, ours):
    src, out = batch_builder.copy(done_once, tmp_path)
    _foreign(out / "manifest.parquet" / "part-00000000T000000.000000-ffffffff-000000.parquet", ours=ours)
    notes: list[str] = []
    s = run_crop_batch(src, out, crop=FAST, output=QUIET, workers=1, on_note=notes.append)
    assert (s.done, s.skipped, len(s.quarantined)) == (0, 3, 1), notes
    q = (out / "manifest.parquet.quarantine")
    assert q.parent == out and len(list(q.iterdir())) == 1  # moved beside the dataset, not deleted
    df = _dataset_rows(out)
    assert list(df.columns) == list(SCHEMA_COLUMNS)
    assert sorted(Path(p).name for p in df["path"]) == ["p0.jpg", "p1.jpg", "p2.jpg"]


def test_an_inner_quarantine_of_an_earlier_version_is_moved_out(done_once, batch_builder, tmp_path):
    src, out = batch_builder.copy(done_once, tmp_path)
    inner = out / "manifest.parquet" / "quarantine"
    inner.mkdir()
    _foreign(inner / "part-x.parquet.0badc0de")
    notes: list[str] = []
    run_crop_batch(src, out, crop=FAST, output=QUIET, workers=1, on_note=notes.append)
    assert not inner.exists()
    assert [p.name for p in (out / "manifest.parquet.quarantine").iterdir()] == ["part-x.parquet.0badc0de"]
    assert any("outside the dataset" in n and "\n" not in n for n in notes), notes
    assert len(_dataset_rows(out)) == 3


def _zero_row_manifest(path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"path": pa.array([], pa.string())}), path)
    return path


def test_a_zero_row_parquet_manifest_is_one_line_from_its_footer(tmp_path):
    path = _zero_row_manifest(tmp_path / "list.parquet")
    with pytest.raises(InvalidParameterError) as err:
        list_photos(path)
    assert "the manifest has no rows" in str(err.value) and "list.parquet" in str(err.value)


def test_a_zero_row_parquet_manifest_never_aborts_the_batch_command(tmp_path):
    path = _zero_row_manifest(tmp_path / "list.parquet")
    for i in range(3):  # the abort was 1 run in 3
        res = subprocess.run([sys.executable, "-m", "multicrop", "batch", "crop", str(path), "-o",
                              str(tmp_path / f"out{i}")], capture_output=True, text=True, timeout=120)
        assert res.returncode == 1, (res.returncode, res.stderr)
        assert res.stderr.count("\n") == 1 and "no rows" in res.stderr, res.stderr
