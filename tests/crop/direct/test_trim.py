"""What a close-up may leave out of the person it frames: their legs below its bottom edge, never a
side, never at a joint (:mod:`multicrop.crop.direct.trim`)."""

from __future__ import annotations

import numpy as np

from multicrop.crop.config import CropConfig
from multicrop.crop.direct import close_ups
from multicrop.crop.direct.measure import MaskTables
from multicrop.crop.direct.trim import core_box, joints_at_edge
from multicrop.crop.scoring import ScoringContext, get_scorer
from multicrop.crop.subjects import Subject, find_subjects
from multicrop.detectors.types import Detection
from multicrop.geometry import Box

CFG = CropConfig(strategy="direct", k="auto", saliency="spectral", detectors=())
TALL = (900, 600)                                                    # a portrait-format photo
TORSO, LEGS = Box(225, 30, 150, 590), Box(287, 620, 25, 260)         # a standing figure, its legs to 880
WIDE = (600, 900)
BODY, ARM = Box(350, 100, 150, 480), Box(500, 100, 390, 20)          # an arm stretched to the photo's edge


def _fill(shape, *boxes: Box) -> np.ndarray:
    m = np.zeros(shape, np.float32)
    for b in boxes:
        m[int(b.y):int(b.y2), int(b.x):int(b.x2)] = 1
    return m


def _held(box: Box, mask: np.ndarray) -> float:
    x, y, x2, y2 = (int(round(v)) for v in box.corners())
    return float(mask[max(y, 0):y2, max(x, 0):x2].sum() / mask.sum())


def _pose(**points) -> np.ndarray:
    kp = np.zeros((33, 3))
    for name, (x, y, vis) in points.items():
        kp[int(name[1:])] = (x, y, vis)
    return kp


def _union(*boxes: Box) -> Box:
    return Box.from_corners(min(b.x for b in boxes), min(b.y for b in boxes), max(b.x2 for b in boxes),
                            max(b.y2 for b in boxes))


def _close_ups(shape, parts, keypoints=None, **close):
    dets = [Detection("person", "person", 1, _union(*parts), 0.9, keypoints=keypoints, mask=_fill(shape, *parts))]
    cfg = CFG.replace(selection=CFG.selection.set(**{f"close_ups__{k}": v for k, v in close.items()}))
    sal = np.zeros(shape, np.float32)
    subs = find_subjects(sal, dets, config=cfg.subjects)
    ctx = ScoringContext(np.full((*shape, 3), 90, np.uint8), sal, ())
    frame = Box(0, 0, shape[1], shape[0])
    return close_ups(ctx, get_scorer(cfg), cfg.selection, cfg.candidates, bounds=frame, min_side=16,
                     ratios=cfg.ratios, subjects=[s for s in subs if s.importance > 0],
                     guards=[s for s in subs if s.importance <= 0], chosen=[frame], n=2, tables=MaskTables())


def test_the_core_box_is_the_box_cut_above_the_feet():
    mask = _fill(TALL, TORSO, LEGS)
    person = Subject("person", _union(TORSO, LEGS), 0.9, 1.0, "detector", "person", mask)
    for keep in (0.8, 0.93, 0.99):
        core = core_box(person, keep)
        assert (core.x, core.y, core.x2) == (person.box.x, person.box.y, person.box.x2)
        assert core.y2 < person.box.y2 and _held(core, mask) >= keep - 1e-6
    assert abs(core_box(person, 0.93).y2 - 620) <= 2        # the torso whole, the legs left out
    assert core_box(person, 1.0) == person.box
    assert core_box(Subject("animal", person.box, 0.9, 1.0, "detector", "dog"), 0.8) == person.box   # no mask


def test_a_tall_person_gets_a_close_up_that_leaves_out_only_their_legs():
    # no crop of at most close_ups.share of the photo holds 99 % of the figure: it is 850 px tall
    whole = _fill(TALL, TORSO, LEGS)
    legs = _pose(k25=(300, 750, 0.9), k27=(300, 860, 0.9), k29=(295, 875, 0.9), k31=(310, 878, 0.9))
    assert _close_ups(TALL, (TORSO, LEGS), legs, mask_own=0.99) == []
    assert _close_ups(TALL, (TORSO, LEGS)) == []            # a mask without a pose: whole only
    out = _close_ups(TALL, (TORSO, LEGS), legs)
    assert len(out) == 1
    box = out[0][0].box
    assert 0.93 <= _held(box, whole) < 0.99 and _held(box, _fill(TALL, TORSO)) >= 0.99
    assert TORSO.y2 <= box.y2 < LEGS.y2 and box.area <= CFG.selection.close_ups.share * 600 * 900
    # mask_own decides, whatever the neighbours' mask_whole (once the framed person was judged by both)
    assert len(_close_ups(TALL, (TORSO, LEGS), legs, mask_whole=0.99)) == 1


def test_a_close_up_never_trims_a_person_at_a_side():
    # an arm stretched to the edge: 93 % of the figure fits a close-up only by cutting the arm at its side
    assert _close_ups(WIDE, (BODY, ARM)) == []


def test_a_joint_hand_or_foot_near_an_edge_inside_the_photo_marks_the_crop():
    person = Subject("person", Box(100, 0, 200, 400), 0.9, 1.0, "detector", "person",
                     keypoints=_pose(k15=(300, 200, 0.9), k13=(250, 150, 0.1)))   # a wrist; an elbow the pose doubts
    bounds = Box(0, 0, 800, 400)
    C = np.array([[0, 0, x2, 400] for x2 in (305, 320, 290, 280)], float)    # margin 0.03 of 400 px: 12 px
    assert joints_at_edge(C, person, 0.03, bounds).tolist() == [True, False, True, False]
    # an edge between a heel and a toe crosses the foot, however far it is from each point
    foot = Subject("person", Box(100, 0, 200, 400), 0.9, 1.0, "detector", "person",
                   keypoints=_pose(k29=(200, 370, 0.9), k31=(215, 395, 0.9)))
    D = np.array([[0, 0, 800, y2] for y2 in (382, 360, 300)], float)
    assert joints_at_edge(D, foot, 0.03, bounds).tolist() == [True, True, False]
    assert not joints_at_edge(C, person, 0.0, bounds).any()
    assert not joints_at_edge(C, Subject("person", person.box, 0.9, 1.0, "detector", "person"), 0.03, bounds).any()
    # the photo's own border trims nothing: a crop reaching it is not at the joint beside it
    assert not joints_at_edge(C[:1], person, 0.03, Box(0, 0, 305, 400)).any()


def test_a_close_up_leaves_out_the_legs_but_never_cuts_at_a_knee():
    # a knee where every close-up's bottom edge falls: with a margin of a fifth of the figure no edge clears it
    knee = _pose(k25=(300, 640, 0.9))
    assert _close_ups(TALL, (TORSO, LEGS), knee, joint_margin=0.2) == []
    assert len(_close_ups(TALL, (TORSO, LEGS), knee, joint_margin=0.0)) == 1
    # the default margin (3 % of the figure, 25 px) leaves room above a lower knee
    out = _close_ups(TALL, (TORSO, LEGS), _pose(k25=(300, 700, 0.9)))
    assert len(out) == 1 and out[0][0].box.y2 <= 700 - 0.03 * 850
