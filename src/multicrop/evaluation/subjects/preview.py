"""A grid of the photos where a method did worst: outlines and crop boxes drawn on each.

Worst = most crops that slice a subject or hold nothing (ties: the larger
share of such crops, then the photo's id).  On each tile the outlines of
people are drawn in orange, of other counted subjects (vehicles, animals)
in yellow and of every other object in grey; a crop that slices a subject
or is empty is red, any other crop green, each numbered in its top-left
corner in the order the method gave them.  The caption gives the counts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...io import open_image
from .run import PhotoResult, SubjectsRun

__all__ = ["worst_results", "worst_grid", "TILE"]

#: Long side of a tile, pixels.
TILE = 320
_CAPTION = 30
_COLUMNS = 4
_GOOD, _BAD = (40, 200, 80), (230, 30, 30)
_PERSON, _SUBJECT, _OTHER = (255, 150, 0), (255, 230, 0), (170, 170, 170)


def worst_results(run: SubjectsRun, method: str, *, n: int = 12) -> list[PhotoResult]:
    """The ``n`` counted photos with the most bad crops for ``method`` (photos with none left out)."""
    rows = [r for r in run.counted(method) if r.measures is not None and r.measures.bad > 0]
    rows.sort(key=lambda r: (-r.measures.bad, -r.measures.bad / max(r.measures.n_crops, 1), r.photo))
    return rows[:n]


def _tile(run: SubjectsRun, result: PhotoResult):
    import cv2
    from PIL import Image, ImageDraw

    photo = run.photos[result.photo]
    m = result.measures
    with open_image(photo.path) as im:
        img = im.convert("RGB")
    W, H = photo.size
    if img.size != (W, H):
        img = img.resize((W, H))
    s = TILE / max(W, H)
    tw, th = max(1, round(W * s)), max(1, round(H * s))
    img = img.resize((tw, th))
    draw = ImageDraw.Draw(img)
    masks = photo.masks()
    for ov, mask in zip(m.objects, masks):
        if ov.category in run.rules.person_ids and ov.subject:
            colour, width = _PERSON, 2
        elif ov.counted or (ov.subject and ov.category in run.rules.cut_ids):
            colour, width = _SUBJECT, 2
        else:
            colour, width = _OTHER, 1
        contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        for c in contours:
            pts = [(float(x) * s, float(y) * s) for x, y in c.reshape(-1, 2)]
            if len(pts) >= 2:
                draw.line(pts + pts[:1], fill=colour, width=width)
    for j, cv in enumerate(m.crops, 1):
        b = cv.box
        colour = _BAD if cv.bad else _GOOD
        draw.rectangle([b.x * s, b.y * s, (b.x + b.w) * s - 1, (b.y + b.h) * s - 1], outline=colour, width=3)
        # the crop's number inside its top-left corner, so overlapping boxes can be told apart
        draw.rectangle([b.x * s + 3, b.y * s + 3, b.x * s + 12, b.y * s + 14], fill=colour)
        draw.text((b.x * s + 5, b.y * s + 3), str(j), fill=(255, 255, 255))
    tile = Image.new("RGB", (TILE, TILE + _CAPTION), (255, 255, 255))
    tile.paste(img, ((TILE - tw) // 2, (TILE - th) // 2))
    d = ImageDraw.Draw(tile)
    d.text((4, TILE + 2), f"{result.photo}  {m.n_crops} crops", fill=(0, 0, 0))
    d.text((4, TILE + 15), f"cut {m.subject_cut} (person {m.person_cut})  empty {m.empty}  "
                           f"covered {m.covered}/{m.n_prominent}", fill=(0, 0, 0))
    return tile


def worst_grid(run: SubjectsRun, method: str, path: str | Path, *, n: int = 12) -> Path | None:
    """Write the worst ``n`` photos of ``method`` as one PNG grid; None (nothing written) if no crop is bad."""
    from PIL import Image

    rows = worst_results(run, method, n=n)
    if not rows:
        return None
    cols = min(_COLUMNS, len(rows))
    nrows = -(-len(rows) // cols)
    grid = Image.new("RGB", (cols * TILE + (cols - 1) * 4, nrows * (TILE + _CAPTION) + (nrows - 1) * 4),
                     (255, 255, 255))
    for i, r in enumerate(rows):
        grid.paste(_tile(run, r), ((i % cols) * (TILE + 4), (i // cols) * (TILE + _CAPTION + 4)))
    path = Path(path)
    grid.save(path, format="PNG")
    return path
