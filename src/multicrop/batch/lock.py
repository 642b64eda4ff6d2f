"""One driver per manifest: an advisory lock (``flock``) on ``<manifest>/.lock``.

The kernel holds the lock for exactly as long as the driver's process
lives, so a driver killed with ``kill -9`` never leaves a lock behind, and a
pid written in the file that now belongs to an unrelated process (pid reuse,
a copied manifest) never blocks a run.  The file names the holder (pid, host,
start time, command) only so that the message can say who holds it.  Where
the filesystem cannot lock (some network mounts), the holder's pid and its
process start time decide whether it is still alive.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from ..errors import InvalidParameterError, MulticropError
from ..io.files import read_bytes_bounded

__all__ = ["run_lock", "process_start", "LOCK_NAME"]

#: The lock file's name inside the manifest folder.
LOCK_NAME = ".lock"

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (Linux ``/proc``), or None if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            text = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def _holder_text() -> str:
    me = os.getpid()
    return json.dumps({"pid": me, "host": socket.gethostname(), "start": process_start(me),
                       "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "command": " ".join(sys.argv)[:200]})


def _read_holder(path: Path) -> dict:
    try:  # a regular file of at most 4 KiB, opened without blocking (a FIFO named like the lock never stalls)
        text = read_bytes_bounded(path, limit=4096, what="lock").decode("utf-8", errors="replace")
    except (OSError, MulticropError):
        return {}
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        doc = {"pid": text.strip()}  # an older lock: the pid alone
    if not isinstance(doc, dict):
        doc = {"pid": doc}
    try:
        pid = int(doc.get("pid"))
    except (TypeError, ValueError, OverflowError):  # OverflowError: 1e999, Infinity
        pid = None
    doc["pid"] = pid if pid is not None and 0 < pid < 2 ** 31 else None  # os.kill takes no other
    return doc


def _alive(holder: dict) -> bool:
    """Whether the lock's holder still runs (used only where ``flock`` is unavailable)."""
    pid = holder.get("pid")
    if not pid or pid <= 0:
        return False
    if holder.get("host") not in (None, socket.gethostname()):
        return True  # another machine's process: it cannot be checked from here
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    start = holder.get("start")
    now = process_start(pid)
    if start is not None and now is not None:
        return str(start) == now  # the same pid with another start time is another process
    return True


def _busy(folder: Path, holder: dict) -> InvalidParameterError:
    who = f"pid {holder.get('pid')}" if holder.get("pid") else "another process"
    host = holder.get("host")
    where = f" on {host}" if host and host != socket.gethostname() else ""
    since = f", since {holder['since']}" if holder.get("since") else ""
    command = f" ({holder['command']})" if holder.get("command") else ""
    return InvalidParameterError(
        f"manifest {folder}: another batch run ({who}{where}{since}{command}) is writing it; wait for it to "
        f"finish or stop it; if that run is gone (e.g. on another machine), remove {folder / LOCK_NAME}")


@contextlib.contextmanager
def run_lock(folder: str | os.PathLike) -> Iterator[None]:
    """Hold the manifest folder's lock for the block; refuse with one line naming the holder when it is held.

    Raises
    ------
    InvalidParameterError
        Another live driver holds the lock (the message says which and how to recover).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    for _ in range(20):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            locked = _flock(fd)
        except BaseException:
            os.close(fd)
            raise
        if locked is False:
            holder = _read_holder(path)
            os.close(fd)
            raise _busy(folder, holder)
        if locked is None:  # no flock here: fall back to the holder's pid and start time
            holder = _read_holder(path)
            if holder and os.fstat(fd).st_size and _alive(holder):
                os.close(fd)
                raise _busy(folder, holder)
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # the holder removed the file after we opened it: lock the new one
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.pwrite(fd, _holder_text().encode("utf-8"), 0)
        break
    else:  # pragma: no cover - twenty runs racing for one folder
        raise InvalidParameterError(f"manifest {folder}: could not take its lock {path}")
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)


def _flock(fd: int) -> bool | None:
    """True when locked, False when another process holds it, None when this filesystem cannot lock."""
    if fcntl is None:  # pragma: no cover - Windows
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
            return None
        raise
