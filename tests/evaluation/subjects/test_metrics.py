"""The subject metrics on small hand-made masks, every expected count worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multicrop.errors import InvalidParameterError
from multicrop.evaluation.subjects.metrics import (
    SubjectRules,
    Tally,
    held_shares,
    measure_photo,
    summarise,
)
from multicrop.geometry import Box

PERSON, CAR, TRAFFIC_LIGHT, DOG, TABLE = 1, 3, 10, 18, 67


def _frame(h, w, *rects):
    """Masks of rectangles ``(y0, y1, x0, x1)`` on an ``h x w`` frame."""
    masks = np.zeros((len(rects), h, w), bool)
    for m, (y0, y1, x0, x1) in zip(masks, rects):
        m[y0:y1, x0:x1] = True
    return masks


def test_a_crop_holding_half_a_person_slices_it():
    # 20x20 frame, a 10x10 person: 25 % of the frame, a prominent subject.
    masks = _frame(20, 20, (5, 15, 5, 15))
    m = measure_photo(masks, (PERSON,), [Box(0, 0, 10, 20)])  # holds columns 5..9: 50 of 100 pixels
    assert m.crops[0].person_cut and m.crops[0].subject_cut and not m.crops[0].empty
    assert m.crops[0].sliced == (0,)
    assert (m.person_cut, m.subject_cut, m.empty) == (1, 1, 0)
    assert m.objects[0].held == (0.5,) and m.objects[0].share == 0.25
    assert (m.n_prominent, m.covered, m.featured) == (1, 0, 0)


def test_whole_frame_covers_but_does_not_feature():
    masks = _frame(20, 20, (5, 15, 5, 15))
    m = measure_photo(masks, (PERSON,), [Box(0, 0, 20, 20)])
    assert (m.person_cut, m.empty, m.covered, m.featured) == (0, 0, 1, 0)
    # a 15x16 crop is 60 % of the frame: the largest that still features (zoom_max 0.6 inclusive)
    m = measure_photo(masks, (PERSON,), [Box(0, 0, 15, 16)])
    assert m.crops[0].share == pytest.approx(0.6) and (m.covered, m.featured) == (1, 1)
    m = measure_photo(masks, (PERSON,), [Box(0, 0, 16, 16)])  # 64 %
    assert (m.covered, m.featured) == (1, 0)


@pytest.mark.parametrize("columns, cut, whole", [
    (2, False, False),   # 10 %: a sliver, not counted as a cut
    (3, True, False),    # 15 %: the lower bound is a cut
    (17, True, False),   # 85 %: the upper bound is a cut
    (18, False, True),   # 90 %: held whole
])
def test_slice_bounds(columns, cut, whole):
    # 10x100 frame, a person of 20 columns (20 % of the frame): each column is 5 % of it.
    masks = _frame(10, 100, (0, 10, 0, 20))
    m = measure_photo(masks, (PERSON,), [Box(0, 0, columns, 10)])
    assert m.objects[0].held[0] == pytest.approx(columns / 20)
    assert (m.person_cut == 1, m.covered == 1) == (cut, whole)


def test_a_person_cut_only_by_the_bottom_edge_is_a_portrait_not_a_cut():
    # 40x40 frame, a standing person 30 rows x 10 columns (300 px, 18.75 %): subject, prominent.
    masks = _frame(40, 40, (5, 35, 15, 25))
    crops = [Box(10, 0, 20, 20),   # head to the middle: held 15/30, only the bottom edge crosses it
             Box(10, 15, 20, 25),  # the legs: the top edge crosses it (a person without a head)
             Box(20, 0, 20, 20),   # the top half's right side: 75 of 300 px beside the crop (held 25 %)
             Box(16, 0, 20, 20)]   # the top half less one column at the left: 15 of 300 px (5 %) beside
    m = measure_photo(masks, (PERSON,), crops)
    assert [c.portraits for c in m.crops] == [(0,), (), (), ()]
    assert [c.portrait for c in m.crops] == [True, False, False, False]
    assert [c.person_cut for c in m.crops] == [False, True, True, True]
    assert [c.subject_cut for c in m.crops] == [False, True, True, True]
    assert [m.objects[0].held[j] for j in range(4)] == pytest.approx([0.5, 2 / 3, 0.25, 0.45])
    assert [c.empty for c in m.crops] == [False, False, True, True]  # the last two hold under half of anything
    assert (m.person_cut, m.portrait, m.person_cut_v1) == (3, 1, 4)
    # with portrait_side 6 %, the column beside the crop (15 of 300 px) is allowed: a portrait
    m = measure_photo(masks, (PERSON,), [Box(16, 0, 20, 20)], rules=SubjectRules(portrait_side=0.06))
    assert m.crops[0].portrait and m.person_cut == 0
    # a chest-up crop holding under half of the person is no empty crop: the portrait holds them
    m = measure_photo(masks, (PERSON,), [Box(10, 0, 20, 15)])
    assert m.objects[0].held[0] == pytest.approx(1 / 3) and m.crops[0].portrait and not m.crops[0].empty
    # a person filling most of the frame is no subject: held by a portrait, never a cut in either version
    big = _frame(40, 40, (0, 40, 4, 36))  # 80 % of the frame
    m = measure_photo(big, (PERSON,), [Box(4, 0, 32, 16)])
    assert m.crops[0].portrait and not m.crops[0].empty and (m.person_cut, m.person_cut_v1) == (0, 0)
    # only people: a dog cut the same way is a cut
    m = measure_photo(masks, (DOG,), [Box(10, 0, 20, 20)])
    assert (m.subject_cut, m.portrait) == (1, 0)


def test_a_portrait_of_one_person_that_slices_another_is_a_cut():
    # two people side by side; the crop takes the left one's top half and the right one's top-left quarter
    masks = _frame(40, 60, (5, 35, 5, 15), (5, 35, 30, 40))
    m = measure_photo(masks, (PERSON, PERSON), [Box(0, 0, 35, 20)])
    assert m.crops[0].portraits == (0,) and m.crops[0].sliced == (1,)
    assert m.crops[0].person_cut and not m.crops[0].portrait and m.portrait == 0


def test_empty_crops_hold_half_of_no_object_over_half_a_percent():
    # 40x50 frame (2000 px): a table (any class counts) of 400 px, a cup of 9 px (0.45 %: too small).
    masks = _frame(40, 50, (0, 20, 0, 20), (30, 33, 40, 43))
    cats = (TABLE, 47)
    m = measure_photo(masks, cats, [Box(0, 0, 10, 20), Box(0, 0, 9, 20), Box(38, 28, 8, 8), Box(20, 20, 10, 10)])
    # 200/400 = half the table: not empty; 180/400: empty; all of the cup: still empty; nothing: empty
    assert [c.empty for c in m.crops] == [False, True, True, True]
    assert m.empty == 3
    # tables are not subjects: halving one is no cut
    assert (m.person_cut, m.subject_cut, m.n_prominent) == (0, 0, 0)


def test_subject_classes_sizes_and_street_objects():
    # 100x100 frame.  dog 8 % (prominent), car 2 % (subject, not prominent), person 50 % (the scene, not
    # a subject), traffic light 5 % (a subject, but not of the cut classes), person 0.5 % (background).
    masks = _frame(100, 100, (0, 20, 0, 40), (80, 100, 0, 10), (0, 100, 50, 100), (30, 80, 40, 50), (95, 100, 90, 100))
    cats = (DOG, CAR, PERSON, TRAFFIC_LIGHT, PERSON)
    m = measure_photo(masks, cats, [Box(0, 0, 20, 100), Box(45, 0, 55, 100), Box(0, 0, 40, 20)])
    roles = [(o.subject, o.prominent, o.counted) for o in m.objects]
    assert roles == [(True, True, True), (True, False, False), (False, False, False), (True, True, False),
                     (False, False, False)]
    # crop 0 halves the dog (columns 0..19 of 0..39) and the car is whole in it
    assert m.crops[0].person_cut is False and m.crops[0].subject_cut and m.crops[0].sliced == (0,)
    # crop 1 halves the traffic light and the big person: neither is a cut
    assert not m.crops[1].subject_cut and not m.crops[1].person_cut and not m.crops[1].empty
    # crop 2 holds the dog whole at 8 % of the frame: covered and featured
    assert (m.n_prominent, m.covered, m.featured) == (1, 1, 1)
    assert m.n_objects_large == 3 and m.qualifies  # dog, person, traffic light are >= 3 % of the frame
    # plain Python numbers throughout (the summary is written as JSON)
    counts = (m.n_prominent, m.covered, m.featured, m.person_cut, m.subject_cut, m.empty, m.n_objects_large)
    assert all(type(v) is int for v in counts)
    assert all(type(v) is bool for o in m.objects for v in (o.subject, o.prominent, o.counted, o.covered))


def test_street_objects_count_when_the_rules_say_so():
    masks = _frame(100, 100, (30, 80, 40, 50))
    rules = SubjectRules(cut_ids=SubjectRules().cut_ids + (TRAFFIC_LIGHT,))
    m = measure_photo(masks, (TRAFFIC_LIGHT,), [Box(45, 0, 55, 100)], rules=rules)
    assert (m.subject_cut, m.n_prominent, m.covered) == (1, 1, 0)


def test_crowd_outlines_are_no_subjects_but_fill_a_crop():
    masks = _frame(20, 20, (5, 15, 5, 15))
    m = measure_photo(masks, (PERSON,), [Box(0, 0, 10, 20)], crowd=(True,))
    assert (m.person_cut, m.empty, m.n_prominent) == (0, 0, 0)


def test_photo_without_objects_or_crops():
    m = measure_photo(np.zeros((0, 8, 8), bool), (), [Box(0, 0, 4, 4)])
    assert (m.empty, m.n_prominent, m.qualifies) == (1, 0, False)
    m = measure_photo(_frame(8, 8, (0, 4, 0, 4)), (PERSON,), [])
    assert (m.n_crops, m.covered, m.n_prominent, m.bad) == (0, 0, 1, 0)


def test_boxes_are_rounded_and_clipped_to_the_frame():
    masks = _frame(10, 10, (0, 10, 0, 4))
    assert held_shares(masks, [Box(-5, -5, 7.4, 20), Box(8, 0, 10, 10)]).tolist() == [[0.5, 0.0]]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 11), st.integers(0, 11), st.integers(1, 12), st.integers(1, 12),
       st.integers(0, 11), st.integers(0, 11), st.integers(0, 12), st.integers(0, 12))
def test_held_share_is_the_share_of_pixels_inside(y0, x0, h, w, by, bx, bh, bw):
    masks = _frame(12, 12, (y0, y0 + h, x0, x0 + w))
    total = masks[0].sum()
    got = held_shares(masks, [Box(bx, by, bw, bh)])[0, 0]
    inside = masks[0][by:by + bh, bx:bx + bw].sum()
    assert got == (inside / total if total else 0.0)
    assert 0 <= got <= 1


def test_summary_counts_next_to_shares():
    masks = _frame(20, 20, (5, 15, 5, 15))
    a = measure_photo(masks, (PERSON,), [Box(0, 0, 10, 20)])                      # 1 cut
    b = measure_photo(masks, (PERSON,), [Box(3, 3, 14, 14), Box(16, 0, 4, 4)])    # 1 featured, 1 empty
    s = summarise([a, b], failed=1)
    assert (s.photos, s.crops, s.failed, s.crops_per_photo) == (2, 3, 1, 1.5)
    assert (s.person_cut, s.subject_cut, s.empty) == (Tally(1, 3), Tally(1, 3), Tally(1, 3))
    assert (s.covered, s.featured) == (Tally(1, 2), Tally(1, 2))
    d = s.to_dict()
    assert d["empty"] == {"n": 1, "of": 3, "share": 0.3333} and d["crops_per_photo"] == 1.5
    assert str(Tally(0, 0)) == "- (0 / 0)" and math.isnan(Tally(0, 0).share)
    empty = summarise([])
    assert empty.to_dict()["person_cut"] == {"n": 0, "of": 0, "share": None}


@pytest.mark.parametrize("change, message", [
    ({"slice_min": 1.5}, "slice_min must be a number in"),
    ({"subject_min": 0.5}, "subject_min must be <= subject_max"),
    ({"photo_min_objects": -1}, "photo_min_objects must be an integer"),
    ({"cut_ids": "people"}, "cut_ids must be a list of class ids"),
])
def test_rules_are_validated(change, message):
    with pytest.raises(InvalidParameterError, match=message):
        SubjectRules(**change)


def test_inputs_are_validated():
    with pytest.raises(InvalidParameterError, match="one class per mask: 2 for 1"):
        measure_photo(_frame(4, 4, (0, 2, 0, 2)), (1, 2), [])
    with pytest.raises(InvalidParameterError, match=r"shape \(n_objects, H, W\)"):
        measure_photo(np.zeros((4, 4), bool), (), [])
    assert SubjectRules.from_dict(SubjectRules().to_dict()) == SubjectRules()
