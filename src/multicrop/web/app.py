"""The FastAPI application behind ``multicrop serve``: the JSON API and the two pages.

Carousel mode (``/``): upload photos, get the suggested carousel for any k,
ratios and strategy (the analysis is cached per photo), edit the boxes and
download a zip.  Label mode (``/label``, with a label folder): draw
fixed-ratio boxes and save them in the Carousel label layout.

Every error is one JSON object ``{"detail": "<one line>"}`` with a 4xx
status; the page shows that line.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request, UploadFile
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from ..crop.config import STRATEGIES, CropConfig
from ..errors import MulticropError
from ..geometry import RATIO_PRESETS, Box
from ..io import DEFAULT_MAX_PIXELS, SUPPORTED_SUFFIXES
from .download import carousel_zip, edited_crops
from .judging import JUDGE, panel_mean, panel_scores, score_crops
from .labels import LabelFolder
from .photos import PhotoStore, auto_k_strategies, display_jpeg

__all__ = ["create_app", "PRESETS"]

#: What the page offers in its ratio menu: label -> ratios string.
PRESETS: dict[str, str] = {
    "Carousel (2:3 or 3:2)": "2:3,3:2",
    "2:3 portrait": "2:3",
    "3:2 landscape": "3:2",
    "4:5 portrait (Instagram)": "4:5",
    "1:1 square": "1:1",
    "1.91:1 landscape (Instagram)": "1.91:1",
    "9:16 story": "9:16",
    "Instagram (4:5, 1:1 or 1.91:1)": ",".join(str(r) for r in RATIO_PRESETS["instagram"]),
}

_STATIC = resources.files("multicrop.web") / "static"
_SAFE_STEM = re.compile(r"[^A-Za-z0-9._-]+")


class CropRequest(BaseModel):
    """Settings for a carousel: k (a number or ``auto``), ratios (``"2:3,3:2"`` or a preset) and strategy."""

    k: int | str | None = None
    ratios: str | None = None
    strategy: str | None = None


class BoxIn(BaseModel):
    """A crop in source pixels and its ratio (``"2:3"``)."""

    x: float
    y: float
    w: float
    h: float
    ratio: str


class DownloadRequest(CropRequest):
    """The carousel to download: the page's boxes (in order) and, optionally, the platform width."""

    boxes: list[BoxIn] = Field(default_factory=list)
    width: int | None = Field(default=None, ge=16, le=20000)


class LabelMeta(BaseModel):
    k: int | None = None
    title: str = ""
    creator: str = ""
    licence: str = ""
    url: str = ""


class LabelSave(BaseModel):
    boxes: list[BoxIn] = Field(default_factory=list)
    metadata: LabelMeta = Field(default_factory=LabelMeta)


def _stem(name: str) -> str:
    stem = _SAFE_STEM.sub("_", Path(name).stem).strip("._") or "photo"
    return stem[:80]


