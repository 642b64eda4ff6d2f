"""How tight are subject masks? Mean mask IoU per class against human outlines.

    PYTHONPATH=src python benchmarks/bench_masks.py PHOTOS --cache /tmp/multicrop-bench-masks

``PHOTOS`` is a folder of photos with human outlines (a YOLO-segmentation
folder, or a COCO instances JSON such as COCO val2017's beside its images);
the figures in :mod:`multicrop.crop.masks` were measured on 100 such photos.

For every photo of a YOLO-segmentation (or COCO JSON) folder of outlined
photos, runs the saliency model and the detectors as the product does
(:func:`multicrop.crop.analysis.analyse` with the default
:class:`~multicrop.crop.config.CropConfig`, on the analysis copy that
:func:`multicrop.io.load_image` makes), caches the saliency map and the
detections on disk (one ``.npz`` per photo, under a folder named by the
analysis settings key, so a changed model or setting never reuses a stale
file), then measures, for every detection matched to an outline:

* ``box``: the detector's box filled, the floor;
* ``pose``: a person's MediaPipe pose mask (people only);
* each variant of :func:`multicrop.crop.masks.box_masks` (:data:`VARIANTS`;
  animals, vehicles, objects), all non-person boxes of one photo sharing its
  saliency map (the people's pose masks excluded only in
  ``otsu-exclude-people``).

Matching: a detection (faces left out) and an outline of the same coarse
kind (person, animal, vehicle, object: :func:`multicrop.detectors.coco.kind_of`)
whose boxes overlap with IoU >= 0.5, greedily, best box IoU first; each
outline is matched at most once.  Mask IoU is between binary masks (soft
masks cut at 0.5).  The table gives, per outline class (and per kind), the
number of matched detections and the mean IoU of each mask (``recommended``:
the default mask for :data:`~multicrop.crop.masks.MASK_KINDS` with trust >=
:data:`~multicrop.crop.masks.TRUST_CUT`, else the box); the trust tables
show the default variant's IoU gain over the box by trust band and the share
of the outline each holds, the evidence for the caller's "good enough" cut.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from multicrop.crop.analysis import analyse, settings_key
from multicrop.crop.config import CropConfig
from multicrop.crop.masks import MASK_KINDS, TRUST_CUT, box_masks
from multicrop.datasets.outlines import load_outlines
from multicrop.detectors.coco import kind_of
from multicrop.detectors.types import Detection
from multicrop.geometry import Box
from multicrop.io import load_image

#: Box IoU a detection needs with an outline of its kind to be matched to it.
MATCH_IOU = 0.5


# ------------------------------------------------------------------------------ analyses cache

def _cache_path(cache: Path, config: CropConfig, photo_id: str) -> Path:
    return cache / settings_key(config) / f"{photo_id}.npz"


def cached_analysis(photo, config: CropConfig, cache: Path, *, threads: int | None = None):
    """``(saliency, detections)`` of one photo, from the cache or computed (and then cached)."""
    path = _cache_path(cache, config, photo.id)
    if path.is_file():
        with np.load(path, allow_pickle=False) as z:
            sal = z["saliency"]
            dets = []
            for i, (kind, label) in enumerate(zip(z["kinds"], z["labels"])):
                x, y, w, h = (float(v) for v in z["boxes"][i])
                mask = z[f"mask{i}"].astype(np.float32) / 255.0 if f"mask{i}" in z.files else None
                dets.append(Detection(str(kind), str(label), int(z["class_ids"][i]), Box(x, y, w, h),
                                      float(z["scores"][i]), mask=mask, detector=str(z["detectors"][i])))
        return sal, tuple(dets)
    image = load_image(photo.path, max_side=config.analysis_max_side).analysis
    a = analyse(image, config, threads=threads)
    dets = a.detections
    arrays = {
        "saliency": a.saliency.astype(np.float32),
        "kinds": np.array([d.kind for d in dets], dtype=str),
        "labels": np.array([d.label for d in dets], dtype=str),
        "class_ids": np.array([d.class_id for d in dets], dtype=np.int32),
        "boxes": np.array([[d.box.x, d.box.y, d.box.w, d.box.h] for d in dets], dtype=np.float64).reshape(-1, 4),
        "scores": np.array([d.score for d in dets], dtype=np.float64),
        "detectors": np.array([d.detector for d in dets], dtype=str),
    }
    for i, d in enumerate(dets):
        if d.mask is not None:
            arrays[f"mask{i}"] = np.round(np.clip(d.mask, 0, 1) * 255).astype(np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(path)
    return cached_analysis(photo, config, cache)


# ------------------------------------------------------------------------------ matching and IoU

#: The variant with box_mask's defaults.
DEFAULT = "half-peak"

#: The variants measured: options of :func:`box_masks` (the first is the default of box_mask).
VARIANTS: dict[str, dict] = {
    "half-peak": {},
    "half-peak-nearest": {"overlap": "nearest"},
    "otsu": {"threshold": "otsu", "floor": 0.25},
    "otsu-nearest": {"threshold": "otsu", "floor": 0.25, "overlap": "nearest"},
    "otsu-grow3": {"threshold": "otsu", "floor": 0.25, "grow": 0.03},
    "otsu-grow6": {"threshold": "otsu", "floor": 0.25, "grow": 0.06},
    "otsu-exclude-people": {"threshold": "otsu", "floor": 0.25, "exclude_people": True},
    "otsu-largest": {"threshold": "otsu", "floor": 0.25, "min_part": 1.0, "fill_holes": False},
    "half-peak-no-fallback": {"min_peak": 0.0, "min_separability": 0.0, "min_fill": 0.0, "max_fill": 1.0,
                              "min_side": 0},
}


def _box_iou(a: Box, b: Box) -> float:
    inter = a.intersection(b)
    union = a.area + b.area - inter
    return inter / union if union > 0 else 0.0


def _mask_iou(a: np.ndarray, b: np.ndarray) -> float:
    union = np.logical_or(a, b).sum()
    return float(np.logical_and(a, b).sum() / union) if union else 0.0


def _outline_boxes(masks: np.ndarray) -> list[Box | None]:
    out = []
    for m in masks:
        ys, xs = np.nonzero(m)
        out.append(None if ys.size == 0 else Box(float(xs.min()), float(ys.min()), float(xs.max() + 1 - xs.min()),
                                                 float(ys.max() + 1 - ys.min())))
    return out


def match(dets, gt_boxes, gt_kinds) -> list[tuple[int, int]]:
    """Greedy ``(detection, outline)`` pairs of one kind with box IoU >= :data:`MATCH_IOU`, best first."""
    pairs = []
    for i, d in enumerate(dets):
        for j, (g, k) in enumerate(zip(gt_boxes, gt_kinds)):
            if g is not None and d.kind == k:
                iou = _box_iou(d.box, g)
                if iou >= MATCH_IOU:
                    pairs.append((iou, i, j))
    used_d, used_g, out = set(), set(), []
    for _, i, j in sorted(pairs, key=lambda p: -p[0]):
        if i not in used_d and j not in used_g:
            used_d.add(i)
            used_g.add(j)
            out.append((i, j))
    return out


def measure_photo(sal: np.ndarray, dets, photo) -> list[dict]:
    """One row per matched detection: its class, kind and the IoU of every mask with its outline."""
    import cv2

    h, w = sal.shape
    gt = photo.masks()
    if gt.shape[1:] != (h, w):
        gt = np.stack([cv2.resize(m.astype(np.uint8), (w, h), interpolation=cv2.INTER_NEAREST) > 0 for m in gt]) \
            if len(gt) else np.zeros((0, h, w), bool)
    names = [o.name or str(o.category) for o in photo.objects]
    kinds = [kind_of(o.category) for o in photo.objects]
    dets = [d for d in dets if d.kind != "face"]
    pairs = match(dets, _outline_boxes(gt), kinds)
    if not pairs:
        return []
    people = np.zeros((h, w), bool)
    for d in dets:
        if d.kind == "person" and d.mask is not None:
            people |= d.mask >= 0.5
    others = [i for i, d in enumerate(dets) if d.kind != "person"]
    results = {}
    for name, opts in VARIANTS.items():
        opts = dict(opts)
        exclude = people if opts.pop("exclude_people", False) else None
        masks = box_masks(sal, [dets[i].box for i in others], exclude=exclude, **opts)
        results[name] = dict(zip(others, masks))
    rows = []
    for i, j in pairs:
        d, g = dets[i], gt[j]
        box = np.zeros((h, w), bool)
        b = d.box.round().clip(w, h)
        box[int(b.y):int(b.y2), int(b.x):int(b.x2)] = True
        row = {"photo": photo.id, "class": names[j], "kind": kinds[j], "detected": d.label, "score": d.score,
               "box": _mask_iou(box, g), "box:recall": float(np.logical_and(box, g).sum() / max(g.sum(), 1))}
        if d.kind == "person":
            row["pose"] = _mask_iou(d.mask >= 0.5, g) if d.mask is not None else row["box"]
            row["has_pose"] = d.mask is not None
        else:
            for name, got in results.items():
                m = got[i]
                row[name] = _mask_iou(m.mask > 0.5, g)
                row[name + ":recall"] = float(np.logical_and(m.mask > 0.5, g).sum() / max(g.sum(), 1))
                row[name + ":trust"] = m.trust
                row[name + ":fallback"] = m.fallback
        rows.append(row)
    return rows


def _mean(v) -> str:
    return f"{np.mean(v):.3f}" if len(v) else "-"


def table(rows: list[dict]) -> str:
    """Markdown table: per class and per kind, the count and mean IoU of the box, the pose mask and each variant."""
    cols = ["box", "pose", *VARIANTS, "recommended"]
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["kind"], r["class"])].append(r)
        groups[(r["kind"], "(all " + r["kind"] + ")")].append(r)
        if r["kind"] != "person":
            groups[("~", "(all but people)")].append(r)
    order = {"person": 0, "animal": 1, "vehicle": 2, "object": 3, "~": 4}
    lines = ["| kind | class | n | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 3)]
    for (kind, cls), rs in sorted(groups.items(), key=lambda kv: (order[kv[0][0]], kv[0][1].startswith("("),
                                                                   kv[0][1])):
        cells = []
        for c in cols:
            if c == "pose":
                v = [r["pose"] for r in rs if "pose" in r]
            elif c == "recommended":
                v = [r[DEFAULT] if (r["kind"] in MASK_KINDS and r[DEFAULT + ":trust"] >= TRUST_CUT
                                    and not r[DEFAULT + ":fallback"]) else r["box"] for r in rs if DEFAULT in r]
            else:
                v = [r[c] for r in rs if c in r]
            cells.append(_mean(v))
        lines.append(f"| {kind if kind != '~' else ''} | {cls} | {len(rs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def trust_table(rows: list[dict], variant: str = DEFAULT, kinds: tuple[str, ...] = MASK_KINDS) -> str:
    """The variant's IoU against the box's by trust band (saliency masks only) and the fallbacks, for ``kinds``."""
    rs = [r for r in rows if variant in r and r["kind"] in kinds]
    lines = ["| trust | n | mean IoU box | mean IoU mask | mask better | mean gain | outline held: box / mask |",
             "|---|---|---|---|---|---|---|"]
    edges = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 1.01]
    for lo, hi in zip(edges[:-1], edges[1:]):
        b = [r for r in rs if not r[variant + ":fallback"] and lo <= r[variant + ":trust"] < hi]
        if b:
            gain = [r[variant] - r["box"] for r in b]
            lines.append(f"| {lo:.1f}-{min(hi, 1):.1f} | {len(b)} | {_mean([r['box'] for r in b])} | "
                         f"{_mean([r[variant] for r in b])} | {np.mean([g > 0 for g in gain]):.0%} | "
                         f"{np.mean(gain):+.3f} | {_mean([r['box:recall'] for r in b])} / "
                         f"{_mean([r[variant + ':recall'] for r in b])} |")
    for reason in sorted({r[variant + ":fallback"] for r in rs} - {""}):
        b = [r for r in rs if r[variant + ":fallback"] == reason]
        lines.append(f"| fallback: {reason} | {len(b)} | {_mean([r['box'] for r in b])} | "
                     f"{_mean([r[variant] for r in b])} | - | - | - |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path, help="a YOLO-segmentation folder or a COCO instances JSON")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/multicrop-bench-masks"),
                    help="folder for the cached analyses (saliency and detections per photo)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rows", type=Path, default=None, help="write every matched detection's IoUs to this JSON")
    ap.add_argument("--cache-only", action="store_true", help="fill the cache and stop")
    args = ap.parse_args(argv)
    config = CropConfig()
    outlines = load_outlines(args.source)
    photos = list(outlines)[: args.limit]
    t0 = time.monotonic()
    for n, photo in enumerate(photos, 1):
        cached_analysis(photo, config, args.cache, threads=args.threads)
        if n % 10 == 0:
            print(f"analysed {n}/{len(photos)} ({time.monotonic() - t0:.0f} s)", file=sys.stderr)
    if args.cache_only:
        return
    rows = []
    for photo in photos:
        sal, dets = cached_analysis(photo, config, args.cache)
        rows.extend(measure_photo(sal, dets, photo))
    print(f"## Mean mask IoU per class ({len(photos)} photos, {len(rows)} matched detections; "
          f"settings {settings_key(config)})\n")
    print(table(rows))
    for v in (DEFAULT, "half-peak-no-fallback"):
        for kinds in (MASK_KINDS, ("object",)):
            print(f"\n## {v}, {' and '.join(kinds)}: IoU by trust\n")
            print(trust_table(rows, v, kinds))
    print(f"\nrecommended: the {DEFAULT} mask (box_mask's defaults) for {', '.join(MASK_KINDS)} "
          f"with trust >= {TRUST_CUT}, else the box")
    if args.rows:
        import json

        args.rows.write_text(json.dumps(rows, indent=1, default=float))


if __name__ == "__main__":
    main()
