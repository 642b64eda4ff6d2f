"""carousel-synth-hard's kIoU@0.5 split by the photo each scene is painted on.

    python benchmarks/hard_by_background.py [SCOREBOARD.json] [--seed 0]

The hard set built from the repository alone paints its cut-outs on a random
window of one of :data:`multicrop.datasets.synth_backgrounds.BACKGROUNDS`.
Four of those are textures (the Hubble deep field, grass, gravel, brick); the
other four are photos of a subject filling the frame (the cat Chelsea's face,
a motorcycle, a cup of coffee, a rocket), which the detectors rightly find and
the labels do not name.  The scene's background is the first draw of its
random generator (``make_synth``: seeded by the seed and the scene's name;
``sharp_background`` draws the photo first); this script draws it again and
adds up each row's matched IoU over labelled boxes by background.  Reads the
committed baseline by default.
"""

from __future__ import annotations

import argparse
import json
import zlib
from collections import defaultdict
from pathlib import Path

import numpy as np

from multicrop.datasets.synth_backgrounds import BACKGROUNDS

TEXTURES = ("hubble_deep_field", "grass", "gravel", "brick")
ROWS = ("hard direct k=given", "hard partition k=given")


def background_of(name: str, seed: int) -> str:
    """The background photo of the hard scene ``name`` built with ``seed`` and the shipped backgrounds."""
    rng = np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])
    return BACKGROUNDS[int(rng.integers(len(BACKGROUNDS)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", nargs="?", type=Path, default=Path(__file__).parent / "scoreboard_baseline.json")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    run = json.loads(args.run.read_text(encoding="utf-8"))
    rows = [r for r in ROWS if r in run["photos"]] or [f"{r} seed{args.seed}" for r in ROWS]
    print("| row | background | scenes | kIoU@0.5 |\n|---|---|---|---|")
    for row in rows:
        sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
        for name, c in run["photos"].get(row, {}).items():
            for key in (background_of(name, args.seed), "textures" if background_of(name, args.seed) in TEXTURES
                        else "photos of a subject"):
                s = sums[key]
                s[0] += c["kiou_50"]
                s[1] += c["gt"]
                s[2] += 1
        for key in sorted(sums, key=lambda k: (k not in ("textures", "photos of a subject"), k)):
            s = sums[key]
            print(f"| {row} | {key} | {int(s[2])} | {s[0] / max(s[1], 1):.3f} |")


if __name__ == "__main__":
    main()
