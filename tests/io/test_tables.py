"""multicrop.io.tables.write_table: CSV or Parquet by extension, atomic, one NaN convention."""

import sys

import numpy as np
import pandas as pd
import pytest

from multicrop.errors import InvalidParameterError
from multicrop.io import write_table as exported
from multicrop.io.tables import NA_REP, write_table


def _frame():
    return pd.DataFrame({"image": ["a", "b"], "repetition": [0, 1], "score": [7.25, np.nan]})


def test_csv_writes_nan_and_reads_back(tmp_path):
    assert exported is write_table
    p = write_table(_frame(), tmp_path / "sub" / "t.csv")
    assert p == tmp_path / "sub" / "t.csv"
    assert p.read_text() == f"image,repetition,score\na,0,7.25\nb,1,{NA_REP}\n"
    pd.testing.assert_frame_equal(pd.read_csv(p), _frame())


def test_float_format_applies_to_csv(tmp_path):
    write_table(pd.DataFrame({"x": [1 / 3]}), tmp_path / "t.csv", float_format="%.3g")
    assert (tmp_path / "t.csv").read_text() == "x\n0.333\n"


def test_parquet_round_trip(tmp_path):
    pytest.importorskip("pyarrow")
    write_table(_frame(), tmp_path / "t.PARQUET")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "t.PARQUET"), _frame())


def test_bad_extension_and_missing_pyarrow_are_clear_errors(tmp_path, monkeypatch):
    with pytest.raises(InvalidParameterError, match=r"must end in \.csv or \.parquet, got 't\.xlsx'"):
        write_table(_frame(), tmp_path / "t.xlsx")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    with pytest.raises(InvalidParameterError, match=r"needs pyarrow: pip install 'multicrop\[parquet\]'"):
        write_table(_frame(), tmp_path / "t.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "t.csv"
    target.write_text("old\n")

    class Bad(pd.DataFrame):
        def to_csv(self, *a, **k):
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_table(Bad(_frame()), target)
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["t.csv"]
