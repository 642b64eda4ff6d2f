"""``multicrop serve``: a web page for making carousels and for labelling them.

:func:`create_app` builds the FastAPI application (needs the ``web`` extra);
the pages are plain HTML, JavaScript and CSS shipped in ``static/``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def create_app(**kwargs: Any):
    """Build the application; see :func:`multicrop.web.app.create_app`."""
    try:
        from .app import create_app as _create
    except ImportError as exc:  # fastapi missing
        from ..errors import MissingExtraError

        raise MissingExtraError.for_module(exc.name or "fastapi", extra="web", feature="`multicrop serve`") from None
    return _create(**kwargs)
