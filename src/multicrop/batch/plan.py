"""Which photos a rerun skips: the plan of a crop batch from the manifest's latest rows.

A photo is skipped when its latest row is ``done`` with the same settings
hash and the same size and modification stamp as listing finds now (with
``verify_outputs``, its listed files must also still exist); a failed photo
is tried again unless asked not to.  :data:`_PLAN_COLUMNS` are the few
manifest columns the plan reads.  :mod:`multicrop.batch.runner` re-exports
:class:`BatchPlan` and :func:`plan_batch`.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path

from .sources import Photo, output_stems

__all__ = ["BatchPlan", "plan_batch"]

_PLAN_COLUMNS = ("path", "settings_hash", "size", "modified", "status", "stem", "outputs")


@dataclass(frozen=True)
class BatchPlan:
    """The photos to process (with their output stems) and how many were skipped."""

    todo: tuple[tuple[Photo, str], ...]
    skipped: int
    total: int
    missing_outputs: int = 0


def _outputs_present(row: dict, out_dir: Path) -> bool:
    """True when every file a done row lists (and its JSON record) is still in ``out_dir``."""
    stem = row.get("stem")
    if not stem:
        return False
    folder = (out_dir / stem).parent
    names = list(row.get("outputs") or []) + [f"{posixpath.basename(stem)}.json"]
    return all((folder / n).is_file() for n in names if isinstance(n, str) and n)


def plan_batch(photos: list[Photo], previous: dict[str, dict], settings_hash: str, *,
               retry_failed: bool = True, verify_outputs: Path | None = None) -> BatchPlan:
    """Which photos a run must process, given the manifest's latest rows ``previous``.

    ``verify_outputs`` (the destination folder) also redoes a done photo
    whose listed files are no longer there.
    """
    stems = output_stems(photos)
    todo = []
    skipped = missing = 0
    for p in photos:
        row = previous.get(p.path)
        same = (row is not None and row["settings_hash"] == settings_hash and row["size"] == p.size
                and row["modified"] == p.modified and p.refused is None)
        if same and row["status"] == "done" and verify_outputs is not None and not _outputs_present(
                row, verify_outputs):
            missing += 1
        elif same and (row["status"] == "done" or (row["status"] == "failed" and not retry_failed)):
            skipped += 1
            continue
        todo.append((p, stems[p.path]))
    return BatchPlan(tuple(todo), skipped, len(photos), missing)
