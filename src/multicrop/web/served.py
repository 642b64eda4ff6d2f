"""What every route of the web API shares: the photo store, the settings the server started with, and
the lookups that answer 404 (a photo of another session is as unknown as one never uploaded)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException, Request

from .labels import LabelFolder
from .photos import Photo, PhotoStore

__all__ = ["Served"]


@dataclass(frozen=True)
class Served:
    """The server's state and settings, as :func:`multicrop.web.app.create_app` built them.

    Attributes
    ----------
    store : PhotoStore
        The uploaded photos and their analyses.
    default_ratios : str
        The ratio setting the page starts with.
    folder : LabelFolder or None
        Label mode's folder (None: label mode is off).
    limit : int
        Largest upload accepted, in bytes (``max_upload_mb`` in MB).
    max_upload_mb : float
    max_pixels : int
        Decompression-bomb limit.
    threads : int or None
        Threads for the saliency model.
    panel : Panel or None
        The judges of the "Judge scores" toggle (None: the measured judge alone).
    """

    store: PhotoStore
    default_ratios: str
    folder: LabelFolder | None
    limit: int
    max_upload_mb: float
    max_pixels: int
    threads: int | None
    panel: Any

    def photo_or_404(self, pid: str, request: Request) -> Photo:
        """This session's photo ``pid`` (its name noted for error messages), else a 404."""
        try:
            photo = self.store.get(pid, request.state.session)
        except KeyError:
            raise HTTPException(404, f"no photo {pid!r} (deleted, expired or never uploaded)") from None
        request.state.photo_name = photo.name
        return photo

    def labels_or_404(self) -> LabelFolder:
        if self.folder is None:
            raise HTTPException(404, "label mode is off; start the server with --label DIR")
        return self.folder

    def label_name(self, name: str) -> str:
        """``name`` if the label folder holds a photo of that name, else a 404."""
        if name not in self.labels_or_404().names:
            raise HTTPException(404, f"no photo named {name!r} in the label folder")
        return name
