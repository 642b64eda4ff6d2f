"""How many prominent subjects *any* crop could feature: an upper bound for ``featured``.

    python benchmarks/bench_featured_bound.py PHOTOS_WITH_OUTLINES [--ratio 2:3,3:2] [--step 0.01]

``multicrop bench subjects`` calls a prominent subject *featured* when a
crop covering at most ``zoom_max`` (60 %) of the frame holds ``whole``
(90 %) of it.  This script searches every crop of the given ratios up to
that size (positions and sizes on a grid of ``--step`` of the photo's long
side) with the human outlines themselves, and counts the subjects that some
crop features while slicing no other subject of the cut classes, under three
readings of "slicing":

- **metric**: the benchmark's own rule (its version 1, portraits counted as cuts), a neighbour held by 15-85 %;
- **no sliver**: the real-photo issue's "never a sliver of a body at the
  edge": a neighbour held by more than 1 % (``NoSlicedBody.sliver``) and
  less than the metric's 90 % ("whole");
- **direct**: direct selection's own rule, more than 1 % and less than 99 %
  (``NoSlicedBody.whole``: a detector's box is looser than an outline).

and two readings of "holds it": the metric's 90 % and direct's 99 %.  No
detector, no saliency: perfect knowledge of every outline.  A strategy
cannot beat the bound of the rules it keeps.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from multicrop.crop.direct.rules import NoSlicedBody
from multicrop.datasets.outlines import load_outlines
from multicrop.evaluation.subjects.metrics import SubjectRules
from multicrop.ratios import parse_ratios
from multicrop.measures import box_sums, summed_area_table


def candidate_boxes(W: int, H: int, ratios, zoom_max: float, step: float) -> np.ndarray:
    """Integer ``(x0, y0, x1, y1)`` of every crop of ``ratios`` covering at most ``zoom_max`` of the frame."""
    d = max(1, int(round(step * max(W, H))))
    out = []
    for r in ratios:
        for h in range(d, H + 1, d):
            w = int(round(h * r.value))
            if w < 1 or w > W or w * h > zoom_max * W * H:
                continue
            xs = np.arange(0, W - w + 1, d)
            ys = np.arange(0, H - h + 1, d)
            X, Y = np.meshgrid(xs, ys)
            out.append(np.stack([X.ravel(), Y.ravel(), X.ravel() + w, Y.ravel() + h], axis=1))
    return np.concatenate(out) if out else np.zeros((0, 4), int)


def held(masks: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``held[i, j]``: the share of object i's pixels inside box j (summed-area tables)."""
    out = np.zeros((len(masks), len(B)))
    for i, m in enumerate(masks):
        sat = summed_area_table(m.astype(np.float64))
        out[i] = box_sums(sat, B[:, 0], B[:, 1], B[:, 2], B[:, 3]) / max(sat[-1, -1], 1.0)
    return out


def readings(rules: SubjectRules, d: NoSlicedBody) -> dict[str, tuple[float, float]]:
    """Each reading of "slicing" a neighbour: the held shares it forbids (the metric's bounds included)."""
    return {"metric": (rules.slice_min, rules.slice_max), "no sliver": (d.sliver, rules.whole),
            "direct": (d.sliver, d.whole)}


def featurable(masks: np.ndarray, categories, crowd, ratios, *, rules: SubjectRules | None = None,
               direct: NoSlicedBody | None = None, step: float = 0.01) -> tuple[int, dict[tuple[str, str], int]]:
    """Prominent subjects of one photo, and how many some crop features under each reading.

    Returns ``(n, found)`` with ``found[(reading, hold)]`` the number of the
    ``n`` prominent subjects of the cut classes that a crop of ``ratios``
    covering at most ``rules.zoom_max`` of the frame holds by at least
    ``hold`` ("90 %": ``rules.whole``; "99 %": ``direct.whole``) while
    holding no other subject of the cut classes by a share its reading forbids.
    """
    rules, d = rules or SubjectRules(), direct or NoSlicedBody()
    masks = np.asarray(masks, bool)
    holds = {"90 %": rules.whole, "99 %": d.whole}
    found = {(r, h): 0 for r in readings(rules, d) for h in holds}
    if masks.ndim != 3 or len(masks) == 0:
        return 0, found
    n, H, W = masks.shape
    shares = masks.reshape(n, -1).mean(axis=1)
    cut_ids = set(rules.cut_ids)
    cut = [not crowd[i] and categories[i] in cut_ids and rules.subject_min <= shares[i] <= rules.subject_max
           for i in range(n)]
    counted = [i for i in range(n) if cut[i] and shares[i] >= rules.prominent_min]
    if not counted:
        return 0, found
    B = candidate_boxes(W, H, ratios, rules.zoom_max, step)
    s = held(masks, B)
    for i in counted:
        for name, (lo, hi) in readings(rules, d).items():
            sliced = np.zeros(len(B), bool)
            for j in range(n):
                if j != i and cut[j]:
                    sliced |= (s[j] >= lo) & (s[j] <= hi) if name == "metric" else (s[j] > lo) & (s[j] < hi)
            for hname, need in holds.items():
                found[(name, hname)] += bool(((s[i] >= need) & ~sliced).any())
    return len(counted), found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path, help="a YOLO-segmentation folder or a COCO instances JSON")
    ap.add_argument("--ratio", default="2:3,3:2")
    ap.add_argument("--step", type=float, default=0.01, help="grid step, share of the long side")
    args = ap.parse_args()
    rules, d = SubjectRules(), NoSlicedBody()
    ratios = parse_ratios(args.ratio)
    found: dict[tuple[str, str], int] = {}
    total = photos = 0
    for photo in load_outlines(args.source):
        masks = np.asarray(photo.masks(), bool)
        if len(masks) == 0:
            continue
        shares = masks.reshape(len(masks), -1).mean(axis=1)
        if int((shares >= rules.photo_object_min).sum()) < rules.photo_min_objects:
            continue
        n, got = featurable(masks, photo.categories, [o.crowd for o in photo.objects], ratios, rules=rules,
                            direct=d, step=args.step)
        photos += bool(n)
        total += n
        for key, v in got.items():
            found[key] = found.get(key, 0) + v
    print(f"{photos} photos with {total} prominent subjects of the cut classes; crops of {args.ratio} "
          f"covering <= {100 * rules.zoom_max:g} % of the frame, grid step {args.step:g} of the long side\n")
    print("| neighbours may not be held by | subject held >= | featurable |")
    print("|---|---|---|")
    spans = readings(rules, d)
    for (name, hname), v in found.items():
        lo, hi = spans[name]
        print(f"| {100 * lo:g}-{100 * hi:g} % ({name}) | {hname} | {v} of {total} ({100 * v / max(total, 1):.1f} %) |")


if __name__ == "__main__":
    main()
