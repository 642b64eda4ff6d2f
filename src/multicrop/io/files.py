"""Reads that cannot block or run forever: regular files only, bounded in size.

A FIFO named ``x.jpg`` blocks whoever opens it; ``/dev/zero`` never ends.
Every file multicrop reads (a photo, a ``--config`` JSON, a manifest) is
first checked with ``os.stat`` to be a regular file, and small text inputs
are read with a size limit, so a wrong path gives one line instead of a
hang.

Examples
--------
>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "c.json"; _ = p.write_text('{"k": 2}')
>>> read_text_bounded(p, limit=1024, what="--config")
'{"k": 2}'
>>> read_text_bounded("/dev/null", limit=1024, what="--config")
Traceback (most recent call last):
...
multicrop.errors.InputFileError: --config /dev/null: is a character device, not a regular file
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import InputFileError

__all__ = ["CONFIG_LIMIT", "MANIFEST_LIMIT", "file_kind", "check_regular", "read_bytes_bounded", "read_text_bounded"]

#: Largest JSON/TOML configuration file read (bytes): a config is a few KB.
CONFIG_LIMIT = 1 << 20
#: Largest input manifest (CSV or Parquet) read (bytes): 10 million paths fit.
MANIFEST_LIMIT = 2 << 30

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str:
    """What ``st_mode`` names, in words ("a regular file", "a FIFO (named pipe)", ...)."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_regular(path: str | os.PathLike, *, what: str = "",
                  error: type[Exception] = InputFileError) -> os.stat_result:
    """``os.stat(path)`` (links followed) when it names a regular file; else one clear ``error``.

    Raises
    ------
    InputFileError (or ``error``)
        No such file, or a directory, FIFO, device or socket.
    """
    label = f"{what} {os.fspath(path)}".strip()
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise error(f"{label}: no such file") from None
    except OSError as exc:
        raise error(f"{label}: cannot read it ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{label}: is {file_kind(st.st_mode)}, not a regular file")
    return st


def read_bytes_bounded(path: str | os.PathLike, *, limit: int, what: str = "") -> bytes:
    """The bytes of the regular file ``path``, refused when larger than ``limit`` bytes.

    The file is opened non-blocking and checked again on its descriptor, so a
    FIFO swapped in after the ``stat`` still cannot block; at most
    ``limit + 1`` bytes are ever read.
    """
    label = f"{what} {os.fspath(path)}".strip()
    check_regular(path, what=what)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputFileError(f"{label}: cannot read it ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise InputFileError(f"{label}: is {file_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise InputFileError(f"{label}: {st.st_size:,} bytes is larger than the {limit:,} bytes allowed")
        data = fh.read(limit + 1)
    if len(data) > limit:  # grew while being read
        raise InputFileError(f"{label}: larger than the {limit:,} bytes allowed")
    return data


def read_text_bounded(path: str | os.PathLike, *, limit: int = CONFIG_LIMIT, what: str = "") -> str:
    """UTF-8 text of the regular file ``path`` (at most ``limit`` bytes); see :func:`read_bytes_bounded`.

    Raises
    ------
    InputFileError
        Not a regular file, too large, or not UTF-8 text.
    """
    data = read_bytes_bounded(path, limit=limit, what=what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        label = f"{what} {Path(path)}".strip()
        raise InputFileError(f"{label}: not UTF-8 text (byte {exc.start})") from None
