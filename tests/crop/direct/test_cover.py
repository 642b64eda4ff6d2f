"""``every_body``: a slide for each detected body that no slide, close-ups included, holds whole."""

from __future__ import annotations

import numpy as np

from multicrop.crop.config import CropConfig
from multicrop.crop.direct.cover import every_body
from multicrop.crop.direct.measure import MaskTables, measure
from multicrop.crop.direct.pool import direct_pool
from multicrop.crop.direct.quality import main_subjects, valid
from multicrop.crop.scoring import ScoringContext
from multicrop.crop.subjects import find_subjects
from multicrop.detectors.types import Detection
from multicrop.geometry import Box

CFG = CropConfig(strategy="direct", k=3)


def _pool(dets):
    """A flat 600x900 photo with ``dets``: its candidates measured, as select_direct measures them."""
    img = np.full((600, 900, 3), 90, np.uint8)
    sal = np.zeros((600, 900), np.float32)
    subs = [s for s in find_subjects(sal, dets, config=CFG.subjects) if s.importance > 0]
    bounds = Box(0, 0, 900, 600)
    sel = CFG.selection
    pool = direct_pool(bounds, subs, CFG.ratios, sel.pool, CFG.candidates, 16)
    m = measure(ScoringContext(img, sal), pool, subs, [b for s in subs for b in s.bodies], bounds, MaskTables(),
                portrait_width=sel.no_sliced_body.portrait_width)
    main, whole = main_subjects(m, sel)
    ok = valid(m, main, sel)[0]
    q = np.arange(len(m), dtype=np.float64)  # any quality: the rule picks the best allowed one
    return m, ok, whole, q, subs


def _dog_and_horse():
    """A dog left and a horse right: the measured pool, and the horse's subject index."""
    dog = Detection("animal", "dog", 18, Box(100, 300, 150, 100), 0.9)
    horse = Detection("animal", "horse", 19, Box(600, 200, 200, 250), 0.9)
    m, ok, whole, q, subs = _pool([dog, horse])
    j = next(n for n, s in enumerate(subs) if s.label == "horse")
    return m, ok, whole, q, subs, j, np.zeros(len(subs), bool)


def test_a_body_no_slide_holds_whole_gets_one_and_a_close_up_counts_as_a_slide():
    m, ok, whole, q, subs, j, no_detail = _dog_and_horse()
    shows_dog = Box(50, 250, 300, 200)  # a slide of the dog alone
    added = every_body(m, ok, whole, q, subs, no_detail, [shows_dog], [None], 3, CFG.selection)
    assert len(added) == 1 and whole[added[0][1], j] and added[0][0] == 1  # after it: it holds no slide
    # a close-up (no candidate index) holding the horse whole counts: nothing is added
    close = Box(580, 180, 240, 290)
    assert every_body(m, ok, whole, q, subs, no_detail, [shows_dog, close], [None, None], 3, CFG.selection) == []
    # within k, and off when disabled
    assert every_body(m, ok, whole, q, subs, no_detail, [shows_dog], [None], 1, CFG.selection) == []
    off = CFG.selection.set(every_body__enabled=False)
    assert every_body(m, ok, whole, q, subs, no_detail, [shows_dog], [None], 3, off) == []
    # a detail at k auto gets none
    detail = np.array([s.label == "horse" for s in subs])
    assert every_body(m, ok, whole, q, subs, detail, [shows_dog], [None], 3, CFG.selection) == []


def test_the_slide_added_goes_before_a_slide_it_holds_but_never_before_a_focus_crop():
    m, ok, whole, q, subs, j, no_detail = _dog_and_horse()
    part = Box(620, 250, 120, 80)  # a small slide inside any frame holding the horse whole
    q = np.where(whole[:, j], -np.array([b.area for b in m.boxes]), 0.0)  # prefer the tightest: it still holds `part`
    shows_dog = Box(50, 250, 300, 200)
    (at, i), = every_body(m, ok, whole, q, subs, no_detail, [part, shows_dog], [None, None], 3, CFG.selection)
    assert at == 0 and m.boxes[i].x <= part.x and m.boxes[i].x2 >= part.x2  # the wide view first
    (at, i), = every_body(m, ok, whole, q, subs, no_detail, [part, shows_dog], [None, None], 3, CFG.selection,
                          keep_first=True)
    assert at == 1
