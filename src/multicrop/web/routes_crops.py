"""The crop routes of the carousel API: the suggested carousel (a focus click names a subject), the
seamless panorama (laid out, or cut from the band the person placed), judge scores and the zip."""

from __future__ import annotations

import asyncio
import math
import re
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import Response

from ..crop.config import CropConfig
from ..crop.subjects import SubjectRecord
from ..geometry import Box
from ..ratios import parse_ratio, parse_ratio_spec
from .download import box_in_photo, carousel_zip, edited_crops, lossless_block, zip_moved
from .judging import JUDGE, panel_mean, panel_scores, score_crops
from .notes import note_items, ratio_note
from .requests import CropRequest, DownloadRequest, SeamlessRequest
from .served import Served

__all__ = ["add_crop_routes"]

_SAFE_STEM = re.compile(r"[^A-Za-z0-9._-]+")


def _stem(name: str) -> str:
    stem = _SAFE_STEM.sub("_", Path(name).stem).strip("._") or "photo"
    return stem[:80]


def add_crop_routes(app: FastAPI, served: Served) -> None:
    """Add the crop routes to ``app``."""
    store, default_ratios, panel = served.store, served.default_ratios, served.panel

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
        photo = served.photo_or_404(pid, request)
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

    @app.post("/api/photos/{pid}/seamless",
              summary="A seamless panorama: adjacent slides of one ratio (source px), laid out or cut from a band")
    async def photo_seamless(pid: str, req: SeamlessRequest, request: Request) -> dict[str, Any]:
        from ..crop.seamless import seamless_carousel
        from ..crop.seamless_band import placed_layout, seamless_band

        photo = served.photo_or_404(pid, request)
        spec = parse_ratio_spec(req.ratios or default_ratios)
        size = photo.loaded.size
        block = await asyncio.to_thread(lossless_block, photo.loaded)  # None: the slides are re-encoded
        analysis = await asyncio.to_thread(store.analysis, photo)
        ah, aw = photo.loaded.analysis.shape[:2]

        def best() -> Any:  # the library's choice: the ratio slicing the fewest subjects, keeping the most
            return seamless_carousel(store.analysis(photo), size=size, ratios=spec.ratios,
                                     slides=req.slides, max_slides=max(req.max_slides, req.slides or 2),
                                     min_slide_width=1080)

        if req.band is not None:  # the band the person moved or resized: its slides, nothing re-chosen
            if req.slides is None:
                raise HTTPException(422, "slides: a band needs its number of slides")
            b, ratio = req.band, parse_ratio(req.band.ratio)
            if ratio not in spec.ratios:
                raise HTTPException(422, f"band.ratio: {ratio} is not a ratio of this setting "
                                         f"({', '.join(map(str, spec.ratios))})")
            boxes = seamless_band(box_in_photo(b.x, b.y, b.w, b.h, *size, what="band"), size=size, ratio=ratio,
                                  slides=req.slides, block=block)
            lay = placed_layout(boxes, size=size, analysis_size=(aw, ah), ratio=ratio,  # what this band slices
                                subjects=list(analysis.subjects) or list(analysis.faces), min_slide_width=1080)
            rec: dict[str, Any] = {"ratio": str(ratio), "sliced": list(lay.sliced), "cut": list(lay.cut),
                                   "notes": list(lay.notes), "placed": True, "ratio_note": None}
            rec["plain_notes"] = [n[:1].upper() + n[1:] + "." for n in lay.notes]
        else:
            lay = await asyncio.to_thread(best)
            ratio = lay.ratio
            boxes = seamless_band(lay.band, size=size, ratio=ratio, slides=lay.slides, block=block) if block \
                else lay.boxes
            rec = lay.to_dict()
            rec["placed"] = False
            rec["plain_notes"] = [n[:1].upper() + n[1:] + "." for n in lay.notes]
            if len(spec.ratios) > 1:
                rec["ratio_note"] = (
                    f"Slides of {lay.ratio}: of {', '.join(map(str, spec.ratios))} it keeps the most of this photo "
                    "with no subject split between two slides." if not lay.sliced
                    else f"Slides of {lay.ratio}, the best of {', '.join(map(str, spec.ratios))}.")
            else:
                rec["ratio_note"] = None
        # the subjects (source px): where the page snaps a dragged band edge
        rec["subjects"] = [SubjectRecord.of(s, size[0] / aw, size[1] / ah).to_dict() for s in analysis.subjects]
        w, h = int(boxes[0].w), int(boxes[0].h)
        band = Box(boxes[0].x, boxes[0].y, len(boxes) * w, h)
        rec.update({"slides": len(boxes), "slide_size": [w, h], "band": band.to_dict(),
                    "boxes": [bx.to_dict() for bx in boxes], "kept": round(band.area / (size[0] * size[1]), 4),
                    "size": list(size), "block": list(block) if block else None, "lossless": block is not None})
        if block:
            rec["plain_notes"].append(f"JPEG slides are cut losslessly, without re-encoding: the band's corner and "
                                      f"the slide width sit on this photo's {block[0]}×{block[1]} px block grid.")
        return rec

    @app.post("/api/photos/{pid}/scores",
              summary="Rubric scores of each crop: the measured judge, or every family of the served panel")
    async def scores(pid: str, req: DownloadRequest, request: Request) -> dict[str, Any]:
        photo = served.photo_or_404(pid, request)
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
        photo = served.photo_or_404(pid, request)
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
