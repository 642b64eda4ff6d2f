"""The pool of direct selection: the windows it makes are the windows of every size it keeps."""

from __future__ import annotations

import dataclasses

import pytest

from multicrop.crop.candidates import corner_key, grid_anchors, sliding_windows
from multicrop.crop.config import CandidateConfig, SelectionConfig
from multicrop.crop.direct.pool import direct_pool, min_long_side
from multicrop.geometry import Box
from multicrop.ratios import Ratio


def _every_window_filtered(bounds, ratio, pool, candidates, min_side, scale, max_area):
    """The pool's windows made the long way: every window of every scale, then the size filter."""
    grid = dataclasses.replace(candidates, window_stride=pool.window_stride, window_scales=pool.window_scales)
    min_long = min_long_side(bounds, ratio, pool, scale)
    out, seen = [], set()
    for b in sliding_windows(bounds, ratio, config=grid) + grid_anchors(bounds, ratio, config=candidates):
        if (min(b.w, b.h) < min_side - 1e-6 or max(b.w, b.h) < min_long - 1e-6
                or (max_area is not None and b.w * b.h > max_area)):
            continue
        if (key := corner_key(b, 1)) not in seen:
            seen.add(key)
            out.append(b)
    return out


@pytest.mark.parametrize(("bounds", "min_side", "scale", "max_area"), [
    (Box(0, 0, 1024, 398), 64, 5.4, None),       # a 12 MP panorama: half the window sizes are too small
    (Box(0, 0, 640, 480), 64, 1.0, None),        # a small photo: the platform rule is off
    (Box(0, 0, 683, 1024), 300, 4.0, None),      # a large minimum side
    (Box(0, 0, 1024, 683), 64, 6.0, 120_000.0),  # an area limit, as the close-ups have
])
def test_the_pool_makes_only_the_windows_it_keeps(bounds, min_side, scale, max_area):
    pool, candidates = SelectionConfig().pool, CandidateConfig()
    ratios = (Ratio(2, 3), Ratio(3, 2), Ratio(1, 1))
    got = direct_pool(bounds, [], ratios, pool, candidates, min_side, scale=scale, max_area=max_area)
    want = [(b, r) for r in ratios for b in _every_window_filtered(bounds, r, pool, candidates, min_side, scale,
                                                                     max_area)]
    assert got == want and got                    # the same candidates in the same order
    smallest = min(max(b.w, b.h) for b, _ in got)
    assert smallest >= min(min_long_side(bounds, r, pool, scale) for r in ratios) - 1e-6
