"""Admission by estimated pixels: bounded memory whatever the photos' sizes.

A worker holds, at its peak, the full-resolution decode of its photo (to cut
the crops) and the crops themselves.  Before a photo is handed to a worker,
its pixel count is read from the file's header (Pillow opens lazily and
decodes nothing), and the photo is admitted only while the pixels in flight
stay within a budget.  A photo larger than the whole budget still runs, but
alone; so a folder of 200 MP photos is not decoded by every worker at once.

Examples
--------
>>> budget = PixelBudget(300_000_000)
>>> budget.try_admit(200_000_000), budget.try_admit(200_000_000), budget.in_flight
(True, False, 200000000)
>>> budget.release(200_000_000); budget.try_admit(200_000_000)
True
>>> big = PixelBudget(100); big.try_admit(1_000)  # alone: admitted even over the budget
True
"""

from __future__ import annotations

import os

from ..errors import InvalidParameterError

__all__ = ["PixelBudget", "header_pixels", "default_pixel_budget", "BYTES_PER_PIXEL"]

#: Peak bytes a worker holds per source pixel: the full decode (up to 4 bytes) and the crops cut from it.
BYTES_PER_PIXEL = 8


class PixelBudget:
    """Counts the pixels of the photos in flight against a budget.

    Parameters
    ----------
    limit : int
        Most pixels in flight at once; one photo over it is admitted when
        nothing else is in flight.
    """

    def __init__(self, limit: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidParameterError(f"pixel budget must be a positive integer, got {limit!r}")
        self.limit = limit
        self.in_flight = 0
        self.n_in_flight = 0
        self.peak = 0

    def try_admit(self, pixels: int) -> bool:
        """Admit a photo of ``pixels`` if it fits (or nothing else runs); True if admitted."""
        if self.n_in_flight and self.in_flight + pixels > self.limit:
            return False
        self.in_flight += pixels
        self.n_in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        return True

    def release(self, pixels: int) -> None:
        """A photo of ``pixels`` finished."""
        self.in_flight -= pixels
        self.n_in_flight -= 1


def header_pixels(path: str) -> int:
    """Width x height from the image header (no decode); 0 when the header cannot be read.

    The header is read by :func:`multicrop.io.read_header`, the one header
    reader (the same format allow-list, regular-file and truncation checks as
    every image opened).  A file refused here is admitted as free and fails
    in its worker, which records the reason.
    """
    from ..io import read_header

    try:  # only the size is read here; load_image applies the real limit
        if "://" in path:
            import fsspec

            with fsspec.open(path, "rb", block_size=1 << 16) as fh:
                header = read_header(fh, name=path, complete=False)
        else:
            header = read_header(path, complete=False)
    except Exception:  # noqa: BLE001 - any unreadable header: the worker reports why
        return 0
    return header.pixels


def default_pixel_budget(*, memory_fraction: float = 0.5) -> int:
    """Pixels in flight that fit in ``memory_fraction`` of this machine's RAM at :data:`BYTES_PER_PIXEL`."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        total = 8 << 30
    return max(1, int(total * memory_fraction) // BYTES_PER_PIXEL)
