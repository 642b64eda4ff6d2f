"""Write a table (pandas DataFrame) as CSV or Parquet, chosen by the extension, atomically.

One convention for every table multicrop writes: no index column, ``\\n``
line endings, and a missing value written as ``NaN`` in CSV (pandas reads it
back as NaN; Parquet stores a real NaN/null).

Examples
--------
>>> import tempfile, pathlib, pandas as pd
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> write_table(pd.DataFrame({"a": [1.5, float("nan")]}), d / "t.csv").name
't.csv'
>>> (d / "t.csv").read_text()
'a\\n1.5\\nNaN\\n'
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InvalidParameterError
from .save import atomic_path

__all__ = ["TABLE_SUFFIXES", "NA_REP", "write_table"]

#: Extensions :func:`write_table` understands.
TABLE_SUFFIXES = (".csv", ".parquet")
#: How a missing value is written in CSV.
NA_REP = "NaN"


def write_table(frame, path: str | os.PathLike, *, float_format: str | None = None) -> Path:
    """Write ``frame`` to ``path`` as CSV or Parquet (by extension), atomically.

    Parameters
    ----------
    frame : pandas.DataFrame
        Written without its index (call ``reset_index()`` first to keep it).
    path : str or Path
        Ends in ``.csv`` or ``.parquet``; parent folders are created.
    float_format : str, optional
        printf-style format of floats in CSV (e.g. ``"%.10g"``); ignored for Parquet.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    InvalidParameterError
        Another extension, or ``.parquet`` without pyarrow installed (the
        message says how to install it).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise InvalidParameterError(f"table path must end in .csv or .parquet, got {path.name!r}")
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InvalidParameterError(
                "writing .parquet needs pyarrow: pip install 'multicrop[parquet]' (or write .csv)"
            ) from None
    with atomic_path(path) as tmp:
        if suffix == ".csv":
            frame.to_csv(tmp, index=False, na_rep=NA_REP, float_format=float_format, lineterminator="\n")
        else:
            frame.to_parquet(tmp, index=False)
    return path
