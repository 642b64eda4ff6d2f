"""Where the judge store lives when no ``--db`` is given.

The default store is ``runs.sqlite`` in the user data directory
(:func:`platformdirs.user_data_path`, e.g. ``~/.local/share/multicrop`` on
Linux, ``~/Library/Application Support/multicrop`` on macOS), so a quick run
does not leave a store in whatever folder one stands in.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["default_store_path"]


def default_store_path() -> Path:
    """The store used when none is named: ``<user data dir>/multicrop/runs.sqlite``."""
    import platformdirs

    return platformdirs.user_data_path("multicrop", appauthor=False) / "runs.sqlite"
