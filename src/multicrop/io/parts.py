"""The temporaries a killed run left: ``.<name>.<pid>-XXXXXXXX.part`` files, removed before writing.

:func:`remove_parts` removes those of one photo's files (named by
:func:`multicrop.io.guard.own_name`), but never those whose writer still runs,
unless they are older than :data:`STALE_PART_S` (the pid was reused); the
names come from :func:`multicrop.io.save.atomic_path`.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

from .guard import own_name

__all__ = ["remove_parts", "STALE_PART_S"]

_OLD_PART = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}\.part$")  # earlier versions' mkstemp names
#: A temporary older than this is removed even if its pid runs (the pid was reused).
STALE_PART_S = 24 * 3600


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_parts(out_dir: Path, stem: str) -> list[str]:
    """Remove the temporaries a killed run left for ``stem``'s files; return their names.

    A temporary whose writer (the pid in its name) still runs is kept, unless
    it is older than :data:`STALE_PART_S`; a shortened name (``~``) counts as
    ``stem``'s when it starts like one of its files.
    """
    from .save import parse_temp_name

    own = own_name(stem)
    removed = []
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(out_dir):
            parsed = parse_temp_name(entry.name)
            if parsed is not None:
                name, cut, pid = parsed
                if cut:  # the shortened start of a name: it is stem's when one begins the other
                    short, full = os.fsencode(name), os.fsencode(stem)
                    mine = full.startswith(short) or short.startswith(full)
                else:
                    mine = bool(own.match(name))
                if not mine or not entry.is_file(follow_symlinks=False):
                    continue
                if _pid_alive(pid):
                    try:
                        if now - entry.stat(follow_symlinks=False).st_mtime < STALE_PART_S:
                            continue
                    except OSError:
                        continue
            else:
                m = _OLD_PART.match(entry.name)
                if not (m and own.match(m.group("name")) and entry.is_file(follow_symlinks=False)):
                    continue
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
                removed.append(entry.name)
    return sorted(removed)
