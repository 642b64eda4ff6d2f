"""The scoreboard every crop-wing change quotes: one table, each figure with its interval and its baseline.

    python benchmarks/scoreboard.py --cache /tmp/scoreboard-cache --threads 2
    python benchmarks/scoreboard.py --coco PHOTOS --carousel LABELS --cache /tmp/scoreboard-cache --threads 2

The first runs from the repository alone: carousel-synth and -hard on the
Carousel label geometry shipped with multicrop.  The coco section needs a
folder of photos with human outlines (``--coco``: a YOLO-segmentation folder
or a COCO instances JSON, e.g. COCO val2017's; the baseline was made on 100
such photos) and ``--carousel`` the real Carousel label files if they differ
from the shipped ones.

Crops coco-subjects (the multi-subject photos at k auto and k = 3, the others
at k auto), carousel-synth seed 0 (k auto and the labelled k) and
carousel-synth-hard seed 0 (the labelled k, direct and partition) with
``multicrop.crop_photo(..., analysis=)``; the saliency maps and detections
are cached in ``--cache`` (the subjects and every crop are made again on
each run).  Prints the table: each figure, its 95 % bootstrap interval over
photos, the baseline's value (``--baseline``, default the committed
``benchmarks/scoreboard_baseline.json``), the difference, a flag where the
value lies outside the baseline's interval (``up`` better, ``DOWN`` worse,
``moved`` for a figure with no better side) and issue 27's target.
``--write-baseline`` writes the run as the new baseline.  Exits 1 when a
figure is flagged DOWN (``--no-fail`` to always exit 0).  docs/scoreboard.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from multicrop.crop.config import CropConfig
from multicrop.crop.pipeline import pipeline_versions
from multicrop.evaluation.subjects import SUBJECTS_METRIC_VERSION
from multicrop.errors import InputFileError, InvalidParameterError
from multicrop.evaluation.scoreboard import SECTIONS, compare, read_scoreboard, render, run_scoreboard, to_json

HERE = Path(__file__).resolve().parent
DEFAULT_BASELINE = HERE / "scoreboard_baseline.json"


def _commit() -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(HERE), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return out + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coco", type=Path, help="coco-subjects: photos with human outlines (YOLO or COCO layout)")
    ap.add_argument("--carousel", type=Path, default=None,
                    help="real Carousel label files carousel-synth is built on (default: the shipped labels)")
    ap.add_argument("--cache", type=Path, default=None,
                    help="model outputs and rendered synthetic sets are kept here (default: none, everything cold)")
    ap.add_argument("--baseline", type=Path, default=DEFAULT_BASELINE, help="the scoreboard JSON to compare with")
    ap.add_argument("--write-baseline", action="store_true", help="write this run to --baseline")
    ap.add_argument("--only", default=None,
                    help=f"comma list of sections: {', '.join(SECTIONS)} (default: all; without --coco, synth,hard)")
    ap.add_argument("--json", type=Path, default=None, help="also write the run as JSON here")
    ap.add_argument("--threads", type=int, default=2, help="CPU cores: worker processes, one model thread each")
    ap.add_argument("--backgrounds", type=Path, default=None, help="photos for carousel-synth-hard's backgrounds")
    ap.add_argument("--limit", type=int, default=None, help="only the first N photos of each set (a quick look)")
    ap.add_argument("--seed", type=int, default=0,
                    help="carousel-synth and -hard seed (default 0; another seed is a held-out check: compared "
                         "with no baseline, never written as one)")
    ap.add_argument("--no-fail", action="store_true", help="exit 0 even when a figure is flagged DOWN")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    ap.add_argument("--set", dest="changes", action="append", default=[], metavar="KEY=VALUE",
                    help="try a setting in every row, e.g. selection.details.salient=0.5 (a JSON value; "
                         "repeatable; a run with changes is compared with the baseline but never written as one)")
    ap.add_argument("--head", type=Path, default=None,
                    help="rate the candidates with this embedding head too (multicrop judge fit; a LearnedScorer "
                         "over the composition scorer; never a baseline)")
    ap.add_argument("--head-weight", type=float, default=0.5, help="--head: the learned term's weight")
    ap.add_argument("--head-top", type=int, default=8, help="--head: boxes rated per scorer call")
    args = ap.parse_args(argv)

    if args.only is None:
        args.only = ",".join(s for s in SECTIONS if s != "coco" or args.coco is not None)
        if args.coco is None and not args.quiet:
            print("no --coco folder of outlined photos: running the synthetic sections only", file=sys.stderr)
    only = tuple(s.strip() for s in args.only.split(",") if s.strip())
    if "coco" in only and args.coco is None:
        ap.error("--coco is needed for the coco section (or leave it out with --only synth,hard)")
    changes = _changes(ap, args.changes)
    if changes and args.write_baseline:
        ap.error("--write-baseline with --set would make a baseline of settings that are not the defaults")
    if args.head is not None and args.write_baseline:
        ap.error("--write-baseline with --head would make a baseline of a scorer that is not the default")
    if args.seed != 0 and args.write_baseline:
        ap.error("--write-baseline with --seed: the baseline is seed 0")
    base = doc = None  # read before the run: a bad baseline fails in a second, not after the run
    if not args.write_baseline and args.seed == 0 and (args.baseline != DEFAULT_BASELINE or args.baseline.is_file()):
        try:
            doc = read_scoreboard(args.baseline)
        except (InvalidParameterError, InputFileError) as exc:
            ap.error(f"--baseline: {exc}")
        base = doc["photos"]
    learned = None if args.head is None else (args.head, args.head_weight, args.head_top)
    done = [0]

    def progress(photo: str) -> None:
        done[0] += 1
        if not args.quiet and done[0] % 25 == 0:
            print(f"  {done[0]} photos done", file=sys.stderr, flush=True)

    try:
        run = run_scoreboard(coco=args.coco, carousel=args.carousel, only=only, cache=args.cache, threads=args.threads,
                             backgrounds=args.backgrounds, limit=args.limit, progress=progress,
                             changes=changes, learned=learned, seed=args.seed)
    except InvalidParameterError as exc:
        ap.error(str(exc))
    verdicts = compare(run.photos, base)
    print(render(verdicts, seed=args.seed, coco=Path(args.coco).name if args.coco else "coco-subjects"))
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    n_photos = sum(len(v) for k, v in run.photos.items() if not k.endswith("failures"))
    print(f"\n{n_photos} photo-crops in {run.seconds:.0f} s on {run.workers} worker(s) x 1 thread, "
          f"{os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; model cache: "
          f"{run.hits} hits, {run.misses} runs ({args.cache or 'none'})")
    for row, fails in run.failures.items():
        for photo, why in sorted(fails.items()):
            print(f"failure: {row}: {photo}: {why}")
    if base is not None:
        print(f"baseline: {args.baseline}")
        was = doc.get("versions", {}).get("subjects-metric", "1")
        if was != SUBJECTS_METRIC_VERSION:
            print(f"note: the baseline's coco rows were counted with subjects metric {was}, this run with "
                  f"{SUBJECTS_METRIC_VERSION} (docs/subjects-benchmark.md): a difference there may be the metric's")
    meta = {"commit": _commit(), "made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "versions": {**pipeline_versions(CropConfig()), "subjects-metric": SUBJECTS_METRIC_VERSION},
            "config": CropConfig().to_dict(),
            "sections": list(only), "limit": args.limit, "seed": args.seed, "changes": {k.replace("__", "."): v for k, v in changes.items()},
            "learned": None if learned is None else {"head": str(args.head), "weight": args.head_weight,
                                                     "top": args.head_top},
            "timing": {"seconds": round(run.seconds, 1), "workers": run.workers, "cpus": os.cpu_count(),
                       "load_average": [round(x, 2) for x in load], "cache_hits": run.hits,
                       "cache_misses": run.misses}}
    text = to_json(verdicts, run.photos, boxes=run.boxes, failures=run.failures, meta=meta)
    if args.json is not None:
        args.json.write_text(text, encoding="utf-8")
    if args.write_baseline:
        if args.limit is not None:
            ap.error("--write-baseline with --limit would make a baseline of a few photos")
        args.baseline.write_text(text, encoding="utf-8")
        print(f"wrote the baseline {args.baseline}")
    down = [v for v in verdicts if v.flag == "DOWN"]
    return 1 if down and not args.no_fail else 0


def _changes(ap: argparse.ArgumentParser, items: list[str]) -> dict:
    """``--set`` items as ``CropConfig.set`` keys: ``a.b.c=1`` -> ``{"a__b__c": 1}`` (JSON values, else text)."""
    out = {}
    for item in items:
        key, eq, text = item.partition("=")
        if not eq or not key.strip():
            ap.error(f"--set takes KEY=VALUE, got {item!r}")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        out[key.strip().replace(".", "__")] = tuple(value) if isinstance(value, list) else value
    return out


if __name__ == "__main__":
    sys.exit(main())
