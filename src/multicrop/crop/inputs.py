"""The photos a ``multicrop crop`` command names: :func:`multicrop.io.list_photos` (kept under its old name)."""

from __future__ import annotations

from ..io.photos import PHOTO_SUFFIXES
from ..io.photos import list_photos as expand_inputs

__all__ = ["PHOTO_SUFFIXES", "expand_inputs"]
