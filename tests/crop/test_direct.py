"""``strategy="direct"``: distinct crops from one pool, on constructed saliency scenes."""

from __future__ import annotations

import numpy as np
import pytest

from multicrop.crop.config import CropConfig, SelectionConfig, SubjectConfig
from multicrop.crop.direct import select_direct
from multicrop.crop.direct.rules import NoHalfSalient
from multicrop.crop.subjects import salient_blobs
from multicrop.crop.pipeline import crop_photo
from multicrop.crop.scoring import ScoringContext, get_scorer
from multicrop.errors import InvalidParameterError
from multicrop.geometry import Box, iou


def _ellipse(sal, cx, cy, rx, ry, value=1.0):
    yy, xx = np.mgrid[: sal.shape[0], : sal.shape[1]]
    sal[((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2 <= 1] = value


def _select(sal, k, faces=(), **changes):
    h, w = sal.shape
    img = np.full((h, w, 3), 128, np.uint8)
    img[sal > 0] = 220
    cfg = CropConfig(k=k, strategy="direct", faces=False, **changes)
    ctx = ScoringContext(img, sal.astype(np.float32), tuple(faces))
    return select_direct(ctx, get_scorer(cfg), cfg, bounds=Box(0, 0, w, h), min_side=16), ctx


def _held(box, sal, blob_mask):
    x1, y1 = int(round(box.x)), int(round(box.y))
    x2, y2 = int(round(box.x2)), int(round(box.y2))
    inside = np.zeros_like(blob_mask)
    inside[max(y1, 0):y2, max(x1, 0):x2] = True
    return float((sal * (blob_mask & inside)).sum() / (sal * blob_mask).sum())


def _notes(sel):
    """The selection's notes without the one on crops under 1,080 px (every synthetic photo here is small)."""
    return tuple(n for n in sel.notes if "1080 px on the long side" not in n)


def _masks(sal):
    blobs, labels = salient_blobs(sal)
    return [labels == b.label for b in blobs]


@pytest.fixture
def overlapping():
    """Two subjects whose extents overlap in x and in y (the partition's failure case)."""
    sal = np.zeros((300, 450), np.float32)
    _ellipse(sal, 130, 110, 70, 60)
    _ellipse(sal, 260, 200, 70, 60)
    return sal


def test_blobs_found_apart_even_when_their_extents_overlap(overlapping):
    blobs, _ = salient_blobs(overlapping)
    assert len(blobs) == 2
    a, b = sorted(blobs, key=lambda bl: bl.box.x)
    assert a.box.x2 > b.box.x and a.box.y2 > b.box.y  # extents overlap on both axes


@pytest.mark.parametrize("k", [2, "auto"])
def test_two_subjects_overlapping_in_x_and_y_get_one_whole_crop_each(overlapping, k):
    sel, _ = _select(overlapping, k)
    assert len(sel.crops) == 2 and _notes(sel) == ()
    masks = _masks(overlapping)
    held = np.array([[_held(c.box, overlapping, m) for m in masks] for c in sel.crops])
    # each crop holds its own subject whole and at most a little of the other
    assert sorted(held.argmax(1).tolist()) == [0, 1]
    assert held.max(1).min() >= 0.9
    assert np.sort(held, axis=1)[:, 0].max() < 0.5


def test_a_tiny_and_a_huge_subject_both_get_a_crop():
    sal = np.zeros((400, 600), np.float32)
    _ellipse(sal, 200, 200, 130, 150)   # huge
    _ellipse(sal, 540, 60, 14, 16)      # tiny: 1/87 of the huge one's area
    sel, _ = _select(sal, "auto")
    assert len(sel.crops) == 2
    sides = sorted(max(c.box.w, c.box.h) for c in sel.crops)
    # the tiny one (28x32) framed as tightly as allowed: a long side of min_crop_share (0.2) x 600 px
    assert 120 - 1e-6 <= sides[0] < 160 and sides[1] > 250
    small = min(sel.crops, key=lambda c: c.box.area).box
    assert small.x <= 526 and small.x2 >= 554 and small.y <= 44 and small.y2 >= 76


def test_a_tall_and_a_wide_subject_get_crops_of_their_own_orientation():
    sal = np.zeros((300, 600), np.float32)
    _ellipse(sal, 120, 150, 25, 100)    # tall
    _ellipse(sal, 420, 150, 110, 30)    # wide
    sel, _ = _select(sal, 2)
    by_x = sorted(sel.crops, key=lambda c: c.box.center[0])
    assert by_x[0].box.h > by_x[0].box.w and str(by_x[0].ratio) == "2:3"
    assert by_x[1].box.w > by_x[1].box.h and str(by_x[1].ratio) == "3:2"


def test_one_subject_with_k5_writes_one_crop_and_says_so():
    sal = np.zeros((300, 450), np.float32)
    _ellipse(sal, 225, 150, 60, 80)
    sel, _ = _select(sal, 5)
    assert len(sel.crops) == 1 and sel.n_distinct == 1
    assert _notes(sel) == ("this photo has 1 distinct subject; wrote 1 crop, asked for 5 (no other framing of the "
                           "salient thing holds it whole without a cut and differs enough from the crops chosen)",)
    forced, _ = _select(sal, 5, force_k=True)
    assert len(forced.crops) == 5 and forced.n_distinct == 1
    assert "force_k" in forced.notes[0] and "4 showing no new subject" in forced.notes[0]


def test_auto_k_stops_at_the_subjects_and_respects_max_k():
    sal = np.zeros((300, 900), np.float32)
    for cx in (100, 300, 500, 700):
        _ellipse(sal, cx, 150, 40, 60)
    assert len(_select(sal, "auto")[0].crops) == 4
    assert len(_select(sal, "auto", max_k=3)[0].crops) == 3


def test_no_crop_cuts_a_blob_it_mostly_holds(overlapping):
    sel, _ = _select(overlapping, 4, force_k=False)
    for c in sel.crops:
        for m in _masks(overlapping):
            share = _held(c.box, overlapping, m)
            assert not 0.5 <= share < 0.9


def test_no_crop_cuts_a_face():
    sal = np.zeros((300, 450), np.float32)
    _ellipse(sal, 150, 150, 60, 90)
    face = Box(250, 40, 50, 50)          # a face beside the subject, raised in the saliency
    sal[40:90, 250:300] = 1.0
    sel, ctx = _select(sal, "auto", faces=(face,))
    assert sel.crops
    for c in sel.crops:
        b = c.box
        ix = max(0.0, min(b.x2, face.x2) - max(b.x, face.x))
        iy = max(0.0, min(b.y2, face.y2) - max(b.y, face.y))
        share = ix * iy / face.area
        assert share < 0.02 or share > 0.98


def test_empty_saliency_still_gives_a_view_and_a_closer_one_and_a_note():
    sel, _ = _select(np.zeros((200, 300), np.float32), "auto")
    assert len(sel.crops) == 2 and sel.notes[0].startswith("no subject found") and sel.topped == 1


def test_config_validation():
    with pytest.raises(InvalidParameterError, match="k='auto' needs strategy 'direct', got strategy 'partition'"):
        CropConfig(k="auto", strategy="partition")
    with pytest.raises(InvalidParameterError, match="k must be an integer >= 1 or 'auto', got 'many'"):
        CropConfig(k="many", strategy="direct")
    with pytest.raises(InvalidParameterError, match="NoHalfSalient.hold must be <= whole"):
        NoHalfSalient(hold=0.95, whole=0.9)
    with pytest.raises(InvalidParameterError, match="max_k"):
        CropConfig(strategy="direct", max_k=0)
    cfg = CropConfig(k="auto", strategy="direct", selection=SelectionConfig().set(objective__min_gain=0.3))
    assert CropConfig.from_dict(cfg.to_dict()) == cfg and cfg.min_k == 1


def test_instagram_preset_shares_one_ratio_and_lists_keep_freedom():
    assert CropConfig(ratios="instagram").one_ratio is True
    assert CropConfig(ratios="4:5,1:1,1.91:1").one_ratio is False
    assert CropConfig(ratios="instagram", one_ratio=False).one_ratio is False
    img = np.full((300, 900, 3), 40, np.uint8)
    img[60:260, 100:180] = 230            # a tall subject
    img[120:200, 550:800] = 230           # a wide subject
    res = crop_photo(img, CropConfig(k=2, ratios="instagram", strategy="direct", saliency="spectral",
                                     faces=False))
    assert len({str(c.ratio) for c in res.crops}) == 1
    assert any(n.startswith("one ratio for every crop") for n in res.notes)


def test_crop_photo_direct_records_k_requested_and_notes():
    img = np.full((300, 450, 3), 40, np.uint8)
    img[100:200, 180:260] = 230
    res = crop_photo(img, CropConfig(k=5, strategy="direct", saliency="spectral", faces=False))
    assert res.k_requested == 5 and len(res.crops) < 5
    rec = res.to_dict()
    assert rec["k_requested"] == 5 and rec["k"] == len(res.crops) and rec["notes"] == list(res.notes)
    assert "direct" in res.versions


def test_shortlists_hold_the_same_subject_as_fully_and_start_with_the_chosen_crop(overlapping):
    sel, _ = _select(overlapping, 2)
    assert sel.shortlists == tuple((c,) for c in sel.crops)  # shortlist=1: each crop alone
    h, w = overlapping.shape
    img = np.full((h, w, 3), 128, np.uint8)
    img[overlapping > 0] = 220
    cfg = CropConfig(k=2, strategy="direct", faces=False)
    ctx = ScoringContext(img, overlapping, ())
    sel5 = select_direct(ctx, get_scorer(cfg), cfg, bounds=Box(0, 0, w, h), min_side=16, shortlist=5)
    assert sel5.crops == sel.crops  # shortlisting never changes the choice
    masks = _masks(overlapping)
    for crop, alts in zip(sel5.crops, sel5.shortlists):
        assert alts[0] == crop and 2 <= len(alts) <= 5
        own = int(np.argmax([_held(crop.box, overlapping, m) for m in masks]))
        for alt in alts[1:]:
            held = [_held(alt.box, overlapping, m) for m in masks]
            assert int(np.argmax(held)) == own and held[own] >= _held(crop.box, overlapping, masks[own]) - 0.06
        ious = [iou(alts[i].box, alts[j].box) for i in range(len(alts)) for j in range(i)]
        assert max(ious) <= 0.8 + 1e-9


def test_crop_photo_shortlist_in_source_pixels_and_validated():
    img = np.full((300, 600, 3), 40, np.uint8)
    img[100:200, 80:180] = 230
    img[80:220, 420:520] = 230
    cfg = CropConfig(k=2, strategy="direct", saliency="spectral", faces=False)
    res = crop_photo(img, cfg, shortlist=3)
    assert [alts[0] for alts in res.shortlists] == list(res.crops)
    assert all(0 <= a.box.x and a.box.x2 <= 600 and a.box.y2 <= 300 for alts in res.shortlists for a in alts)
    assert "ranking" not in res.to_dict()
    assert [c.box for c in crop_photo(img, cfg).crops] == [c.box for c in res.crops]
    with pytest.raises(InvalidParameterError, match="shortlist"):
        crop_photo(img, cfg, shortlist=0)


def test_a_thin_faint_subject_is_a_weak_blob_and_faint_noise_is_not():
    # A strong subject, a thin faint "rocket" (peak 0.3 of the maximum, 1/300 of the mass)
    # and speckle noise at 0.1 of the maximum that must stay background.
    sal = np.zeros((300, 450), np.float32)
    _ellipse(sal, 120, 150, 80, 90)
    sal[60:240, 360:364] = 0.3
    rng = np.random.default_rng(0)
    ys, xs = rng.integers(0, 300, 40), rng.integers(0, 300, 40)
    sal[ys, xs] = np.maximum(sal[ys, xs], 0.1)
    strong_only, _ = salient_blobs(sal, config=SubjectConfig().set(blobs__weak_peak=0.5))
    assert len(strong_only) == 1  # peak below min_peak and mass below min_blob_share: noise before direct-3
    blobs, labels = salient_blobs(sal)
    assert len(blobs) == 2
    weak = blobs[1]
    assert (weak.box.x, weak.box.y, weak.box.w, weak.box.h) == (360, 60, 4, 180)
    assert weak.mass == pytest.approx(0.3 * 4 * 180, rel=1e-5)
    assert weak.importance == pytest.approx((weak.mass / blobs[0].mass) ** 0.25)
    assert not labels[ys[sal[ys, xs] == 0.1], xs[sal[ys, xs] == 0.1]].any()
    # a weak subject gets its own crop
    sel, _ = _select(sal, "auto")
    assert len(sel.crops) == 2
    held = sorted(_held(c.box, sal, labels == 2) for c in sel.crops)
    assert held[-1] == pytest.approx(1.0)


def test_a_square_subject_takes_the_photos_orientation():
    for shape, landscape in (((300, 600), True), ((600, 300), False)):
        sal = np.zeros(shape, np.float32)
        h, w = shape
        _ellipse(sal, w / 2, h / 2, 50, 50)
        sel, _ = _select(sal, 1)
        assert (sel.crops[0].box.w > sel.crops[0].box.h) == landscape
        off, _ = _select(sal, 1, selection=SelectionConfig().set(photo_orientation__weight=0.0))
        on_score = sel.crops[0].score
        assert off.crops[0].score == pytest.approx(on_score, abs=0.05)  # the prior breaks a near tie


def test_a_faint_haze_heavier_than_the_subject_is_not_a_subject_and_weak_ones_are_capped():
    sal = np.zeros((400, 600), np.float32)
    sal[50:90, 50:90] = 1.0            # the subject
    sal[40:370, 250:510] = 0.35        # a wide faint region, far heavier than the subject
    blobs, _ = salient_blobs(sal)
    assert len(blobs) == 1 and blobs[0].importance == pytest.approx(1.0)
    specks = np.zeros((400, 600), np.float32)
    specks[150:250, 20:120] = 1.0
    for x in range(200, 580, 40):      # ten faint specks, each a possible weak subject
        specks[300:316, x:x + 16] = 0.3
    blobs, _ = salient_blobs(specks)
    assert len(blobs) == 1 + SubjectConfig().blobs.max_weak
    assert all(b.importance <= 1.0 for b in blobs)
    assert len(salient_blobs(specks, config=SubjectConfig().set(blobs__max_weak=0))[0]) == 1


def test_square_photos_and_square_crops_take_no_orientation_bonus():
    sal = np.zeros((400, 400), np.float32)
    _ellipse(sal, 200, 200, 60, 60)
    on, _ = _select(sal, 1, ratios="4:5,1:1,1.91:1")
    off, _ = _select(sal, 1, ratios="4:5,1:1,1.91:1", selection=SelectionConfig().set(photo_orientation__weight=0.0))
    assert on.crops == off.crops  # a square photo has no orientation to share
    wide = np.zeros((300, 600), np.float32)
    _ellipse(wide, 300, 150, 60, 60)
    sq_on, _ = _select(wide, 1, ratios="1:1")
    sq_off, _ = _select(wide, 1, ratios="1:1", selection=SelectionConfig().set(photo_orientation__weight=0.0))
    assert [c.score for c in sq_on.crops] == [c.score for c in sq_off.crops]


def test_a_panorama_still_gets_crops_when_min_crop_share_cannot_be_met():
    sal = np.zeros((60, 600), np.float32)   # 10:1; a 3:2 crop is at most 90 px long, under 0.2 x 600
    _ellipse(sal, 100, 30, 20, 20)
    sel, _ = _select(sal, 1)
    assert len(sel.crops) == 1
    assert max(sel.crops[0].box.w, sel.crops[0].box.h) == pytest.approx(90, abs=1)


def test_force_k_fills_are_not_offered_alternatives():
    sal = np.zeros((300, 450), np.float32)
    _ellipse(sal, 225, 150, 60, 80)
    h, w = sal.shape
    img = np.full((h, w, 3), 128, np.uint8)
    cfg = CropConfig(k=3, strategy="direct", faces=False, force_k=True)
    ctx = ScoringContext(img, sal, ())
    sel = select_direct(ctx, get_scorer(cfg), cfg, bounds=Box(0, 0, w, h), min_side=16, shortlist=4)
    assert sel.n_distinct == 1 and len(sel.crops) == 3
    assert len(sel.shortlists[0]) > 1 and [len(x) for x in sel.shortlists[1:]] == [1, 1]


def _band(shape, rows, cols):
    sal = np.zeros(shape, np.float32)
    sal[rows, cols] = 1.0
    return sal


def _shown(boxes, lo, hi, across=True):
    """Share of [lo, hi) along the axis that some box shows."""
    seen = np.zeros(int(hi - lo), bool)
    for b in boxes:
        a, z = (b.x, b.x2) if across else (b.y, b.y2)
        seen[max(int(round(a - lo)), 0):max(int(round(z - lo)), 0)] = True
    return seen.mean()


@pytest.mark.parametrize("k, n", [("auto", 3), (3, 3), (2, 2)])
def test_a_subject_wider_than_any_crop_is_shown_in_parts_along_it(k, n):
    sal = _band((200, 1024), slice(60, 140), slice(150, 870))   # a panorama; a 3:2 crop is at most 300 x 200
    sel, _ = _select(sal, k)                                     # a salient band 720 px long: no crop holds it whole
    boxes = [c.box for c in sel.crops]
    assert len(boxes) == n and sel.n_distinct == 1
    assert [b.x for b in boxes] == sorted(b.x for b in boxes)    # left to right
    assert all(b.w == pytest.approx(300, abs=1) and b.h == pytest.approx(200, abs=1) for b in boxes)
    assert boxes[0].x <= 150 + 30 and boxes[-1].x2 >= 870 - 30  # from one end of it to the other
    assert all(iou(a, b) <= 0.3 + 1e-9 for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert _shown(boxes, 150, 870) >= (0.95 if n == 3 else 600 / 720 - 0.05)
    assert sel.notes[0] == ("no crop of ratio 2:3, 3:2 holds the salient thing whole (it is wider or taller than "
                            f"any): crops 1–{n} show it in parts, left to right")


def test_parts_stop_where_they_would_overlap_and_the_note_says_so():
    sal = _band((200, 1024), slice(60, 140), slice(150, 870))
    sel, _ = _select(sal, 9)
    boxes = [c.box for c in sel.crops]
    assert 3 <= len(boxes) < 9                                   # 720 px holds no nine 300 px parts apart enough
    assert all(iou(a, b) <= 0.3 + 1e-9 for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert sel.notes[1] == (f"this photo has 1 distinct subject ({len(boxes)} parts of it); wrote {len(boxes)} "
                            "crops, asked for 9 (no other part along it differs enough from these)")


def test_a_tall_subject_is_shown_in_parts_top_to_bottom():
    sal = _band((1024, 200), slice(150, 870), slice(60, 140))   # a tower; a 2:3 crop is at most 200 x 300
    sel, _ = _select(sal, "auto")
    boxes = [c.box for c in sel.crops]
    assert len(boxes) == 3 and [b.y for b in boxes] == sorted(b.y for b in boxes)
    assert _shown(boxes, 150, 870, across=False) >= 0.95
    assert sel.notes[0].endswith("crops 1–3 show it in parts, top to bottom")


def test_a_subject_wider_than_any_crop_by_little_gets_its_largest_part():
    sal = _band((200, 1024), slice(60, 140), slice(340, 680))   # 340 px: a second part would overlap the first
    sel, _ = _select(sal, "auto")
    assert len(sel.crops) == 1 and _held(sel.crops[0].box, sal, sal > 0) >= 300 / 340 - 0.05 - 0.02
    assert sel.notes[0].endswith("crop 1 frames the largest part of it")


def test_a_guard_over_the_whole_frame_leaves_the_subject_its_framing():
    from multicrop.crop.subjects import find_subjects
    from multicrop.detectors.types import Detection

    sal = np.zeros((450, 600), np.float32)       # 4:3: no crop of 2:3 or 3:2 is the whole frame
    _ellipse(sal, 420, 180, 70, 60)              # a salient thing
    cfg = CropConfig(k=3, strategy="direct", faces=False)
    unsure = Detection("person", "person", 1, Box(0, 10, 595, 430), 0.35)   # a guard no crop holds whole
    subjects = find_subjects(sal, [unsure], config=cfg.subjects)
    assert [s.importance for s in subjects if s.kind == "person"] == [0.0]
    img = np.full((450, 600, 3), 128, np.uint8)
    sel = select_direct(ScoringContext(img, sal, ()), get_scorer(cfg), cfg, bounds=Box(0, 0, 600, 450), min_side=16,
                        subjects=subjects)
    assert len(sel.crops) == 1 and _held(sel.crops[0].box, sal, sal > 0) > 0.99
    assert sel.notes[0].startswith("every crop of ratio 2:3, 3:2 that holds the salient thing whole cuts through")
    assert any(n.startswith("crop 1 cuts through 1 person: ") and n.endswith("the salient thing without a cut")
               for n in sel.notes)


def test_a_fixed_k_still_short_opens_on_a_wide_view_of_the_subjects_shown_one_by_one():
    sal = np.zeros((400, 600), np.float32)
    _ellipse(sal, 170, 200, 60, 70)
    _ellipse(sal, 430, 200, 60, 70)              # two subjects apart, each with a slide of its own
    two, _ = _select(sal, 2)
    three, _ = _select(sal, 3)
    masks = _masks(sal)
    assert [c.box for c in three.crops[1:]] == [c.box for c in two.crops]   # the subjects' own slides, unchanged
    wide = three.crops[0].box
    assert all(_held(wide, sal, m) > 0.99 for m in masks)                   # first: both whole
    assert all(iou(wide, c.box) <= 0.6 for c in two.crops)
    assert _notes(three) == ("crop 1 is a wide view of subjects the other crops show one by one",)
    one = np.zeros((400, 600), np.float32)
    _ellipse(one, 300, 200, 60, 70)              # one subject: no wide view of "subjects"
    assert len(_select(one, 3)[0].crops) == 1


def test_the_wide_view_comes_after_a_focus_slide_and_force_k_never_repeats_it():
    from multicrop.crop.subjects import find_subjects

    sal = np.zeros((400, 600), np.float32)
    _ellipse(sal, 170, 200, 60, 70)
    _ellipse(sal, 430, 200, 60, 70)
    img = np.full((400, 600, 3), 128, np.uint8)
    img[sal > 0] = 220
    ctx = ScoringContext(img, sal, ())
    cfg = CropConfig(k=3, strategy="direct", faces=False)
    subjects = find_subjects(sal, [], config=cfg.subjects, focus=Box(430, 200, 0, 0))
    focused = select_direct(ctx, get_scorer(cfg), cfg, bounds=Box(0, 0, 600, 400), min_side=16, subjects=subjects)
    assert "crop 2 is a wide view of subjects the other crops show one by one" in focused.notes
    first, wide = focused.crops[0].box, focused.crops[1].box
    assert first.x <= 430 <= first.x2 and wide.w > first.w                  # the focus's slide stays first
    three = np.zeros((400, 600), np.float32)     # a scene (found by a review's fuzz) where a fill repeated it
    for cx, cy, rx, ry in ((262, 188, 22, 19), (223, 139, 102, 28), (102, 204, 59, 26)):
        _ellipse(three, cx, cy, rx, ry)
    sel, _ = _select(three, 5, force_k=True)
    boxes = [c.box for c in sel.crops]
    assert len(boxes) == 5 and len(set(boxes)) == 5                        # no fill repeats the wide view
    assert "1 wider view" in sel.notes[0] and sel.notes[0].endswith("showing no new subject")
    assert sel.n_distinct == 2 and sel.topped == 3  # the wide view and the fills never choose a one_ratio's ratio


@pytest.mark.parametrize("k, n", [(3, 3), ("auto", 4)])
def test_a_panorama_in_one_ratio_gets_the_ratio_with_the_most_parts(k, n):
    from multicrop.crop import strategies

    sal = _band((256, 1024), slice(120, 250), slice(0, 787))    # a band no 4:5, 1:1 or 1.91:1 crop holds
    img = np.full((256, 1024, 3), 128, np.uint8)
    cfg = CropConfig(k=k, strategy="direct", faces=False, ratios="instagram")
    cands = strategies.Candidates(ScoringContext(img, sal, ()), get_scorer(cfg), cfg, Box(0, 0, 1024, 256), 16.0)
    got = strategies.select_crops(sal, cands, "pano", None)
    boxes = [c.box for c in got.crops]
    ratios = {str(c.ratio) for c in got.crops}
    assert len(boxes) == n and len(ratios) == 1 and ratios != {"1.91:1"}   # not two short 1.91:1 slides
    assert _shown(boxes, 0, 787) >= 0.95 and [b.x for b in boxes] == sorted(b.x for b in boxes)


def test_parts_at_k_auto_are_at_most_max_k():
    sal = _band((100, 2000), slice(30, 70), slice(0, 2000))     # a 9:16 crop is 56 px wide: 36 would cover it
    sel, _ = _select(sal, "auto", ratios="9:16")
    assert len(sel.crops) == CropConfig().max_k


@pytest.mark.parametrize("k, n", [("auto", 2), (3, 2)])
def test_parts_reach_both_ends_where_the_largest_part_is_not_the_largest_crop(k, n):
    sal = _band((400, 1000), slice(120, 280), slice(0, 1000))   # the band fills the width; crops of 600 x 400 at most
    sel, _ = _select(sal, k)
    boxes = [c.box for c in sel.crops]
    assert len(boxes) == n and _shown(boxes, 0, 1000) >= 0.95
    assert all(iou(a, b) <= 0.3 + 1e-9 for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_a_part_holding_another_subject_whole_is_still_a_part_of_the_wide_one():
    sal = _band((200, 1024), slice(20, 80), slice(100, 900))    # a band wider than every crop
    sal[120:180, 500:1000] = 0.9                                 # and a second one below it
    sel, _ = _select(sal, 5)
    assert len(set(sel.mains)) == 1 and sel.n_distinct == 1
    assert sel.notes[0].endswith(f"crops 1–{len(sel.crops)} show it in parts, left to right")


@pytest.mark.parametrize("k", ["auto", 3])
def test_the_candidates_for_parts_change_no_other_choice(k, monkeypatch):
    from multicrop.crop.direct import select as select_module

    sal = _band((300, 1200), slice(20, 90), slice(0, 1200))     # a band wider than every crop: pan windows
    _ellipse(sal, 300, 210, 50, 60)                              # and two subjects a crop frames
    _ellipse(sal, 800, 210, 50, 60)
    with_pans, _ = _select(sal, k)
    assert select_module.pan_windows(Box(0, 0, 1200, 300), [], CropConfig().ratios, 3, 0.3) == []
    monkeypatch.setattr(select_module, "pan_windows", lambda *a, **kw: [])
    without, _ = _select(sal, k)
    assert [c.box for c in with_pans.crops] == [c.box for c in without.crops]
    assert with_pans.notes == without.notes
