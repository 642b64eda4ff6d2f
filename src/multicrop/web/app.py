"""The FastAPI application behind ``multicrop serve``: the JSON API and the two pages.

This module builds the app (errors, the session cookie, the upload door, the pages); the routes
live by job in :mod:`~multicrop.web.routes_photos` (uploads, a session's photos, the pictures
shown), :mod:`~multicrop.web.routes_crops` (suggestions, the seamless panorama, scores, the zip)
and :mod:`~multicrop.web.routes_labels` (label mode), over the shared
:class:`~multicrop.web.served.Served`.

Carousel mode (``/``): upload photos, get the suggested carousel for any k,
ratios and strategy (the analysis is cached per photo), edit the boxes and
download a zip.  Label mode (``/label``, with a label folder): draw
fixed-ratio boxes and save them in the Carousel label layout.

Every error is one JSON object ``{"detail": "<one line>"}`` with a 4xx
status; the page shows that line beside the control it concerns.

Each browser gets a random session id in a cookie on its first request;
uploads belong to that session, and another session's photo id answers 404
exactly as an unknown one does.
"""

from __future__ import annotations

import math
import re
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from ..crop.config import CropConfig
from ..errors import InvalidParameterError, MulticropError
from ..io import DEFAULT_MAX_PIXELS
from ..ratios import DEFAULT_RATIOS, parse_ratio_spec
from .guards import check_models, crash_message, upload_too_large
from .labels import LabelFolder
from .notes import plain_message
from .photos import PhotoStore
from .requests import PRESETS
from .routes_crops import add_crop_routes
from .routes_labels import add_label_routes
from .routes_photos import add_photo_routes
from .served import Served

__all__ = ["create_app", "PRESETS", "SESSION_COOKIE"]


#: The cookie holding the browser session's random id.
SESSION_COOKIE = "multicrop_session"

_STATIC = resources.files("multicrop.web") / "static"


def create_app(
    *,
    config: CropConfig | None = None,
    ratios: str = "instagram",
    label_dir: str | Path | None = None,
    label_ratios: str = DEFAULT_RATIOS,
    max_upload_mb: float = 50,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    threads: int | None = None,
    panel: Any = None,
    check: bool = True,
) -> FastAPI:
    """Build the application.

    Parameters
    ----------
    config : CropConfig, optional
        Base crop settings (saliency backend, faces, ...); requests change
        k, ratios and strategy only.
    ratios : str
        The ratio setting the page starts with (a preset name or ratios).
    label_dir : path, optional
        Folder of photos for label mode.
    label_ratios : str
        Ratios label mode allows.
    max_upload_mb : float
        Largest upload accepted, in MB: a finite number > 0.
    max_pixels : int
        Decompression-bomb limit.
    threads : int, optional
        Threads for the saliency model.
    panel : multicrop.judges.panel.Panel, optional
        The judges of the "Judge scores" toggle (default: the measured judge alone).
    check : bool
        Run the saliency backend and detectors once now (:func:`multicrop.web.guards.check_models`),
        so a setting that cannot work fails at start rather than on every upload.

    Raises
    ------
    InvalidParameterError
        A bad ratio setting or upload limit, or a saliency backend or detector that cannot run.
    """
    if isinstance(max_upload_mb, bool) or not isinstance(max_upload_mb, (int, float)) \
            or not 0 < max_upload_mb < math.inf:  # NaN fails the comparison too
        raise InvalidParameterError(f"max_upload_mb must be a finite number of MB > 0, got {max_upload_mb!r}")
    if check:
        check_models(config or CropConfig(), threads=threads)
    store = PhotoStore(config, max_pixels=max_pixels, threads=threads)
    default_ratios = ratios
    parse_ratio_spec(default_ratios)  # a bad setting fails at start, not on the first request
    folder = LabelFolder(label_dir, ratios=label_ratios) if label_dir is not None else None
    limit = int(max_upload_mb * 1024 * 1024)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        store.close()

    app = FastAPI(title="multicrop", summary="Carousels of distinct crops; Carousel-style labelling.",
                  lifespan=lifespan)
    app.state.store = store
    app.state.labels = folder
    app.state.panel = panel

    @app.exception_handler(MulticropError)
    async def _library_error(request: Request, exc: MulticropError) -> JSONResponse:
        text, name = plain_message(str(exc)), getattr(request.state, "photo_name", None)
        head, sep, _ = text.partition(": ")
        if name and (not sep or " " in head.strip()):  # names neither a file nor a field: name the photo
            text = f"{name}: {text}"
        return JSONResponse({"detail": text}, status_code=422)

    @app.exception_handler(RequestValidationError)
    async def _bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        # one line naming the field, and the field itself so the page can show it beside its control
        errs = exc.errors()
        first = errs[0] if errs else {}
        loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path")]
        field = ".".join(loc)
        msg = first.get("msg", "invalid request").removeprefix("Value error, ")
        got = first.get("input")
        detail = f"{field or 'request'}: {msg}" + (f", got {got!r}" if got is not None and not isinstance(got, dict)
                                                    else "")
        return JSONResponse({"detail": detail, "field": field}, status_code=422)

    @app.middleware("http")
    async def _session(request: Request, call_next):
        sid = request.cookies.get(SESSION_COOKIE, "")
        fresh = not re.fullmatch(r"[A-Za-z0-9_-]{32,64}", sid)
        if fresh:
            sid = secrets.token_urlsafe(32)
        request.state.session = sid
        request.state.photo_name = None
        too_big = (upload_too_large(request.headers, limit, max_upload_mb, request.query_params.get("name"))
                   if request.method == "POST" and request.url.path == "/api/photos" else None)
        if too_big:  # from Content-Length alone: the body is never read
            response = JSONResponse({"detail": too_big, "field": "upload"}, status_code=413,
                                    headers={"Connection": "close"})
        else:
            try:
                response = await call_next(request)
            except Exception as exc:  # never a bare 500: one JSON line naming the photo
                response = JSONResponse({"detail": crash_message(exc, request.state.photo_name, hide=str(store.dir))},
                                        status_code=500)
        if fresh:
            response.set_cookie(SESSION_COOKIE, sid, max_age=int(store.ttl_s), httponly=True, samesite="strict")
        return response

    # -- pages -----------------------------------------------------------------------------
    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(str(_STATIC / ("label.html" if folder is not None else "carousel.html")))

    @app.get("/carousel", include_in_schema=False)
    async def carousel_page() -> FileResponse:
        return FileResponse(str(_STATIC / "carousel.html"))

    @app.get("/label", include_in_schema=False)
    async def label_page() -> FileResponse:
        return FileResponse(str(_STATIC / "label.html"))

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response:
        return Response(status_code=204)

    app.mount("/static", StaticFiles(directory=str(_STATIC)), name="static")

    # -- the JSON API: web/routes_photos.py, web/routes_crops.py, web/routes_labels.py -------------
    served = Served(store=store, default_ratios=default_ratios, folder=folder, limit=limit,
                    max_upload_mb=max_upload_mb, max_pixels=max_pixels, threads=threads, panel=panel)
    add_photo_routes(app, served)
    add_crop_routes(app, served)
    add_label_routes(app, served)
    return app
