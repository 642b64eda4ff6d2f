"""The failed rows the driver writes itself: for a refused entry, and for a photo whose worker died.

A refused entry (:attr:`~multicrop.batch.sources.Photo.refused`) is never
sent to a worker; a photo whose worker died or whose task was lost gets its
row from :class:`_ErrorRow`, called in the driver only.
:mod:`multicrop.batch.runner` re-exports these names.
"""

from __future__ import annotations

from .sources import Photo

__all__ = ["refused_row"]


def _failed_row(photo: Photo, stem: str, settings_hash: str, exc: BaseException) -> dict:
    """The row of a photo whose worker died or whose task was lost."""
    return {"path": photo.path, "rel": photo.rel, "size": photo.size, "modified": photo.modified,
            "settings_hash": settings_hash, "stem": stem, "status": "failed", "error_kind": "WorkerDied",
            "error": f"the worker running this photo stopped ({type(exc).__name__}: {exc})"[:500],
            "boxes": [], "scores": [], "ratios": [], "outputs": []}


def refused_row(photo: Photo, stem: str, settings_hash: str) -> dict:
    """The row of a listed entry that is not read at all (see :attr:`Photo.refused`)."""
    return {"path": photo.path, "rel": photo.rel, "size": photo.size, "modified": photo.modified,
            "settings_hash": settings_hash, "stem": stem, "status": "failed", "error_kind": "RefusedInput",
            "error": str(photo.refused)[:500], "boxes": [], "scores": [], "ratios": [], "outputs": []}


class _ErrorRow:
    """The failed row of one item whose worker died (called in the driver only)."""

    def __init__(self, photo: Photo, stem: str, settings_hash: str) -> None:
        self.args = (photo, stem, settings_hash)

    def __call__(self, exc: BaseException) -> dict:
        return _failed_row(*self.args, exc)
