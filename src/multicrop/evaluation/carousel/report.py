"""Files written for a Carousel evaluation: tables, per-image CSV, HTML page.

Written into the report directory, each atomically:

``table.csv``, ``table.json``
    One row per subset (kIoU@0.5:0.95, kIoU@0.5, per-image means, images,
    boxes, failures, errors, seconds per image, k exact-match rate and mean
    absolute error, orientation accuracy, blob-cut share); the JSON also says
    which method version, worker and thread counts produced it.
``per_image.csv``
    One row per image (with ``blob_cuts``, the crops cutting a salient blob,
    and ``blobs``, the blobs found; empty where not measured).
``report.html`` and ``thumbs/*.jpg``
    The table and every image with its ground truth (green) and predicted
    (magenta) boxes drawn.  A thumbnail is named by a hash of what it shows,
    so a rerun (a resumed evaluation) draws only new ones and removes stale ones.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import re
from pathlib import Path

from ...geometry import Box
from ...errors import ImageLoadError
from ...io import atomic_path, atomic_write_text, open_image
from .evaluate import CarouselEvaluation
from .records import ImageResult, ScoreRow

__all__ = ["write_report", "table_csv", "format_rows", "THUMB_SIDE", "DISPLAY_COLUMNS"]

#: Long side of the thumbnails, in pixels.
THUMB_SIDE = 480

_GT = (40, 220, 90)
_PRED = (255, 40, 200)
_COLUMNS = (
    "method", "subset", "kiou_50_95", "kiou_50", "image_mean_50_95", "image_mean_50",
    "n_images", "n_boxes", "failures", "errors", "seconds_per_image", "k_exact", "k_mae",
    "orientation_accuracy", "blob_cut",
)
#: Column titles of :func:`format_rows`.
DISPLAY_COLUMNS = ("method", "subset", "kIoU@0.5:0.95", "kIoU@0.5", "images", "failures", "s/image", "k-exact",
                   "orient", "blob-cut")


def _opt(v: float | None, fmt: str = ".3f") -> str:
    return "-" if v is None else format(v, fmt)


def format_rows(rows: tuple[ScoreRow, ...] | list[ScoreRow]) -> list[list[str]]:
    """Rows as display strings under :data:`DISPLAY_COLUMNS` (3 decimals for rates, 2 for seconds)."""
    out = []
    for r in rows:
        out.append([
            r.method, r.subset, f"{r.kiou_50_95:.3f}", f"{r.kiou_50:.3f}", str(r.n_images),
            str(r.failures), f"{r.seconds_per_image:.2f}", f"{r.k_exact:.3f}", f"{r.orientation_accuracy:.3f}",
            _opt(r.blob_cut),
        ])
    return out


def table_csv(rows: tuple[ScoreRow, ...] | list[ScoreRow]) -> str:
    """The table as CSV text."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(_COLUMNS)
    for r in rows:
        w.writerow([getattr(r, c) for c in _COLUMNS])
    return buf.getvalue()


def _per_image_csv(results: tuple[ImageResult, ...]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["name", "k", "n_gt", "hard_failure", "kiou_50", "kiou_50_95", "failure", "error",
                "seconds", "blob_cuts", "blobs", "boxes"])
    for r in results:
        p = r.prediction
        b = r.blob_cut
        w.writerow([
            p.name, p.k, len(r.gt), int(r.hard_failure), f"{r.kiou_50:.6f}", f"{r.kiou_50_95:.6f}",
            p.failure or "", p.error or "", f"{p.seconds:.4f}", "" if b is None else b.cuts,
            "" if b is None else b.blobs,
            json.dumps([[round(v, 1) for v in b.corners()] for b in p.boxes]),
        ])
    return buf.getvalue()


def _thumb_name(result: ImageResult, image_path: Path) -> str:
    """File name of a result's thumbnail: the image name and a hash of what is drawn.

    The hash covers the image file, the ground truth and the predicted boxes,
    so an existing file with this name is the same picture and is reused.
    """
    safe = re.sub(r"[^A-Za-z0-9_-]+", "_", result.prediction.name)[:60]
    content = json.dumps({
        "image": str(image_path), "side": THUMB_SIDE,
        "gt": [b.corners() for b in result.gt], "boxes": [b.corners() for b in result.prediction.boxes],
    }, sort_keys=True)
    return f"{safe}-{hashlib.sha256(content.encode('utf-8')).hexdigest()[:16]}.jpg"


