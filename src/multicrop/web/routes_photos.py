"""The photo routes of the carousel API: what the page may offer, uploads, a session's photos, and the
pictures the page shows (the display copy, the saliency map, crops rendered from the full photo)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request, UploadFile
from fastapi.responses import Response

from ..crop.config import STRATEGIES
from ..errors import MulticropError
from ..io import SUPPORTED_SUFFIXES
from ..ratios import PLATFORM_SIZES, parse_ratio_spec
from .download import box_in_photo
from .guards import crash_message
from .notes import plain_error
from .photos import auto_k_strategies
from .requests import PRESETS
from .served import Served
from .thumbs import RenderCache

__all__ = ["add_photo_routes"]


def add_photo_routes(app: FastAPI, served: Served) -> None:
    """Add the photo routes to ``app``; rendered crops are cached in ``app.state.renders``."""
    store, default_ratios, limit, max_upload_mb = served.store, served.default_ratios, served.limit, served.max_upload_mb
    renders = app.state.renders = RenderCache()

    @app.get("/api/settings", summary="What the page may offer")
    async def settings() -> dict[str, Any]:
        presets = dict(PRESETS)
        if default_ratios not in presets.values():
            presets = {parse_ratio_spec(default_ratios).label or default_ratios: default_ratios, **presets}
        return {"presets": presets, "strategies": list(STRATEGIES), "auto_k": auto_k_strategies(),
                "one_ratio": {v: parse_ratio_spec(v).one_ratio for v in presets.values()},
                "preset_ratios": {v: [str(r) for r in parse_ratio_spec(v).ratios] for v in presets.values()},
                "platform_sizes": dict(PLATFORM_SIZES),
                "default": {"k": store.config.k, "ratios": default_ratios, "strategy": store.config.strategy},
                "max_upload_mb": max_upload_mb, "suffixes": sorted(SUPPORTED_SUFFIXES),
                "label_mode": served.folder is not None}

    @app.post("/api/photos", summary="Upload one or several photos; each is analysed in the background")
    async def upload(request: Request, files: list[UploadFile]) -> dict[str, Any]:
        accepted, refused = [], []
        for f in files:
            name = Path(f.filename or "photo").name
            data = await f.read(limit + 1)
            await f.close()
            if len(data) > limit:
                refused.append({"name": name, "error": f"{name}: larger than the {max_upload_mb:g} MB upload limit",
                                "status": 413})
                continue
            if not data:
                refused.append({"name": name, "error": f"{name}: the file is empty", "status": 422})
                continue
            try:
                photo = await asyncio.to_thread(store.add, name, data, session=request.state.session)
            except MulticropError as exc:
                refused.append({"name": name, "error": plain_error(name, str(exc)), "status": 422})
                continue
            except Exception as exc:  # one bad file never fails its neighbours
                refused.append({"name": name, "error": crash_message(exc, name, hide=str(store.dir)), "status": 422})
                continue
            accepted.append(photo.info())
        if not accepted and refused:
            raise HTTPException(min(r["status"] for r in refused), "; ".join(r["error"] for r in refused))
        return {"photos": accepted, "refused": refused}

    @app.get("/api/photos", summary="This browser session's uploaded photos")
    async def photos(request: Request) -> dict[str, Any]:
        return {"photos": store.list(request.state.session)}

    @app.get("/api/photos/{pid}", summary="A photo's state: queued, analysing, ready or error")
    async def photo_info(pid: str, request: Request) -> dict[str, Any]:
        return served.photo_or_404(pid, request).info()

    @app.delete("/api/photos/{pid}", summary="Forget a photo and delete its files")
    async def delete_photo(pid: str, request: Request) -> dict[str, Any]:
        served.photo_or_404(pid, request)
        store.remove(pid)
        renders.forget(pid)
        return {"deleted": pid}

    @app.get("/api/photos/{pid}/image", summary="The photo, long side at most 1600 px (JPEG)")
    async def photo_image(pid: str, request: Request) -> Response:
        return Response(served.photo_or_404(pid, request).display, media_type="image/jpeg")

    @app.get("/api/photos/{pid}/saliency", summary="The saliency map (greyscale PNG); waits for the analysis")
    async def photo_saliency(pid: str, request: Request) -> Response:
        photo = served.photo_or_404(pid, request)
        png = await asyncio.to_thread(store.saliency_png, photo)
        return Response(png, media_type="image/png")

    @app.get("/api/photos/{pid}/render",
             summary="One crop rendered from the full-resolution photo at most `width` px wide (JPEG, cached)")
    async def render(pid: str, x: float, y: float, w: float, h: float, request: Request,
                     width: int = 1080) -> Response:
        photo = served.photo_or_404(pid, request)
        W, H = photo.loaded.size
        if not 16 <= width <= 8000:
            raise HTTPException(422, f"width must be in [16, 8000], got {width}")
        box = box_in_photo(x, y, w, h, W, H, what="box").round()
        data = await asyncio.to_thread(renders.render, photo, box, width)
        return Response(data, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})
