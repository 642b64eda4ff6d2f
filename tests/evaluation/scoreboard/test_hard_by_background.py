"""benchmarks/hard_by_background.py draws each hard scene's background as the generator does."""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

import numpy as np

from multicrop.datasets import synth
from multicrop.datasets.synth_backgrounds import BACKGROUNDS
from multicrop.geometry import Box

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import hard_by_background as hb  # noqa: E402


def test_the_background_drawn_again_is_the_one_the_scene_is_painted_on(monkeypatch):
    # each shipped background replaced by a flat colour of its own: the scene's corner shows which was drawn
    colours = {name: np.full((300, 400, 3), 20 * (i + 1), np.uint8) for i, name in enumerate(BACKGROUNDS)}
    # four backgrounds are subjects too: cut them out from the real photos first, so the process-wide cache of
    # cut-outs never holds one made from a flat colour (it did, and a later test got a 1x3 cut-out)
    for name in synth.SUBJECTS:
        synth.subject_cutout(name)
    real = synth.sample_rgb
    monkeypatch.setattr(synth, "sample_rgb", lambda name: colours[name] if name in colours else real(name))
    seen = set()
    for name in ("090717-N-4234E-473", "1_Las_vegas_strip", "Hockey_players", "a", "b", "c", "d", "e"):
        for seed in (0, 1):
            rng = np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])
            img = synth.render_scene(200, 150, [Box(150, 100, 40, 40)], rng, hard=True)
            drawn = hb.background_of(name, seed)
            assert abs(int(img[2, 2, 0]) - int(colours[drawn][0, 0, 0])) <= 1, (name, seed, drawn)
            seen.add(drawn)
    assert len(seen) >= 4  # the check tells the backgrounds apart
    assert set(hb.TEXTURES) < set(BACKGROUNDS)
