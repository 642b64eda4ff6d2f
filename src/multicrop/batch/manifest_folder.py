"""The manifest folder: what counts as one, and the quarantine beside it.

:func:`check_manifest_folder` refuses a path that is not a manifest folder
(a file, a photo folder) in one line.  A part that cannot be read is moved
into :func:`quarantine_folder`, beside the manifest and outside the dataset,
never deleted; a ``quarantine/`` folder an earlier version made inside the
manifest is moved out the same way.  :mod:`multicrop.batch.manifest`
re-exports these names.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

from ..errors import InvalidParameterError
from .manifest_parts import _parts

__all__ = ["QUARANTINE", "quarantine_folder", "check_manifest_folder"]

#: Suffix of the folder beside the manifest where unreadable parts are moved (``manifest.parquet.quarantine``).
QUARANTINE = ".quarantine"
#: Where earlier versions put the quarantine: inside the manifest (a Parquet reader of the folder read it back).
_LEGACY_QUARANTINE = "quarantine"


def quarantine_folder(folder: str | os.PathLike) -> Path:
    """The quarantine of the manifest ``folder``: beside it, outside the dataset.

    Examples
    --------
    >>> quarantine_folder("out/manifest.parquet").as_posix()
    'out/manifest.parquet.quarantine'
    """
    folder = Path(folder)
    return folder.with_name(folder.name + QUARANTINE)


def check_manifest_folder(folder: str | os.PathLike, *, must_exist: bool = False) -> None:
    """Refuse a manifest path that is not a manifest folder (one line saying what to do).

    A file, or a folder that holds files but no manifest part (a photo
    folder, the batch's OUT folder itself) is refused: reading it would say
    "nothing failed", writing would put parts among someone's files.  An
    empty folder is a new manifest, unless ``must_exist`` (what ``batch
    failed`` reads must be a manifest already).
    """
    from ..io.names import shown

    folder = Path(folder)
    name = shown(folder)
    if not os.path.lexists(folder):
        if must_exist:
            raise InvalidParameterError(f"manifest {name}: no such folder (a batch's manifest is "
                                        "OUT/manifest.parquet)")
        return
    if not folder.is_dir():
        raise InvalidParameterError(
            f"manifest {name}: is a file, not a manifest folder (a batch's manifest is a folder of Parquet "
            f"parts); move the file away, or name another folder with --manifest")
    if _parts(folder):
        return
    try:
        others = [e for e in os.listdir(folder) if not e.startswith(".") and e != _LEGACY_QUARANTINE]
    except OSError as exc:
        raise InvalidParameterError(f"manifest {name}: cannot list it ({exc.strerror or exc})") from None
    if not others and not must_exist:
        return
    hint = (f"; did you mean {shown(folder / 'manifest.parquet')}?" if "manifest.parquet" in others
            else "; a batch's manifest is OUT/manifest.parquet")
    what = f"holds {len(others)} entries but" if others else "is empty:"
    raise InvalidParameterError(f"manifest {name}: not a batch manifest (the folder {what} no manifest part, "
                                f"part-*.parquet){hint}")


def _quarantine(part: Path, why: str, on_quarantine) -> None:
    """Move an unreadable part aside (never delete it) and say so in one line."""
    dest = quarantine_folder(part.parent)
    with contextlib.suppress(OSError):
        dest.mkdir(exist_ok=True)
    target = dest / f"{part.name}.{uuid.uuid4().hex[:8]}"
    try:
        os.replace(part, target)
        where = f"moved to {target}"
    except OSError as exc:
        where = f"left in place ({exc.strerror or exc})"
    line = f"manifest part {part.name} is unreadable ({why}); {where}; its photos are redone"
    if on_quarantine is not None:
        on_quarantine(line)


def _move_legacy_quarantine(folder: Path, on_quarantine) -> None:
    """Move a ``quarantine/`` folder an earlier version made inside the manifest out beside it (never delete)."""
    inner = folder / _LEGACY_QUARANTINE
    if not inner.is_dir() or inner.is_symlink():
        return
    dest = quarantine_folder(folder)
    moved, kept = 0, []
    try:
        dest.mkdir(exist_ok=True)
        for item in sorted(inner.iterdir()):
            target = dest / item.name
            if os.path.lexists(target):
                target = dest / f"{item.name}.{uuid.uuid4().hex[:8]}"
            os.replace(item, target)
            moved += 1
        inner.rmdir()
    except OSError as exc:
        kept.append(exc.strerror or str(exc))
    if on_quarantine is not None and (moved or kept):
        tail = f"; some left in place ({kept[0]})" if kept else ""
        on_quarantine(f"manifest {folder.name}: moved the {moved} quarantined parts of its inner quarantine/ "
                      f"folder to {dest} (outside the dataset, so Parquet readers see only the manifest's rows){tail}")
