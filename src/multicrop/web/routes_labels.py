"""The label API (``/api/label/...``): the label folder's photos, their boxes and metadata, and suggestions."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import FastAPI
from fastapi.responses import Response

from .photos import display_jpeg
from .requests import CropRequest, LabelSave
from .served import Served

__all__ = ["add_label_routes"]


def add_label_routes(app: FastAPI, served: Served) -> None:
    """Add the label API's routes to ``app`` (each answers 404 while label mode is off)."""
    store = served.store

    @app.get("/api/label/items", summary="The label folder's photos and progress")
    async def label_items() -> dict[str, Any]:
        lf = served.labels_or_404()
        return {"items": lf.items(), "progress": lf.progress(), "ratios": [str(r) for r in lf.ratios],
                "folder": lf.root.name, "skipped": [{"file": n, "why": why} for n, why in lf.skipped.items()]}

    @app.get("/api/label/items/{name}", summary="One photo's boxes and metadata")
    async def label_item(name: str) -> dict[str, Any]:
        return await asyncio.to_thread(served.labels_or_404().load, served.label_name(name))

    @app.get("/api/label/items/{name}/image", summary="The photo, long side at most 1600 px (JPEG)")
    async def label_image(name: str) -> Response:
        lf = served.labels_or_404()
        data = await asyncio.to_thread(display_jpeg, lf.photo(served.label_name(name)), served.max_pixels)
        return Response(data, media_type="image/jpeg")

    @app.put("/api/label/items/{name}", summary="Save a photo's boxes and metadata (Carousel layout)")
    async def label_save(name: str, body: LabelSave) -> dict[str, Any]:
        lf = served.labels_or_404()
        saved = await asyncio.to_thread(lf.save, served.label_name(name), [b.model_dump() for b in body.boxes],
                                        body.metadata.model_dump())
        saved["progress"] = lf.progress()
        return saved

    @app.post("/api/label/items/{name}/suggest", summary="Suggested crops for a photo of the label folder")
    async def label_suggest(name: str, req: CropRequest) -> dict[str, Any]:
        lf = served.labels_or_404()
        path = lf.photo(served.label_name(name))
        cfg = store.config_for(req.k, req.ratios or ",".join(map(str, lf.ratios)), req.strategy)
        from ..crop.pipeline import crop_photo

        res = await asyncio.to_thread(crop_photo, path, cfg, max_pixels=served.max_pixels, threads=served.threads)
        return {"boxes": [{**c.box.to_dict(), "ratio": str(c.ratio)} for c in res.crops]}
