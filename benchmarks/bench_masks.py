"""How tight are subject masks? Mean mask IoU per class against human outlines.

    PYTHONPATH=src python benchmarks/bench_masks.py ../shared/data/coco-subjects \\
        --cache /tmp/multicrop-bench-masks

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
* each variant of :func:`multicrop.crop.masks.box_masks` (animals, vehicles,
  objects), the boxes of one photo sharing its saliency map and the people's
  pose masks excluded.

Matching: a detection (faces left out) and an outline of the same coarse
kind (person, animal, vehicle, object: :func:`multicrop.detectors.coco.kind_of`)
whose boxes overlap with IoU >= 0.5, greedily, best box IoU first; each
outline is matched at most once.  Mask IoU is between binary masks (soft
masks cut at 0.5).  The table gives, per class (and per kind), the number of
matched detections and the mean IoU of each mask; ``trust`` rows show the
default variant's IoU gain over the box by trust band, the evidence for the
caller's "good enough" cut.
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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path, help="a YOLO-segmentation folder or a COCO instances JSON")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/multicrop-bench-masks"),
                    help="folder for the cached analyses (saliency and detections per photo)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1)
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


if __name__ == "__main__":
    main()
