"""carousel-synth benchmark: build the synthetic set, run every method, print the kIoU table.

    python benchmarks/bench_carousel.py --labels CAROUSEL_LABELS --out /tmp/carousel-bench --workers 2

Each method's report (results.jsonl, table.csv/json, report.html) goes to
``OUT/rep_<method>``; reruns resume.  The table has the rows all / ok /
failures per method, with seconds per image (per worker process) and the wall
time of each method's run, then the share of images given exactly k crops
(k-exact, the metadata's ``subcrops``), the mean absolute error of the crop
count, the per-subject orientation accuracy against the labels and the
share of predicted crops cutting a salient blob (blob-cut, the evaluation's
own U^2-Netp definition in :mod:`multicrop.evaluation.carousel.blobs`; maps
cached once per image in ``OUT/saliency``, shared by every method and variant).

    python benchmarks/bench_carousel.py --out /tmp/w9 --hard --backgrounds BG_DIR --methods partition,direct

(``benchmarks/fetch_backgrounds.sh BG_DIR`` fetches sharp photographs for the hard variant.)
Seconds per image are measured on whatever else the machine runs: quote them with the load.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from multicrop.datasets.synth import make_synth
from multicrop.evaluation.carousel.evaluate import evaluate_carousel
from multicrop.evaluation.carousel.methods import METHODS
from multicrop.evaluation.carousel.report import write_report

DEFAULT_METHODS = ("partition", "topk", "direct", "direct-auto", "direct-measured", "smartcrop", "vips", "slices")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/carousel-bench"))
    ap.add_argument("--labels", type=Path, default=None,
                    help="real Carousel label directory (dataset/, hard_failures.txt); default: the label "
                         "geometry shipped with multicrop")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-side", type=int, default=1600)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--methods", default=",".join(DEFAULT_METHODS), help=f"comma list of {', '.join(METHODS.names())}")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--hard", action="store_true", help="carousel-synth-hard (off-centre, occluded, sharp backgrounds)")
    ap.add_argument("--backgrounds", type=Path, default=None, help="with --hard: a directory of background photos")
    args = ap.parse_args()

    data = args.out / f"synth{'-hard' if args.hard else ''}-seed{args.seed}"
    if not (data / "synth_info.json").is_file():
        t0 = time.perf_counter()
        s = make_synth(args.labels, data, seed=args.seed, max_side=args.max_side, hard=args.hard,
                       backgrounds=args.backgrounds)
        print(f"built {s.n_images} images ({s.n_boxes} boxes) in {time.perf_counter() - t0:.1f} s -> {data}")
    header = (f"{'method':<14} {'subset':<9} {'kIoU@.5:.95':>11} {'kIoU@.5':>8} {'img-mean@.5':>11} {'images':>6} "
              f"{'fail':>5} {'err':>4} {'s/img':>6} {'wall s':>7} {'k-exact':>7} {'k-MAE':>6} {'orient':>6} "
              f"{'blob_cut':>8}")
    lines = []
    for name in args.methods.split(","):
        t0 = time.perf_counter()
        rep = args.out / f"rep{'-hard' if args.hard else ''}_{name}"
        ev = evaluate_carousel(data, name, out_dir=rep, workers=args.workers, limit=args.limit,
                               saliency_cache=args.out / "saliency")
        wall = time.perf_counter() - t0
        write_report(ev, rep)
        for r in ev.rows:
            blob = "-" if r.blob_cut is None else f"{r.blob_cut:.3f}"
            lines.append(f"{r.method:<14} {r.subset:<9} {r.kiou_50_95:>11.3f} {r.kiou_50:>8.3f} {r.image_mean_50:>11.3f} "
                         f"{r.n_images:>6} {r.failures:>5} {r.errors:>4} {r.seconds_per_image:>6.2f} {wall:>7.1f} "
                         f"{r.k_exact:>7.3f} {r.k_mae:>6.2f} {r.orientation_accuracy:>6.3f} {blob:>8}")
        print(f"{name}: done in {wall:.1f} s ({ev.n_resumed} resumed; {ev.workers} workers x {ev.threads} threads)", flush=True)
    load = ", load average %.1f %.1f %.1f" % os.getloadavg() if hasattr(os, "getloadavg") else ""
    print(f"\ncarousel-synth{'-hard' if args.hard else ''} seed {args.seed}, {os.cpu_count()} CPUs{load}, "
          f"{args.workers} workers")
    print(header)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
