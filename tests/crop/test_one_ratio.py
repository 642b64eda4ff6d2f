"""``one_ratio``: which ratio's set of crops a photo gets (``crop.strategies.select_crops``)."""

from __future__ import annotations

from multicrop.crop import strategies
from multicrop.crop.config import CropConfig
from multicrop.crop.scoring.base import ScoredCrop
from multicrop.geometry import Box
from multicrop.ratios import Ratio

PORTRAIT, SQUARE, WIDE = Ratio(4, 5), Ratio(1, 1), Ratio(1.91, 1)


def _set(ratio: Ratio, n: int, cut: int, total: float) -> strategies._Selection:
    crops = tuple(ScoredCrop(Box(10 * i, 0, 10, 10), 1.0, {}, ratio) for i in range(n))
    return strategies._Selection(crops, None, None, total=total, cut=cut)


def _choose(sets: dict, monkeypatch) -> strategies._Selection:
    monkeypatch.setattr(strategies, "_select_direct", lambda c, shortlist=1: sets[c.config.ratios[0]])
    cfg = CropConfig(ratios="instagram", k=3)
    assert cfg.one_ratio and cfg.ratios == (PORTRAIT, SQUARE, WIDE)
    return strategies.select_crops(None, strategies.Candidates(None, None, cfg, Box(0, 0, 100, 100), 1.0), "x", None)


def test_a_slide_more_does_not_buy_a_slice(monkeypatch):
    # 1.91:1 gives two slides, one slicing a body no framing could hold whole; 4:5 one clean slide
    sets = {PORTRAIT: _set(PORTRAIT, 1, 0, 1.0), SQUARE: _set(SQUARE, 1, 0, 0.5), WIDE: _set(WIDE, 2, 1, 3.0)}
    got = _choose(sets, monkeypatch)
    assert got.crops[0].ratio == PORTRAIT and got.notes == ("one ratio for every crop: 4:5 (best of 4:5, 1:1, 1.91:1)",)
    # the same two slides with no slice: the second slide wins
    sets[WIDE] = _set(WIDE, 2, 0, 3.0)
    assert _choose(sets, monkeypatch).crops[0].ratio == WIDE
    # three slides with one slice still give two clean ones more than one: they win
    sets[WIDE] = _set(WIDE, 3, 1, 3.0)
    assert len(_choose(sets, monkeypatch).crops) == 3
    # equal counts and slices: the best total
    sets = {PORTRAIT: _set(PORTRAIT, 2, 0, 1.0), SQUARE: _set(SQUARE, 2, 0, 1.5), WIDE: _set(WIDE, 2, 0, 0.9)}
    assert _choose(sets, monkeypatch).crops[0].ratio == SQUARE


def test_a_set_that_met_the_hard_rules_beats_the_largest_part_of_a_subject(monkeypatch):
    from dataclasses import replace

    # 4:5 and 1.91:1 only frame the largest part of a subject no crop of theirs holds (direct-26); 1:1 frames it
    sets = {PORTRAIT: replace(_set(PORTRAIT, 1, 0, 0.9), unframed=True), SQUARE: _set(SQUARE, 1, 0, 0.1),
            WIDE: replace(_set(WIDE, 1, 0, 0.95), unframed=True)}
    assert _choose(sets, monkeypatch).crops[0].ratio == SQUARE
    # every ratio falls back: the one holding the most of the subject (its total)
    sets[SQUARE] = replace(_set(SQUARE, 1, 0, 0.5), unframed=True)
    assert _choose(sets, monkeypatch).crops[0].ratio == WIDE
