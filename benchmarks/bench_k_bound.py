"""How many distinct crops a photo holds at all: an upper bound for crops per photo at a fixed k.

    python benchmarks/bench_k_bound.py PHOTOS_WITH_OUTLINES [--k 3] [--iou 0.6] [--step 0.02]
        [--by-content] [--scoreboard RUN.json]

``multicrop bench subjects`` and the scoreboard count a crop as a failure
when it slices a subject of the cut classes (holds 15-85 % of it) or is
empty (holds half of no outlined object over 0.5 % of the frame).  This
script searches every crop of the given ratios (positions and sizes on a
grid of ``--step`` of the photo's long side, the long side at least
``PoolConfig.min_crop_share`` of the photo's, as the product's pool) with
the human outlines themselves, keeps the crops the benchmark calls clean
under three readings of "slicing", and finds the largest set of them, up to
``--k``, whose pairwise IoU is at most ``--iou`` (the product's zooms and
close-ups: ``CloseUps.iou``):

- **metric**: the benchmark's own rule, a subject of the cut classes held
  by 15-85 % (its version 1: a person cut at a portrait line is a cut too,
  so the bound does not count portraits);
- **no sliver**: the issue's "never a sliver of a body at the edge", a
  subject of the cut classes held by more than 1 % and less than 90 %;
- **direct**: direct selection's own rule, more than 1 % and less than 99 %,
  and its slide's subject held by 99 % (``NoSlicedBody``, ``HoldsMain``);

and, beside the metric's own "not empty" (half of an object held), the
stricter "a subject whole": each crop holds some outlined object over 0.5 %
of the frame by at least 90 % (a slide is about something, as
``HoldsMain`` asks; without it the metric accepts two crops of the halves
of an umbrella).  ``--by-content`` asks more of "distinct": two crops
holding whole the same set of outlined objects are one framing however
little they overlap (two crops of one knife block, shifted until their IoU
falls to 0.6), so a set is a wide view and zooms, or slides of other things.

The search is over up to ``--max-candidates`` clean crops per photo, evenly
subsampled where there are more (which can only lower the count found); a
finer ``--step`` or more candidates show how far the count is from settled.

No detector, no saliency: perfect knowledge of every outline, so a strategy
that keeps a reading's rule cannot write more clean distinct crops than its
bound.  The search is exact on the grid (a set of three is a triangle of
the graph of compatible crops).  ``--scoreboard`` names a scoreboard JSON
(``benchmarks/scoreboard.py --json``) to set each photo's bound beside the
crops the product wrote in the ``coco-multi k=3`` row.

It also reports the floor of *empty* on the photos with fewer than two
prominent objects (the scoreboard's "45 other photos"): a photo with no
outlined object over 0.5 % of the frame makes every crop of it empty.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from bench_featured_bound import candidate_boxes as featured_candidates
from bench_featured_bound import held
from multicrop.crop.direct.rules import NoSlicedBody
from multicrop.crop.direct.settings import PoolConfig
from multicrop.datasets.outlines import load_outlines
from multicrop.evaluation.subjects.metrics import SubjectRules
from multicrop.geometry import Box, iou_matrix
from multicrop.ratios import parse_ratios


def candidate_boxes(W: int, H: int, ratios, min_long: float, step: float) -> np.ndarray:
    """Integer ``(x0, y0, x1, y1)`` of every crop of ``ratios`` whose long side is at least ``min_long`` pixels."""
    B = featured_candidates(W, H, ratios, 1.0, step)
    return B[np.maximum(B[:, 2] - B[:, 0], B[:, 3] - B[:, 1]) >= min_long]


def clean_crops(masks: np.ndarray, categories, crowd, B: np.ndarray, *, rules: SubjectRules,
                lo: float, hi: float, inclusive: bool, whole: float | None = None,
                shares_held: np.ndarray | None = None) -> np.ndarray:
    """Which boxes of ``B`` slice no subject of the cut classes (held in ``[lo, hi]``, or ``(lo, hi)`` when
    not ``inclusive``) and are not empty by the benchmark's rule; with ``whole``, each also holds some
    outlined object over ``rules.object_min`` of the frame by at least ``whole``: a slide about something.
    ``shares_held``: :func:`held` of ``masks`` and ``B`` where already computed."""
    n, H, W = masks.shape
    shares = masks.reshape(n, -1).mean(axis=1)
    s = held(masks, B) if shares_held is None else shares_held
    cut_ids = set(rules.cut_ids)
    ok = np.ones(len(B), bool)
    for j in range(n):
        if crowd[j] or categories[j] not in cut_ids or not rules.subject_min <= shares[j] <= rules.subject_max:
            continue
        ok &= ~(((s[j] >= lo) & (s[j] <= hi)) if inclusive else ((s[j] > lo) & (s[j] < hi)))
    big = shares > rules.object_min
    need = rules.hold_min if whole is None else whole
    holds = (s[big] >= need).any(axis=0) if big.any() else np.zeros(len(B), bool)
    return ok & holds


def most_distinct(B: np.ndarray, iou: float, k: int, contents: np.ndarray | None = None) -> int:
    """The largest number of boxes, up to ``k`` (at most 3), with pairwise IoU at most ``iou``: exact.

    ``contents``, ``(len(B), n)`` bool: the objects each box holds whole; two boxes holding the same
    ones are then not distinct whatever their IoU (two framings of one knife block)."""
    if len(B) == 0:
        return 0
    if k <= 1:
        return 1
    boxes = [Box(float(x0), float(y0), float(x1 - x0), float(y1 - y0)) for x0, y0, x1, y1 in B]
    A = iou_matrix(boxes, boxes) <= iou + 1e-9
    if contents is not None:
        c = np.asarray(contents, np.float32)
        both = c @ c.T
        count = c.sum(axis=1)
        A &= ~((both == count[:, None]) & (both == count[None, :]))
    np.fill_diagonal(A, False)
    if not A.any():
        return 1
    if k == 2:
        return 2
    if k > 3:
        raise ValueError(f"--k: the exact search goes up to 3, got {k}")
    Af = A.astype(np.float32)
    for start in range(0, len(Af), 512):  # rows in chunks, so a photo with a triangle stops at the first
        paths = Af[start:start + 512] @ Af  # paths[i, j]: crops compatible with both i and j
        if bool((paths[A[start:start + 512]] > 0).any()):
            return 3
    return 2


def readings_of(rules: SubjectRules, d: NoSlicedBody) -> dict[str, tuple[float, float, bool, float | None]]:
    """Each reading: the held shares of a cut-class subject it calls slicing (``lo``, ``hi``, bounds
    included or not) and the share of some object a crop must hold (None: the metric's "not empty")."""
    return {"metric": (rules.slice_min, rules.slice_max, True, None),
            "metric, a subject whole": (rules.slice_min, rules.slice_max, True, rules.whole),
            "no sliver, a subject whole": (d.sliver, rules.whole, False, rules.whole),
            "direct": (d.sliver, d.whole, False, d.whole)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path, help="a YOLO-segmentation folder or a COCO instances JSON")
    ap.add_argument("--ratio", default="2:3,3:2")
    ap.add_argument("--k", type=int, default=3, help="crops asked for (2 or 3)")
    ap.add_argument("--iou", type=float, default=0.6, help="distinct: pairwise IoU at most this")
    ap.add_argument("--step", type=float, default=0.02, help="grid step, share of the long side")
    ap.add_argument("--max-candidates", type=int, default=4000,
                    help="clean crops kept per photo for the exact search (evenly subsampled)")
    ap.add_argument("--scoreboard", type=Path, default=None, help="a scoreboard JSON to compare with")
    ap.add_argument("--by-content", action="store_true",
                    help="distinct also means holding a different set of objects whole (not two framings of "
                         "the same things)")
    args = ap.parse_args()
    if args.k not in (1, 2, 3):
        ap.error(f"--k: the exact search goes up to 3, got {args.k}")
    rules, d = SubjectRules(), NoSlicedBody()
    ratios = parse_ratios(args.ratio)
    min_share = PoolConfig().min_crop_share
    readings = readings_of(rules, d)
    wrote = {}
    if args.scoreboard:
        rows = json.loads(args.scoreboard.read_text())["photos"]
        wrote = {pid: v["crops"] for pid, v in rows["coco-multi k=3"].items()}
    bounds: dict[str, dict[str, int]] = {name: {} for name in readings}
    floor_photos = floor_none = 0
    for photo in load_outlines(args.source):
        masks = np.asarray(photo.masks(), bool)
        n = len(masks)
        shares = masks.reshape(n, -1).mean(axis=1) if n else np.zeros(0)
        if int((shares >= rules.photo_object_min).sum()) < rules.photo_min_objects:
            floor_photos += 1
            floor_none += not bool((shares > rules.object_min).any())
            continue
        H, W = masks.shape[1:]
        B = candidate_boxes(W, H, ratios, min_share * max(W, H), args.step)
        crowd = [o.crowd for o in photo.objects]
        s = held(masks, B)
        big = shares > rules.object_min
        for name, (lo, hi, inclusive, whole) in readings.items():
            ok = np.flatnonzero(clean_crops(masks, photo.categories, crowd, B, rules=rules, lo=lo, hi=hi,
                                            inclusive=inclusive, whole=whole, shares_held=s))
            if len(ok) > args.max_candidates:
                ok = ok[np.linspace(0, len(ok) - 1, args.max_candidates).astype(int)]
            contents = (s[big][:, ok] >= rules.whole).T if args.by_content else None
            bounds[name][photo.id] = most_distinct(B[ok], args.iou, args.k, contents)
    print(f"{len(next(iter(bounds.values())))} multi-subject photos; crops of {args.ratio}, long side >= "
          f"{100 * min_share:g} % of the photo's, grid step {args.step:g}; distinct: IoU <= {args.iou:g}"
          f"{' and other objects held whole' if args.by_content else ''}; "
          f"k = {args.k}\n")
    print("| slicing means a subject held by | clean distinct crops per photo (best on the grid) | photos with fewer "
          "than k |")
    print("|---|---|---|")
    for name, (lo, hi, _, _) in readings.items():
        b = bounds[name]
        short = sum(v < args.k for v in b.values())
        print(f"| {100 * lo:g}-{100 * hi:g} % ({name}) | {np.mean(list(b.values())):.3f} | {short} of {len(b)} |")
    if wrote:
        b = bounds["no sliver, a subject whole"]
        both = [pid for pid in b if pid in wrote]
        print(f"\nthe product wrote {np.mean([wrote[p] for p in both]):.3f} crops per photo on these photos; "
              "photos where the count (no sliver, a subject whole) is above what it wrote:")
        for pid in both:
            if b[pid] > wrote[pid]:
                print(f"  {pid}: wrote {wrote[pid]}, found {b[pid]} (direct's rule: {bounds['direct'][pid]})")
    print(f"\nempty floor on the {floor_photos} other photos: {floor_none} have no outlined object over "
          f"{100 * rules.object_min:g} % of the frame, so each of their crops is empty")


if __name__ == "__main__":
    main()