def _draw_thumb(image_path: Path, size: tuple[int, int], result: ImageResult, dest: Path) -> bool:
    from PIL import ImageDraw

    from ...io.orientation import transpose

    try:
        with open_image(image_path) as im:
            im.draft("RGB", (THUMB_SIDE, THUMB_SIDE))
            im = transpose(im).convert("RGB")
    except (OSError, ImageLoadError):
        return False
    im.thumbnail((THUMB_SIDE, THUMB_SIDE))
    sx, sy = im.width / size[0], im.height / size[1]
    draw = ImageDraw.Draw(im)
    lw = max(2, THUMB_SIDE // 160)

    def rect(b: Box, colour) -> None:
        s = b.scale(sx, sy)
        draw.rectangle([s.x, s.y, max(s.x2 - 1, s.x), max(s.y2 - 1, s.y)], outline=colour, width=lw)

    for b in result.gt:
        rect(b, _GT)
    for b in result.prediction.boxes:
        rect(b, _PRED)
    with atomic_path(dest) as tmp:
        im.save(tmp, format="JPEG", quality=85)
    return True


def _html(ev: CarouselEvaluation, thumbs: dict[str, str]) -> str:
    esc = html.escape
    head = "".join(f"<th>{esc(c)}</th>" for c in DISPLAY_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>" for row in format_rows(ev.rows))
    cards = []
    for r in sorted(ev.results, key=lambda r: r.kiou_50_95):
        p = r.prediction
        img = thumbs.get(p.name)
        pic = f'<img src="thumbs/{esc(img)}" alt="{esc(p.name)}" loading="lazy">' if img else "<p>(no image)</p>"
        note = ""
        if p.failure:
            note += f"<p class=f>failure: {esc(p.failure)}</p>"
        if p.error:
            note += f"<p class=f>error: {esc(p.error)}</p>"
        cards.append(
            f"<figure>{pic}<figcaption><b>{esc(p.name)}</b><br>k={p.k}, {len(r.gt)} boxes"
            f"{', hard failure' if r.hard_failure else ''}<br>kIoU@0.5 {r.kiou_50:.3f}, "
            f"@0.5:0.95 {r.kiou_50_95:.3f}, {p.seconds:.2f} s"
            f"{'' if r.blob_cut is None else f', {r.blob_cut.cuts} crop(s) cutting a blob'}{note}</figcaption></figure>"
        )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Carousel evaluation: {esc(ev.method)} ({esc(ev.subset)})</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5em; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #bbb; padding: .3em .6em; text-align: right; }}
.grid {{ display: flex; flex-wrap: wrap; gap: 1em; }} figure {{ margin: 0; width: {THUMB_SIDE}px; }}
img {{ max-width: 100%; }} .f {{ color: #b00; margin: 0; }}
.gt {{ color: rgb{_GT}; }} .pred {{ color: rgb{_PRED}; }}
</style></head><body>
<h1>Carousel evaluation: {esc(ev.method)}</h1>
<p>Dataset {esc(str(ev.dataset.root))}; subset {esc(ev.subset)}; {len(ev.results)} images;
workers {ev.workers}, threads per worker {ev.threads}.
Boxes: <b class=gt>ground truth</b>, <b class=pred>prediction</b>. Images sorted by kIoU@0.5:0.95, worst first.</p>
<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>
<div class=grid>{''.join(cards)}</div>
</body></html>
"""


def write_report(ev: CarouselEvaluation, out_dir: str | Path, *, thumbnails: bool = True) -> dict[str, Path]:
    """Write the table, per-image CSV and HTML page of ``ev`` into ``out_dir``.

    Returns
    -------
    dict of str to Path
        ``table_csv``, ``table_json``, ``per_image_csv``, ``html``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "table_csv": atomic_write_text(out / "table.csv", table_csv(ev.rows)),
        "table_json": atomic_write_text(out / "table.json", json.dumps(ev.to_dict(), indent=2) + "\n"),
        "per_image_csv": atomic_write_text(out / "per_image.csv", _per_image_csv(ev.results)),
    }
    thumbs: dict[str, str] = {}
    if thumbnails:
        items = {i.name: i for i in ev.dataset.items}
        folder = out / "thumbs"
        for r in ev.results:
            item = items.get(r.prediction.name)
            if item is None or item.image_path is None:
                continue
            name = _thumb_name(r, item.image_path)
            if (folder / name).is_file() or _draw_thumb(item.image_path, (item.width, item.height), r, folder / name):
                thumbs[r.prediction.name] = name
        if folder.is_dir():  # thumbnails of earlier results are stale
            for f in folder.glob("*.jpg"):
                if f.name not in thumbs.values():
                    f.unlink()
    paths["html"] = atomic_write_text(out / "report.html", _html(ev, thumbs))
    return paths
