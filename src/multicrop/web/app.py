"""The FastAPI application behind ``multicrop serve``: the JSON API and the two pages.

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

import asyncio
import math
import re
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from ..crop.config import STRATEGIES, CropConfig
from ..errors import MulticropError
from ..geometry import Box
from ..io import DEFAULT_MAX_PIXELS, SUPPORTED_SUFFIXES
from ..ratios import DEFAULT_RATIOS, PLATFORM_SIZES, parse_ratio_spec
from .download import box_in_photo, carousel_zip, edited_crops, zip_moved
from .guards import check_models, crash_message, upload_too_large
from .judging import JUDGE, panel_mean, panel_scores, score_crops
from .labels import LabelFolder
from .notes import note_items, plain_error, plain_message, ratio_note
from .photos import PhotoStore, auto_k_strategies, display_jpeg
from .requests import PRESETS, CropRequest, DownloadRequest, LabelSave, SeamlessRequest

__all__ = ["create_app", "PRESETS", "SESSION_COOKIE"]


#: The cookie holding the browser session's random id.
SESSION_COOKIE = "multicrop_session"

_STATIC = resources.files("multicrop.web") / "static"
_SAFE_STEM = re.compile(r"[^A-Za-z0-9._-]+")


def _stem(name: str) -> str:
    stem = _SAFE_STEM.sub("_", Path(name).stem).strip("._") or "photo"
    return stem[:80]


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
        Largest upload accepted, in MB.
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
        A bad ratio setting, or a saliency backend or detector that cannot run.
    """
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

    def photo_or_404(pid: str, request: Request):
        try:
            photo = store.get(pid, request.state.session)
        except KeyError:
            raise HTTPException(404, f"no photo {pid!r} (deleted, expired or never uploaded)") from None
        request.state.photo_name = photo.name
        return photo

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
        presets = dict(PRESETS)
        if default_ratios not in presets.values():
            presets = {parse_ratio_spec(default_ratios).label or default_ratios: default_ratios, **presets}
        return {"presets": presets, "strategies": list(STRATEGIES), "auto_k": auto_k_strategies(),
                "one_ratio": {v: parse_ratio_spec(v).one_ratio for v in presets.values()},
                "preset_ratios": {v: [str(r) for r in parse_ratio_spec(v).ratios] for v in presets.values()},
                "platform_sizes": dict(PLATFORM_SIZES),
                "default": {"k": store.config.k, "ratios": default_ratios, "strategy": store.config.strategy},
                "max_upload_mb": max_upload_mb, "suffixes": sorted(SUPPORTED_SUFFIXES),
                "label_mode": folder is not None}

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
        return photo_or_404(pid, request).info()

    @app.delete("/api/photos/{pid}", summary="Forget a photo and delete its files")
    async def delete_photo(pid: str, request: Request) -> dict[str, Any]:
        photo_or_404(pid, request)
        store.remove(pid)
        return {"deleted": pid}

    @app.get("/api/photos/{pid}/image", summary="The photo, long side at most 1600 px (JPEG)")
    async def photo_image(pid: str, request: Request) -> Response:
        return Response(photo_or_404(pid, request).display, media_type="image/jpeg")

    @app.get("/api/photos/{pid}/saliency", summary="The saliency map (greyscale PNG); waits for the analysis")
    async def photo_saliency(pid: str, request: Request) -> Response:
        photo = photo_or_404(pid, request)
        png = await asyncio.to_thread(store.saliency_png, photo)
        return Response(png, media_type="image/png")

    async def result_for(photo, req: CropRequest, named: dict | None = None):
        """The crops for ``req``; a focus point names the subject under it (``named`` receives it)."""
        cfg = store.config_for(req.k, req.ratios or default_ratios, req.strategy, mixed=req.mixed)
        focus = None
        if req.focus is not None:
            W, H = photo.loaded.size
            fx, fy = req.focus
            if not (math.isfinite(fx) and math.isfinite(fy) and 0 <= fx <= W and 0 <= fy <= H):
                raise HTTPException(422, f"focus: ({fx:g}, {fy:g}) must be a point in the {W}x{H} photo")
            focus = Box(fx, fy, 0, 0)
            if cfg.strategy == "direct":  # a click on a person's body frames that person, not the point
                subject = await asyncio.to_thread(subject_at, photo, cfg, fx, fy)
                if subject is not None:
                    focus = subject["box_source"]
                    if named is not None:
                        named.update(subject)
        return await asyncio.wrap_future(store.submit_crops(photo, cfg, focus=focus))

    def subject_at(photo, cfg: CropConfig, fx: float, fy: float) -> dict | None:
        """The smallest detected subject (else salient one) whose box holds the source point (fx, fy)."""
        analysis = store.analysis(photo, cfg)
        W, H = photo.loaded.size
        ah, aw = photo.loaded.analysis.shape[:2]
        sx, sy = W / aw, H / ah
        ax, ay = fx / sx, fy / sy
        under = [sub for sub in analysis.subjects if sub.kind != "focus"
                 and sub.box.x <= ax <= sub.box.x + sub.box.w and sub.box.y <= ay <= sub.box.y + sub.box.h]
        if not under:
            return None
        best = min(under, key=lambda sub: (sub.source != "detector", sub.box.w * sub.box.h))
        b = best.box
        x0, y0 = max(0.0, b.x * sx), max(0.0, b.y * sy)
        box = Box(x0, y0, min(W - x0, b.w * sx), min(H - y0, b.h * sy))
        return {"kind": best.kind, "label": best.label, "box": box.round().to_dict(), "box_source": box}

    @app.post("/api/photos/{pid}/crops", summary="The suggested carousel for these settings (boxes in source px)")
    async def photo_crops(pid: str, req: CropRequest, request: Request) -> dict[str, Any]:
        photo = photo_or_404(pid, request)
        named: dict[str, Any] = {}
        res = await result_for(photo, req, named)
        rec = res.to_dict()
        rec["source"] = photo.name
        rec["id"] = pid
        rec["analysis_runs"] = store.analysis_runs
        spec = parse_ratio_spec(req.ratios or default_ratios)
        rec["note_items"] = note_items(res.failure, res.notes)
        rec["focus_subject"] = {k: v for k, v in named.items() if k != "box_source"} or None
        if named:  # said in place of "Crop 1 holds the point you chose"
            what = named["kind"] if named["kind"] not in ("salient", "object") else "subject"
            label = named["label"]
            said = "" if label in (named["kind"], "salient", "focus") or label.startswith("group of") else f" ({label})"
            rec["note_items"] = [{"text": f"Crop 1 frames the {what} you clicked{said}.", "kind": "crops"}] + [
                n for n in rec["note_items"] if n["text"] != "Crop 1 holds the point you chose."]
        rec["plain_notes"] = [n["text"] for n in rec["note_items"]]
        said = any(n.startswith("one ratio for every crop") for n in res.notes)  # the library said which
        rec["ratio_note"] = None if said else ratio_note(
            spec.label or spec.name, [str(r) for r in spec.ratios], [str(c.ratio) for c in res.crops],
            one_ratio=res.config.one_ratio, platform=bool(spec.sizes))
        return rec

    @app.post("/api/photos/{pid}/seamless", summary="A seamless panorama: adjacent slides of one ratio (source px)")
    async def photo_seamless(pid: str, req: SeamlessRequest, request: Request) -> dict[str, Any]:
        from ..crop.seamless import seamless_carousel

        photo = photo_or_404(pid, request)
        spec = parse_ratio_spec(req.ratios or default_ratios)

        def best() -> Any:  # the library's choice: the ratio slicing the fewest subjects, keeping the most
            return seamless_carousel(store.analysis(photo), size=photo.loaded.size, ratios=spec.ratios,
                                     slides=req.slides, max_slides=max(req.max_slides, req.slides or 2),
                                     min_slide_width=1080)

        lay = await asyncio.to_thread(best)
        rec = lay.to_dict()
        rec["plain_notes"] = [n[:1].upper() + n[1:] + "." for n in lay.notes]
        if len(spec.ratios) > 1:
            rec["ratio_note"] = (f"Slides of {lay.ratio}: of {', '.join(map(str, spec.ratios))} it keeps the most of "
                                 "this photo with no subject split between two slides."
                                 if not lay.sliced else f"Slides of {lay.ratio}, the best of {', '.join(map(str, spec.ratios))}.")
        else:
            rec["ratio_note"] = None
        rec["size"] = list(photo.loaded.size)
        return rec

    @app.get("/api/photos/{pid}/render", summary="One crop rendered from the full-resolution photo (JPEG)")
    async def render(pid: str, x: float, y: float, w: float, h: float, request: Request,
                     width: int = 1080) -> Response:
        photo = photo_or_404(pid, request)
        W, H = photo.loaded.size
        if not 16 <= width <= 8000:
            raise HTTPException(422, f"width must be in [16, 8000], got {width}")
        box = box_in_photo(x, y, w, h, W, H, what="box").round()

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
    async def scores(pid: str, req: DownloadRequest, request: Request) -> dict[str, Any]:
        photo = photo_or_404(pid, request)
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
    async def download(pid: str, req: DownloadRequest, request: Request) -> Response:
        photo = photo_or_404(pid, request)
        res = await result_for(photo, req)
        boxes = [b.model_dump() for b in req.boxes] or [
            {**c.box.to_dict(), "ratio": str(c.ratio)} for c in res.crops]
        crops = edited_crops(res, boxes, exact=req.seamless)
        res = store.with_boxes(res, list(crops))
        stem = _stem(photo.name)
        data = await asyncio.to_thread(carousel_zip, res, stem, width=req.width, exact=req.seamless, source=photo.name)
        moved = zip_moved(data, stem, [c.box for c in crops])
        return Response(data, media_type="application/zip",
                        headers={"Content-Disposition": f'attachment; filename="{stem}_carousel.zip"',
                                 "X-Crops-Moved-Px": str(moved)})

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
                "folder": lf.root.name, "skipped": [{"file": n, "why": why} for n, why in lf.skipped.items()]}

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