def create_app(
    *,
    config: CropConfig | None = None,
    label_dir: str | Path | None = None,
    label_ratios: str = "2:3,3:2",
    max_upload_mb: float = 50,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    threads: int | None = None,
    panel: Any = None,
) -> FastAPI:
    """Build the application.

    Parameters
    ----------
    config : CropConfig, optional
        Base crop settings (saliency backend, faces, ...); requests change
        k, ratios and strategy only.
    label_dir : path, optional
        Folder of photos for label mode.
    label_ratios : str
        Ratios label mode allows.
    max_upload_mb : float
        Largest upload accepted, in MB.
    max_pixels : int
        Decompression-bomb limit.
    threads : int, optional
        Threads for the saliency model.
    panel : multicrop.judges.panel.Panel, optional
        The judges of the "Judge scores" toggle (default: the measured judge alone).
    """
    store = PhotoStore(config, max_pixels=max_pixels, threads=threads)
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
        return JSONResponse({"detail": str(exc)}, status_code=422)

    def photo_or_404(pid: str):
        try:
            return store.get(pid)
        except KeyError:
            raise HTTPException(404, f"no photo {pid!r} (deleted, expired or never uploaded)") from None

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

    # -- carousel API ----------------------------------------------------------------------
    @app.get("/api/settings", summary="What the page may offer")
    async def settings() -> dict[str, Any]:
        return {"presets": PRESETS, "strategies": list(STRATEGIES), "auto_k": auto_k_strategies(),
                "default": {"k": store.config.k, "ratios": ",".join(map(str, store.config.ratios)),
                            "strategy": store.config.strategy},
                "max_upload_mb": max_upload_mb, "suffixes": sorted(SUPPORTED_SUFFIXES),
                "label_mode": folder is not None}

    @app.post("/api/photos", summary="Upload one or several photos; each is analysed in the background")
    async def upload(files: list[UploadFile]) -> dict[str, Any]:
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
                photo = await asyncio.to_thread(store.add, name, data)
            except MulticropError as exc:
                refused.append({"name": name, "error": str(exc), "status": 422})
                continue
            accepted.append(photo.info())
        if not accepted and refused:
            raise HTTPException(min(r["status"] for r in refused), "; ".join(r["error"] for r in refused))
        return {"photos": accepted, "refused": refused}

    @app.get("/api/photos", summary="The uploaded photos")
    async def photos() -> dict[str, Any]:
        return {"photos": store.list()}

    @app.get("/api/photos/{pid}", summary="A photo's state: queued, analysing, ready or error")
    async def photo_info(pid: str) -> dict[str, Any]:
        return photo_or_404(pid).info()

    @app.delete("/api/photos/{pid}", summary="Forget a photo and delete its files")
    async def delete_photo(pid: str) -> dict[str, Any]:
        photo_or_404(pid)
        store.remove(pid)
        return {"deleted": pid}

    @app.get("/api/photos/{pid}/image", summary="The photo, long side at most 1600 px (JPEG)")
    async def photo_image(pid: str) -> Response:
        return Response(photo_or_404(pid).display, media_type="image/jpeg")

    @app.get("/api/photos/{pid}/saliency", summary="The saliency map (greyscale PNG); waits for the analysis")
    async def photo_saliency(pid: str) -> Response:
        photo = photo_or_404(pid)
        png = await asyncio.to_thread(store.saliency_png, photo)
        return Response(png, media_type="image/png")

    async def result_for(photo, req: CropRequest):
        cfg = store.config_for(req.k, req.ratios, req.strategy)
        return await asyncio.wrap_future(store.submit_crops(photo, cfg))

    @app.post("/api/photos/{pid}/crops", summary="The suggested carousel for these settings (boxes in source px)")
    async def photo_crops(pid: str, req: CropRequest) -> dict[str, Any]:
        photo = photo_or_404(pid)
        res = await result_for(photo, req)
        rec = res.to_dict()
        rec["source"] = photo.name
        rec["id"] = pid
        rec["analysis_runs"] = store.analysis_runs
        return rec

    @app.get("/api/photos/{pid}/render", summary="One crop rendered from the full-resolution photo (JPEG)")
    async def render(pid: str, x: float, y: float, w: float, h: float, width: int = 1080) -> Response:
        photo = photo_or_404(pid)
        W, H = photo.loaded.size
        box = Box(x, y, w, h).clip(W, H).round()
        if box.w < 1 or box.h < 1 or not 16 <= width <= 8000:
            raise HTTPException(422, f"box ({x:g}, {y:g}, {w:g}x{h:g}) must lie in the {W}x{H} photo "
                                f"and width in [16, 8000], got {width}")

        def cut() -> bytes:
            import io

            from PIL import Image
            full = photo.loaded.open_full(rgb=True)
            try:
                piece = full.crop(box.corners())
            finally:
                full.close()
            if piece.width > width:
                piece = piece.resize((width, max(1, round(piece.height * width / piece.width))),
                                     Image.Resampling.LANCZOS)
            buf = io.BytesIO()
            piece.save(buf, format="JPEG", quality=90)
            return buf.getvalue()

        return Response(await asyncio.to_thread(cut), media_type="image/jpeg")

    @app.post("/api/photos/{pid}/scores", summary="Rubric scores of each crop: the measured judge, or every family of the served panel")
    async def scores(pid: str, req: DownloadRequest) -> dict[str, Any]:
        photo = photo_or_404(pid)
        res = await result_for(photo, req)
        boxes = [b.model_dump() for b in req.boxes] or [
            {**c.box.to_dict(), "ratio": str(c.ratio)} for c in res.crops]
        crops = edited_crops(res, boxes)

        def run() -> list[dict[str, Any]]:
            full = photo.loaded.open_full(rgb=True)
            try:
                if panel is None:
                    return score_crops(full, [c.box for c in crops])
                import numpy as np
                per = panel_scores([np.asarray(full.crop(c.box.corners())) for c in crops], panel)
            finally:
                full.close()
            # the first family's scores at the top level (as before); every family in "families",
            # and their plain mean in "mean" when there are several
            return [{**(p["families"][0] if p["families"] else {}), **p,
                     **({"mean": panel_mean(p["families"])} if len(p["families"]) > 1 else {})} for p in per]

        per_crop = await asyncio.to_thread(run)
        judge = JUDGE if panel is None else {"panel": [f.name for f in panel.families]}
        return {"judge": judge, "crops": [{"box": c.box.to_dict(), "ratio": str(c.ratio), **s}
                                          for c, s in zip(crops, per_crop)]}

    @app.post("/api/photos/{pid}/download", summary="Zip of the crops (full size or platform width) and the record")
    async def download(pid: str, req: DownloadRequest) -> Response:
        photo = photo_or_404(pid)
        res = await result_for(photo, req)
        boxes = [b.model_dump() for b in req.boxes] or [
            {**c.box.to_dict(), "ratio": str(c.ratio)} for c in res.crops]
        crops = edited_crops(res, boxes)
        res = store.with_boxes(res, list(crops))
        stem = _stem(photo.name)
        data = await asyncio.to_thread(carousel_zip, res, stem, width=req.width)
        return Response(data, media_type="application/zip",
                        headers={"Content-Disposition": f'attachment; filename="{stem}_carousel.zip"'})

    # -- label API -------------------------------------------------------------------------
    def labels_or_404() -> LabelFolder:
        if folder is None:
            raise HTTPException(404, "label mode is off; start the server with --label DIR")
        return folder

    def label_name(name: str) -> str:
        lf = labels_or_404()
        if name not in lf.names:
            raise HTTPException(404, f"no photo named {name!r} in the label folder")
        return name

    @app.get("/api/label/items", summary="The label folder's photos and progress")
    async def label_items() -> dict[str, Any]:
        lf = labels_or_404()
        return {"items": lf.items(), "progress": lf.progress(), "ratios": [str(r) for r in lf.ratios],
                "folder": lf.root.name}

    @app.get("/api/label/items/{name}", summary="One photo's boxes and metadata")
    async def label_item(name: str) -> dict[str, Any]:
        return await asyncio.to_thread(labels_or_404().load, label_name(name))

    @app.get("/api/label/items/{name}/image", summary="The photo, long side at most 1600 px (JPEG)")
    async def label_image(name: str) -> Response:
        lf = labels_or_404()
        data = await asyncio.to_thread(display_jpeg, lf.photo(label_name(name)), max_pixels)
        return Response(data, media_type="image/jpeg")

    @app.put("/api/label/items/{name}", summary="Save a photo's boxes and metadata (Carousel layout)")
    async def label_save(name: str, body: LabelSave) -> dict[str, Any]:
        lf = labels_or_404()
        saved = await asyncio.to_thread(lf.save, label_name(name), [b.model_dump() for b in body.boxes],
                                        body.metadata.model_dump())
        saved["progress"] = lf.progress()
        return saved

    @app.post("/api/label/items/{name}/suggest", summary="Suggested crops for a photo of the label folder")
    async def label_suggest(name: str, req: CropRequest) -> dict[str, Any]:
        lf = labels_or_404()
        path = lf.photo(label_name(name))
        cfg = store.config_for(req.k, req.ratios or ",".join(map(str, lf.ratios)), req.strategy)
        from ..crop.pipeline import crop_photo

        res = await asyncio.to_thread(crop_photo, path, cfg, max_pixels=max_pixels, threads=threads)
        return {"boxes": [{**c.box.to_dict(), "ratio": str(c.ratio)} for c in res.crops]}

    return app
