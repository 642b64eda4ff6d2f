"""The two programs that cut JPEGs losslessly: the TurboJPEG library (ctypes) and ``jpegtran``.

:func:`backend` says which one this machine has (:func:`turbojpeg` first);
:func:`tj_cut` cuts every box in one ``tjTransform`` call,
:func:`jpegtran_start` / :func:`jpegtran_finish` run one ``jpegtran -crop``
process per box.  :mod:`multicrop.io.lossless` snaps the boxes to the iMCU
grid, chooses between the two and puts the kept segments back (it re-exports
:func:`turbojpeg`, :func:`jpegtran` and :func:`backend`).

``MULTICROP_TURBOJPEG`` (a library path, or empty for none) and
``MULTICROP_JPEGTRAN`` (a program path, or empty for none) override the lookup.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import MulticropError
from ..geometry import Box

__all__ = ["turbojpeg", "jpegtran", "backend", "tj_cut", "jpegtran_start", "jpegtran_finish"]


# --- the TurboJPEG library (its TurboJPEG 2 API, which libjpeg-turbo 3 keeps) --------------------------

class _Region(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int), ("w", ctypes.c_int), ("h", ctypes.c_int)]


class _Transform(ctypes.Structure):
    # tjtransform: region, op, options, data, customFilter (a function pointer, NULL here).
    _fields_ = [("r", _Region), ("op", ctypes.c_int), ("options", ctypes.c_int), ("data", ctypes.c_void_p),
                ("customFilter", ctypes.c_void_p)]


_TJXOP_NONE = 0
_TJXOPT_CROP = 4
_TJXOPT_COPYNONE = 64

_LIBRARY_NAMES = {"linux": ("libturbojpeg.so.0", "libturbojpeg.so"), "darwin": ("libturbojpeg.0.dylib",
                  "libturbojpeg.dylib"), "win32": ("turbojpeg.dll",)}


@functools.lru_cache(maxsize=1)
def turbojpeg() -> ctypes.CDLL | None:
    """The TurboJPEG library with its transform functions typed, or None when it cannot be loaded."""
    env = os.environ.get("MULTICROP_TURBOJPEG")
    names = (env,) if env else () if env is not None else _LIBRARY_NAMES.get(sys.platform, ())
    lib = None
    for name in names:
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if lib is None and env is None:
        found = ctypes.util.find_library("turbojpeg")
        try:
            lib = ctypes.CDLL(found) if found else None
        except OSError:
            lib = None
    if lib is None:
        return None
    try:
        lib.tjInitTransform.restype = ctypes.c_void_p
        lib.tjInitTransform.argtypes = []
        lib.tjDestroy.argtypes = [ctypes.c_void_p]
        lib.tjFree.argtypes = [ctypes.c_void_p]
        lib.tjGetErrorStr2.restype = ctypes.c_char_p
        lib.tjGetErrorStr2.argtypes = [ctypes.c_void_p]
        lib.tjTransform.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_ulong),
                                    ctypes.POINTER(_Transform), ctypes.c_int]
    except AttributeError:  # older than libjpeg-turbo 2.0 (no tjGetErrorStr2)
        return None
    return lib


@functools.lru_cache(maxsize=1)
def jpegtran() -> str | None:
    """Path of the ``jpegtran`` program, or None (``MULTICROP_JPEGTRAN`` overrides the PATH lookup)."""
    env = os.environ.get("MULTICROP_JPEGTRAN")
    if env is not None:
        return env or None
    return shutil.which("jpegtran")


def backend() -> str | None:
    """How crops are cut here: ``"libturbojpeg"``, else ``"jpegtran"``, else None (neither is installed)."""
    if turbojpeg() is not None:
        return "libturbojpeg"
    if jpegtran() is not None:
        return "jpegtran"
    return None


def tj_cut(lib: ctypes.CDLL, data: bytes, boxes: Sequence[Box]) -> list[bytes]:
    """All ``boxes`` cut by one ``tjTransform`` call (one entropy decode of ``data``)."""
    n = len(boxes)
    transforms = (_Transform * n)()
    for t, b in zip(transforms, boxes):
        t.r = _Region(int(b.x), int(b.y), int(b.w), int(b.h))
        t.op, t.options = _TJXOP_NONE, _TJXOPT_CROP | _TJXOPT_COPYNONE
    bufs = (ctypes.c_void_p * n)()
    sizes = (ctypes.c_ulong * n)()
    handle = lib.tjInitTransform()
    if not handle:
        raise MulticropError("libturbojpeg could not start a transform")
    try:
        status = lib.tjTransform(handle, data, len(data), n, bufs, sizes, transforms, 0)
        if status != 0:
            raise MulticropError(f"libturbojpeg failed ({lib.tjGetErrorStr2(handle).decode('utf-8', 'replace')})")
        return [ctypes.string_at(bufs[i], sizes[i]) for i in range(n)]
    finally:
        for buf in bufs:
            if buf:
                lib.tjFree(buf)
        lib.tjDestroy(handle)


def jpegtran_start(prog: str, source: Path, box: Box) -> subprocess.Popen | MulticropError:
    """Start ``jpegtran -crop`` of ``box`` from ``source`` (or the error that kept it from starting)."""
    spec = f"{int(box.w)}x{int(box.h)}+{int(box.x)}+{int(box.y)}"
    try:
        return subprocess.Popen([prog, "-copy", "none", "-crop", spec, str(source)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    except OSError as exc:
        return MulticropError(f"jpegtran failed ({exc})")


def jpegtran_finish(proc: subprocess.Popen | MulticropError) -> bytes | MulticropError:
    """The crop's bytes from a started ``jpegtran``, or why it failed (10 minutes at most)."""
    if isinstance(proc, MulticropError):
        return proc
    try:
        out, err = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return MulticropError("jpegtran failed (timed out)")
    if proc.returncode != 0 or not out:
        msg = err.decode("utf-8", "replace").strip().splitlines()
        return MulticropError(f"jpegtran failed ({msg[-1] if msg else f'exit {proc.returncode}'})")
    return out
