"""Does the learned framing term help cropping?  The head's score of candidate crops, measured.

    python benchmarks/bench_learned.py PHOTOS_WITH_OUTLINES --head HEAD.json --limit 20 --shortlist 6

For each photo with at least two prominent outlined objects: ``crop_photo``
(``direct``, k auto, ratios 2:3,3:2) with a shortlist per crop; every
alternative is scored by the head (:func:`multicrop.crop.scoring.learned.framing_scores`,
``threads`` onnxruntime threads, cut from the analysis copy, long side 1600).

Prints
1. over all alternatives, the Spearman rho of the head's score with
   "slices a subject", "holds no subject", and the built-in score;
2. as a re-ranker, per crop the alternative the head likes best vs the
   built-in choice (the first alternative; an alternative whose IoU with a
   crop already kept is above 0.5 is passed over): person-cut, subject-cut,
   empty, covered, featured for both;
3. seconds per photo of ``framing_scores`` at N = 32, 64, 128 boxes.

The head is the user's (``multicrop judge fit``); a head fitted on PARA or
AVA is research-only and must stay out of the repository.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from multicrop.crop.config import CropConfig
from multicrop.crop.pipeline import crop_photo
from multicrop.crop.scoring.learned import framing_scores
from multicrop.datasets.outlines import load_outlines
from multicrop.embeddings import EMBEDDING
from multicrop.evaluation.subjects.metrics import SubjectRules, measure_photo, summarise
from multicrop.geometry import Box, iou
from multicrop.io import load_image
from multicrop.judges.heads import load_head
from multicrop.stats import spearman


def _rho(a, b) -> str:
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.std() == 0 or b.std() == 0:
        return "n/a"
    r = spearman(a, b)
    return f"{float(getattr(r, 'estimate', r)):+.3f}"


def _pick(shortlists, key) -> list[Box]:
    kept: list[Box] = []
    for alts in shortlists:
        order = sorted(range(len(alts)), key=lambda i: -key(alts, i))
        for i in order:
            if all(iou(alts[i].box, b) <= 0.5 for b in kept):
                kept.append(alts[i].box)
                break
        else:
            kept.append(alts[0].box)
    return kept


def _row(name, s) -> str:
    return (f"{name:<10} photos {s.photos:3d} crops {s.crops:3d}  person-cut {s.person_cut.share:6.1%}  "
            f"subject-cut {s.subject_cut.share:6.1%}  empty {s.empty.share:6.1%}  covered {s.covered.share:6.1%}  "
            f"featured {s.featured.share:6.1%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path)
    ap.add_argument("--head", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=20, help="photos cropped (default 20)")
    ap.add_argument("--shortlist", type=int, default=6)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    head = load_head(args.head, embedding=EMBEDDING.id)
    rules = SubjectRules()
    cfg = CropConfig(strategy="direct", k="auto", ratios="2:3,3:2")
    cut, empty, learned, builtin = [], [], [], []
    base_m, head_m, timing = [], [], []
    n = 0
    for photo in load_outlines(args.source).photos:
        if n >= args.limit:
            break
        masks, cats = photo.masks(), photo.categories
        crowd = tuple(o.crowd for o in photo.objects)
        if not measure_photo(masks, cats, (), rules=rules, crowd=crowd).qualifies:
            continue
        n += 1
        res = crop_photo(photo.path, cfg, shortlist=args.shortlist, threads=args.threads)
        loaded = load_image(photo.path)
        image = loaded.analysis
        f = image.shape[1] / loaded.size[0]
        alts = [a for sl in res.shortlists for a in sl]
        scores = framing_scores(image, [Box(a.box.x * f, a.box.y * f, a.box.w * f, a.box.h * f) for a in alts], head,
                                threads=args.threads)
        by_box = {id(a): s for a, s in zip(alts, scores)}
        for a in alts:
            v = measure_photo(masks, cats, (a.box,), rules=rules, crowd=crowd).crops[0]
            cut.append(v.subject_cut or v.person_cut); empty.append(v.empty)
            learned.append(by_box[id(a)]); builtin.append(a.score)
        base = _pick(res.shortlists, lambda al, i: -i)
        mine = _pick(res.shortlists, lambda al, i: by_box[id(al[i])])
        base_m.append(measure_photo(masks, cats, base, rules=rules, crowd=crowd))
        head_m.append(measure_photo(masks, cats, mine, rules=rules, crowd=crowd))
        if n <= 3:
            rng = np.random.default_rng(n)
            h, w = image.shape[:2]
            for N in (32, 64, 128):
                ws = rng.uniform(0.3, 1.0, N) * w
                hs = rng.uniform(0.3, 1.0, N) * h
                bx = [Box(float(rng.uniform(0, w - a)), float(rng.uniform(0, h - b)), float(a), float(b))
                      for a, b in zip(ws, hs)]
                t0 = time.perf_counter()
                framing_scores(image, bx, head, threads=args.threads)
                timing.append((N, time.perf_counter() - t0))
        print(f"{photo.id}: {len(alts)} alternatives", flush=True)

    print(f"\n{len(learned)} alternatives of {n} photos; Spearman rho of the head's score with")
    print(f"  slices a subject: {_rho(learned, cut)}   holds no subject: {_rho(learned, empty)}   "
          f"built-in score: {_rho(learned, builtin)}")
    print(f"  (built-in score with slices: {_rho(builtin, cut)}, with empty: {_rho(builtin, empty)})")
    print(f"  bad share: {np.mean(cut):.1%} slice, {np.mean(empty):.1%} empty of all alternatives")
    print("\nre-ranking each crop's shortlist:")
    print(_row("built-in", summarise(base_m)))
    print(_row("head", summarise(head_m)))
    changed = sum(b.box != h.box for bm, hm in zip(base_m, head_m) for b, h in zip(bm.crops, hm.crops))
    print(f"crops the head chose differently: {changed} of {sum(len(m.crops) for m in base_m)}")
    print(f"\nframing_scores seconds per photo ({args.threads} threads, analysis copy):")
    for N in (32, 64, 128):
        ts = [t for m, t in timing if m == N]
        if ts:
            print(f"  N = {N:3d}: {np.mean(ts):.2f} s  ({1000 * np.mean(ts) / N:.0f} ms per box)")


if __name__ == "__main__":
    main()
