"""Real-photo subjects benchmark: our strategies and the peers, and how much each rule matters.

    python benchmarks/bench_subjects.py PHOTOS_WITH_OUTLINES --out /tmp/subjects-bench

Crops every photo with at least two objects of >= 3 % of the frame once per
method (``direct`` at k=auto, ``partition`` at k=2, and the single-crop
peers ``smartcrop`` and ``vips`` when installed), writes the report of
``multicrop bench subjects`` (report.md, summary.json, photos.csv and the
worst-photo grids) to OUT, prints the table, then the same crops counted
under nearby rules (:func:`multicrop.evaluation.subjects.remeasure`, no
photo cropped again): street objects as cut classes, "whole" meaning 100 %
of the pixels instead of 90 %, and every photo instead of the filtered ones.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
from pathlib import Path

from multicrop.datasets.outlines import load_outlines
from multicrop.evaluation.subjects import methods_for, remeasure, run_subjects
from multicrop.detectors.coco import STREET_IDS
from multicrop.evaluation.subjects.report import summary_table, write_report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path, help="a YOLO-segmentation folder or a COCO instances JSON")
    ap.add_argument("--out", type=Path, default=Path("/tmp/subjects-bench"))
    ap.add_argument("--ratio", default="2:3,3:2")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--no-peers", action="store_true", help="leave smartcrop and vips out")
    args = ap.parse_args()

    peers = () if args.no_peers else tuple(
        p for p, mod in (("smartcrop", "smartcrop"), ("vips", "pyvips")) if importlib.util.find_spec(mod))
    methods = methods_for(strategies=("direct", "partition"), ks=("auto", 2), peers=peers, ratios=args.ratio)
    outlines = load_outlines(args.source)
    run = run_subjects(outlines, methods, all_photos=True, limit=args.limit)
    counted = dataclasses.replace(run, all_photos=False)
    write_report(counted, args.out)
    print(summary_table(counted))
    rules = counted.rules
    variants = {
        "street objects (10-15) as cut classes": dataclasses.replace(rules, cut_ids=rules.cut_ids + STREET_IDS),
        "whole = 100 % of the pixels": dataclasses.replace(rules, whole=1.0),
    }
    for title, r in variants.items():
        print(f"\n{title}:")
        print(summary_table(remeasure(counted, r)))
    print("\nevery photo:")
    print(summary_table(run))
    print(f"\nreport: {args.out / 'report.md'}")


if __name__ == "__main__":
    main()
