"""rank_crops keeps the crops of a photo distinct: a shortlist holding another chosen crop's box."""

from __future__ import annotations

from dataclasses import replace

import pytest

from multicrop.crop.scoring import ScoredCrop
from multicrop.geometry import Box, iou
from multicrop.ratios import Ratio
from multicrop.ranking import rank_crops

from .conftest import SHARP, SPOILED


def _two_crops(result, first, second):
    """``result`` with two crops whose shortlists are the given (box, composition score) pairs."""
    lists = tuple(tuple(ScoredCrop(b, s, {}, Ratio(1, 1)) for b, s in alts) for alts in (first, second))
    return replace(result, crops=tuple(alts[0] for alts in lists), shortlists=lists)


def test_a_later_crop_does_not_take_a_kept_crops_box(base_result, measured_panel):
    # crop 1 is the sharp copy; crop 2's shortlist holds the sharp copy too, and the panel prefers it
    assert base_result.config.nms_iou == 0.3
    res = _two_crops(base_result, [(SHARP, 3.0)], [(SPOILED, 2.0), (SHARP, 1.0)])
    ranked = rank_crops(res, measured_panel)
    _, second = ranked.ranking["crops"]
    scores = [a["panel_score"] for a in second["alternatives"]]
    assert scores[1] > scores[0]  # the panel would take the sharp copy ...
    assert second["chosen"] == 0  # ... but crop 1 already holds it
    assert [c.box for c in ranked.crops] == [SHARP, SPOILED] and ranked.ranking["changed"] == 0


def test_a_preferred_box_clear_of_the_kept_crops_is_taken(base_result, measured_panel):
    res = _two_crops(base_result, [(SPOILED, 3.0)], [(Box(0, 0, 200, 200), 2.0), (SHARP, 1.0)])
    ranked = rank_crops(res, measured_panel)
    # Box(0, 0, 200, 200) overlaps crop 1 (IoU 0.61): passed over in any case; the sharp copy is clear
    assert [c.box for c in ranked.crops] == [SPOILED, SHARP] and ranked.ranking["crops"][1]["chosen"] == 1


def test_when_every_alternative_overlaps_a_kept_crop_the_first_stays(base_result, measured_panel):
    near = Box(240, 0, 256, 256)
    assert iou(near, SHARP) > 0.3
    res = _two_crops(base_result, [(SHARP, 3.0)], [(near, 2.0), (SHARP, 1.0)])
    ranked = rank_crops(res, measured_panel)
    assert ranked.ranking["crops"][1]["chosen"] == 0 and ranked.crops[1].box == near


@pytest.mark.parametrize(("shortlist", "top", "want"), [(None, None, (2, None)), (4, 1, (4, 1))])
def test_the_record_states_the_shortlist_and_top(spoiled_first, measured_panel, shortlist, top, want):
    r = rank_crops(spoiled_first, measured_panel, shortlist=shortlist, top=top).ranking
    assert (r["shortlist"], r["top"]) == want
    assert r["alternatives"] == (top or 2)
