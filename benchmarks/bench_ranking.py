"""Crops judged by a panel: seconds with and without the panel, calls per photo, how often it changes a crop.

    nice -n 5 python benchmarks/bench_ranking.py [--panel PANEL.toml] [--shortlist 4] [--repeat 3]

Runs ``crop_photo`` (strategy ``direct``, ``k`` auto, the default u2netp
saliency and faces) on the bundled example photo (3600 x 1400) and the shipped
sample photos, once with ``shortlist=1`` and no panel and once with
``shortlist=N`` followed by :func:`multicrop.ranking.rank_crops` (default: the
offline ``measured`` panel, ``panel.measured.toml``; a fresh temporary store
per photo, so every call is made).  Prints, per photo, the median seconds of
each, the calls made and how many crops the panel changed (chose an
alternative other than the composition scorer's first).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from multicrop.crop.config import CropConfig
from multicrop.crop.pipeline import crop_photo
from multicrop.datasets.examples import example_photo
from multicrop.datasets.photos import sample_photo
from multicrop.ranking import measured_panel_path, rank_crops

PHOTOS = ("astronaut", "chelsea", "coffee", "motorcycle", "rocket", "camera")


def _median_seconds(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--panel", type=Path, default=None, help="panel TOML (default: the shipped measured panel)")
    ap.add_argument("--shortlist", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    panel = args.panel or measured_panel_path()
    cfg = CropConfig(strategy="direct", k="auto")
    with tempfile.TemporaryDirectory() as tmp:
        inputs = [("example", example_photo(Path(tmp) / "example.jpg"))]
        inputs += [(name, sample_photo(name)) for name in PHOTOS]
        crop_photo(inputs[0][1], cfg)  # warm the saliency model
        print(f"panel {panel.name}, shortlist {args.shortlist}, median of {args.repeat}")
        print(f"{'photo':<16} {'size':>10} {'k':>2} {'plain s':>8} {'judged s':>8} {'judge s':>8} {'alts':>4} "
              f"{'calls':>5} {'changed':>7}")
        tot = {"k": 0, "changed": 0, "calls": 0, "plain": 0.0, "judged": 0.0}
        for name, src in inputs:
            plain_s, plain = _median_seconds(lambda: crop_photo(src, cfg), args.repeat)
            judged_s, ranked = _median_seconds(
                lambda: rank_crops(crop_photo(src, cfg, shortlist=args.shortlist), panel), args.repeat)
            r = ranked.ranking
            assert [c.box for c in plain.crops] == [c.box for c in
                                                    crop_photo(src, cfg, shortlist=args.shortlist).crops]
            size = f"{ranked.size[0]}x{ranked.size[1]}"
            print(f"{name:<16} {size:>10} {len(ranked.crops):>2} {plain_s:>8.2f} {judged_s:>8.2f} "
                  f"{ranked.timings['judge']:>8.2f} {r['alternatives']:>4} {r['calls_made']:>5} "
                  f"{r['changed']:>3} of {len(r['crops'])}")
            tot["k"] += len(r["crops"])
            tot["changed"] += r["changed"]
            tot["calls"] += r["calls_made"]
            tot["plain"] += plain_s
            tot["judged"] += judged_s
        n = len(inputs)
        print(f"\n{n} photos: {tot['calls'] / n:.1f} calls per photo; the panel changed {tot['changed']} of "
              f"{tot['k']} crops; {tot['plain'] / n:.2f} s per photo without the panel, "
              f"{tot['judged'] / n:.2f} s with it")


if __name__ == "__main__":
    main()
