"""Preview grid: the photos where two methods' crops differ most, side by side (one PNG).

    python benchmarks/preview_diff.py --data /tmp/w9/synth-seed0 \\
        --a /tmp/w9/rep_partition --b /tmp/w9/rep_direct --n 12 --out grid.png

Reads the per-image predictions each evaluation wrote (``REP_DIR/results.jsonl``)
and the labels of the dataset directory; no method is rerun.  Only photos
predicted by both methods are compared.

How "differ most" is measured: for each photo, every box of A is matched to
the box of B it overlaps most (IoU) and every box of B to A's; the
**agreement** is the mean of those best IoUs over all boxes of both (0 if one
method wrote no box and the other did, 1 if neither did).  The ``n`` photos with
the lowest agreement are shown, ties broken by the larger difference of the
two methods' per-image kIoU@0.5.  Each row shows the photo three times: A's
crops (magenta), B's crops (orange), the labels (green); the row's title gives
the photo id, the agreement, and both kIoU@0.5 values.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont, ImageOps

from multicrop.datasets.carousel import load_carousel
from multicrop.evaluation.carousel.records import RESULTS_FILE, read_results
from multicrop.geometry import Box, iou_matrix
from multicrop.metrics.kiou import image_kiou

PANEL_H = 260  # height of each photo panel, px
TITLE_H = 24
GAP = 6
COLOURS = {"a": (255, 40, 200), "b": (255, 150, 0), "gt": (40, 220, 90)}


def agreement(a: Sequence[Box], b: Sequence[Box]) -> float:
    """Mean best IoU of every box of ``a`` against ``b`` and of every box of ``b`` against ``a``."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    m = iou_matrix(list(a), list(b))
    best = list(m.max(axis=1)) + list(m.max(axis=0))
    return float(sum(best) / len(best))


def differing(items: dict, pa: dict, pb: dict, n: int) -> list[tuple[str, float, float, float]]:
    """The ``n`` photos predicted by both A and B that agree least, as ``(name, agreement, kIoU@0.5 A, B)``.

    ``items`` maps names to dataset items, ``pa`` and ``pb`` names to predictions; ties in
    agreement go to the larger difference in kIoU@0.5, then to the name.
    """
    rows = []
    for name in sorted(set(pa) & set(pb) & set(items)):
        a, b, item = pa[name], pb[name], items[name]
        ka = image_kiou(a.boxes, item.boxes, threshold=0.5).mean if item.boxes else 0.0
        kb = image_kiou(b.boxes, item.boxes, threshold=0.5).mean if item.boxes else 0.0
        rows.append((agreement(a.boxes, b.boxes), -abs(ka - kb), name, ka, kb))
    rows.sort()
    return [(name, agree, ka, kb) for agree, _, name, ka, kb in rows[:n]]


def _panel(path: Path, size: tuple[int, int], boxes: Sequence[Box], colour, caption: str, font) -> Image.Image:
    with Image.open(path) as im:
        im = ImageOps.exif_transpose(im).convert("RGB")
    scale = PANEL_H / im.height
    im = im.resize((max(1, round(im.width * scale)), PANEL_H), Image.Resampling.LANCZOS)
    sx, sy = im.width / size[0], im.height / size[1]
    draw = ImageDraw.Draw(im)
    for b in boxes:
        draw.rectangle([b.x * sx, b.y * sy, max(b.x2 * sx - 1, b.x * sx), max(b.y2 * sy - 1, b.y * sy)],
                       outline=colour, width=3)
    draw.rectangle([0, 0, im.width, 19], fill=(0, 0, 0))
    draw.text((4, 2), caption, fill=colour, font=font)
    return im


def main(argv: Sequence[str] | None = None) -> Path:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="dataset directory (carousel-synth or Carousel layout)")
    ap.add_argument("--a", type=Path, required=True, help="report directory of method A (holds results.jsonl)")
    ap.add_argument("--b", type=Path, required=True, help="report directory of method B")
    ap.add_argument("--n", type=int, default=12, help="photos to show (default 12)")
    ap.add_argument("--out", type=Path, default=Path("grid.png"))
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error(f"--n must be at least 1, got {args.n}")

    ds = load_carousel(args.data, require_images=True)
    items = {i.name: i for i in ds.items}
    preds = []
    for rep in (args.a, args.b):
        got = {p.name: p for p in read_results(rep / RESULTS_FILE)}
        if not got:
            ap.error(f"no predictions in {rep / RESULTS_FILE}")
        preds.append(got)
    pa, pb = preds
    rows = differing(items, pa, pb, args.n)
    if not rows:
        ap.error(f"no photo of {args.data} is predicted in both {args.a} and {args.b}")

    try:
        font = ImageFont.load_default(size=14)
    except TypeError:  # Pillow < 10.1 has one bitmap size
        font = ImageFont.load_default()
    label_a, label_b = pa[rows[0][0]].method, pb[rows[0][0]].method
    strips = []
    for name, agree, ka, kb in rows:
        item, a, b = items[name], pa[name], pb[name]
        size = (item.width, item.height)
        panels = [
            _panel(item.image_path, size, a.boxes, COLOURS["a"], f"A {label_a}: kIoU@0.5 {ka:.2f}", font),
            _panel(item.image_path, size, b.boxes, COLOURS["b"], f"B {label_b}: kIoU@0.5 {kb:.2f}", font),
            _panel(item.image_path, size, item.boxes, COLOURS["gt"], f"labels ({len(item.boxes)} boxes, k={item.k})",
                   font),
        ]
        w = sum(p.width for p in panels) + GAP * (len(panels) - 1)
        strip = Image.new("RGB", (w, TITLE_H + PANEL_H), (255, 255, 255))
        title = (f"{name}  |  agreement {agree:.2f}  |  kIoU@0.5 A {ka:.2f}  B {kb:.2f}"
                 f"{'  |  hard failure' if item.hard_failure else ''}")
        ImageDraw.Draw(strip).text((4, 5), title, fill=(0, 0, 0), font=font)
        x = 0
        for p in panels:
            strip.paste(p, (x, TITLE_H))
            x += p.width + GAP
        strips.append(strip)
    grid = Image.new("RGB", (max(s.width for s in strips), sum(s.height + GAP for s in strips)), (255, 255, 255))
    y = 0
    for s in strips:
        grid.paste(s, (0, y))
        y += s.height + GAP
    args.out.parent.mkdir(parents=True, exist_ok=True)
    grid.save(args.out)
    print(f"{len(strips)} photos ({label_a} vs {label_b}, least agreement first) -> {args.out}")
    return args.out


if __name__ == "__main__":
    main()
