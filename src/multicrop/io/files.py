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

import json
import os
import re
import stat

import numpy as np

from ..errors import InputFileError
from .names import shown

__all__ = ["CONFIG_LIMIT", "LABEL_LIMIT", "MANIFEST_LIMIT", "MAX_JSON_DEPTH", "file_kind", "check_regular", "open_regular", "read_bytes_bounded",
           "read_text_bounded", "json_depth", "loads_json", "read_json_bounded"]

#: Largest JSON/TOML configuration file read (bytes): a config is a few KB.
CONFIG_LIMIT = 1 << 20
#: Largest label file read (bytes): a LabelMe JSON with its image embedded, or a YOLO file of a line per
#: object with thousands of detailed polygons, stays far below.
LABEL_LIMIT = 64 << 20
#: Largest input manifest (CSV or Parquet) read (bytes): 10 million paths fit.
MANIFEST_LIMIT = 2 << 30
#: Deepest nesting of arrays and objects a JSON input may have: a config, head or COCO file is 3–6 deep,
#: and a file nested 100k deep would end the decoder (and every recursive reader after it) in a RecursionError.
MAX_JSON_DEPTH = 64

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _label(path: str | os.PathLike, what: str) -> str:
    """``what`` and the file's name, escaped for a terminal (:func:`~multicrop.io.names.shown`)."""
    return f"{what} {shown(path)}".strip()


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
    label = _label(path, what)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise error(f"{label}: no such file") from None
    except OSError as exc:
        raise error(f"{label}: cannot read it ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{label}: is {file_kind(st.st_mode)}, not a regular file")
    return st


def open_regular(path: str | os.PathLike, *, what: str = "", error: type[Exception] = InputFileError):
    """``path`` opened for binary reading when it is a regular file; else one clear ``error``.

    The file is opened non-blocking and checked again on its descriptor, so a
    FIFO swapped in after the ``stat`` still cannot block.  The caller closes
    the returned file (use it in a ``with``).
    """
    label = _label(path, what)
    check_regular(path, what=what, error=error)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise error(f"{label}: cannot read it ({exc.strerror or exc})") from None
    fh = os.fdopen(fd, "rb")
    st = os.fstat(fh.fileno())
    if not stat.S_ISREG(st.st_mode):
        fh.close()
        raise error(f"{label}: is {file_kind(st.st_mode)}, not a regular file")
    return fh


def read_bytes_bounded(path: str | os.PathLike, *, limit: int, what: str = "",
                       error: type[Exception] = InputFileError) -> bytes:
    """The bytes of the regular file ``path``, refused when larger than ``limit`` bytes.

    Opened by :func:`open_regular` (never blocks); at most ``limit + 1`` bytes are ever read.
    """
    label = _label(path, what)
    with open_regular(path, what=what, error=error) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise error(f"{label}: {size:,} bytes is larger than the {limit:,} bytes allowed")
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise error(f"{label}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > limit:  # grew while being read
        raise error(f"{label}: larger than the {limit:,} bytes allowed")
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
        raise InputFileError(f"{_label(path, what)}: not UTF-8 text (byte {exc.start})") from None


# A JSON string literal (the unrolled form: linear, no backtracking on an unterminated one).
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)


def json_depth(text: str) -> int:
    """How deeply the arrays and objects of the JSON ``text`` nest (brackets inside strings do not count).

    Linear in the length of ``text`` and never recursive, so it can measure a
    document the decoder could not.

    Examples
    --------
    >>> json_depth('{"a": [1, {"b": "[[["}]}'), json_depth("3"), json_depth("[" * 100000)
    (3, 0, 100000)
    """
    bare = _JSON_STRING.sub("", text).encode("utf-8", "surrogatepass")
    b = np.frombuffer(bare, np.uint8)
    if not b.size:
        return 0
    step = np.isin(b, (0x5B, 0x7B)).astype(np.int64) - np.isin(b, (0x5D, 0x7D))
    return max(0, int(np.cumsum(step).max()))


def loads_json(text: str, *, what: str = "JSON", max_depth: int = MAX_JSON_DEPTH,
               error: type[Exception] = InputFileError):
    """``json.loads(text)``, refusing a document nested deeper than ``max_depth`` in one line naming ``what``.

    Raises
    ------
    InputFileError (or ``error``)
        Not JSON, or nested deeper than ``max_depth``.

    Examples
    --------
    >>> loads_json('{"k": [1, 2]}')
    {'k': [1, 2]}
    >>> loads_json("[" * 100 + "]" * 100, what="-c c.json")
    Traceback (most recent call last):
    ...
    multicrop.errors.InputFileError: -c c.json: JSON nested 100 deep, more than the 64 allowed
    """
    depth = json_depth(text)
    if depth > max_depth:
        raise error(f"{what}: JSON nested {depth:,} deep, more than the {max_depth} allowed")
    try:
        return json.loads(text)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise error(f"{what}: JSON nested too deep") from None
    except ValueError as exc:
        raise error(f"{what}: not valid JSON ({exc})") from None


def read_json_bounded(path: str | os.PathLike, *, limit: int = CONFIG_LIMIT, what: str = "",
                      max_depth: int = MAX_JSON_DEPTH):
    """The JSON value in the regular file ``path``: bounded read (:func:`read_text_bounded`), depth-limited parse.

    Raises
    ------
    InputFileError
        Not a regular file, too large, not UTF-8, not JSON, or nested deeper
        than ``max_depth``; the one line names ``what`` and the file.
    """
    return loads_json(read_text_bounded(path, limit=limit, what=what), what=_label(path, what), max_depth=max_depth)
