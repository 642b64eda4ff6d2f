"""Close-ups of a person with a pose mask: whole from ``close_ups.mask_own`` of the mask, framed on its core,
trimmed only between joints."""

from __future__ import annotations

import numpy as np

from multicrop.crop.config import CropConfig
from multicrop.crop.direct import close_ups
from multicrop.crop.direct.measure import MaskTables
from multicrop.crop.direct.zoom import core_box, joints_at_edge
from multicrop.crop.scoring import ScoringContext, get_scorer
from multicrop.crop.subjects import Subject, find_subjects
from multicrop.detectors.types import Detection
from multicrop.geometry import Box

CFG = CropConfig(strategy="direct", k="auto", saliency="spectral", detectors=())
SHAPE = (600, 900)
TORSO, ARM = Box(350, 100, 150, 480), Box(500, 100, 390, 20)   # a standing figure and an arm stretched to the edge


def _fill(*boxes: Box) -> np.ndarray:
    m = np.zeros(SHAPE, np.float32)
    for b in boxes:
        m[int(b.y):int(b.y2), int(b.x):int(b.x2)] = 1
    return m


def _held(box: Box, mask: np.ndarray) -> float:
    x, y, x2, y2 = (int(round(v)) for v in box.corners())
    return float(mask[max(y, 0):y2, max(x, 0):x2].sum() / mask.sum())


def test_the_core_box_trims_a_thin_limb_and_keeps_what_it_promises():
    mask = _fill(TORSO, ARM)
    box = Box.from_corners(TORSO.x, TORSO.y, ARM.x2, TORSO.y2)
    person = Subject("person", box, 0.9, 1.0, "detector", "person", mask)
    for keep in (0.8, 0.9, 0.93, 0.99):
        core = core_box(person, keep)
        assert box.x <= core.x and core.x2 <= box.x2 and box.y <= core.y and core.y2 <= box.y2
        assert _held(core, mask) >= keep - 1e-6
    # the arm's thin end goes first: at 0.8 the box ends well short of the edge, the torso untouched
    core = core_box(person, 0.8)
    assert core.x2 < ARM.x2 - 100 and core.x <= TORSO.x + 30 and core.y2 >= TORSO.y2 - 30
    assert core_box(person, 1.0) == box
    assert core_box(Subject("animal", box, 0.9, 1.0, "detector", "dog"), 0.8) == box   # no mask: its box


def _close_ups(mask_own: float, keypoints=None, joint_margin: float = 0.03):
    dets = [Detection("person", "person", 1, Box.from_corners(TORSO.x, TORSO.y, ARM.x2, TORSO.y2), 0.9,
                      keypoints=keypoints, mask=_fill(TORSO, ARM))]
    cfg = CFG.replace(selection=CFG.selection.set(close_ups__mask_own=mask_own, close_ups__joint_margin=joint_margin))
    sal = np.zeros(SHAPE, np.float32)
    subs = find_subjects(sal, dets, config=cfg.subjects)
    ctx = ScoringContext(np.full((*SHAPE, 3), 90, np.uint8), sal, ())
    return close_ups(ctx, get_scorer(cfg), cfg.selection, cfg.candidates, bounds=Box(0, 0, 900, 600), min_side=16,
                     ratios=cfg.ratios, subjects=[s for s in subs if s.importance > 0],
                     guards=[s for s in subs if s.importance <= 0], chosen=[Box(0, 0, 900, 600)], n=2,
                     tables=MaskTables())


def test_a_person_with_an_arm_to_the_edge_gets_a_close_up_that_holds_mask_own_of_them():
    # no crop of at most close_ups.share of the frame holds 99 % of the figure: the arm reaches the edge
    out = _close_ups(0.93)
    assert len(out) == 1
    box = out[0][0].box
    mask = _fill(TORSO, ARM)
    assert 0.93 <= _held(box, mask) < 0.99
    assert _held(box, _fill(TORSO)) >= 0.97 and box.x2 < ARM.x2 - 100   # most of what it trims is the arm's end
    assert box.area <= CFG.selection.close_ups.share * 900 * 600
    assert _close_ups(0.99) == []                                 # held to 99 %, as before: no close-up


def _pose(**points) -> np.ndarray:
    kp = np.zeros((33, 3))
    for i, (x, y, vis) in points.items():
        kp[int(i[1:])] = (x, y, vis)
    return kp


def test_a_joint_hand_or_foot_near_an_edge_marks_the_crop():
    person = Subject("person", Box(100, 0, 200, 400), 0.9, 1.0, "detector", "person",
                     keypoints=_pose(k15=(300, 200, 0.9), k13=(250, 150, 0.1)))   # a wrist; an elbow the pose doubts
    C = np.array([[0, 0, x2, 400] for x2 in (305, 320, 290, 280)], float)    # margin 0.03 of 400 px: 12 px
    assert joints_at_edge(C, person, 0.03).tolist() == [True, False, True, False]
    assert joints_at_edge(C, person, 0.0).tolist() == [False, False, False, False]
    assert not joints_at_edge(C, Subject("person", person.box, 0.9, 1.0, "detector", "person"), 0.03).any()


def test_a_close_up_trims_an_arm_between_its_joints_or_not_at_all():
    # the elbow and the wrist on the arm: with a margin of a fifth of the figure's height no edge fits between
    # or beyond them inside the close-up's size, so no close-up; without the margin, one that cuts the arm
    pose = _pose(k11=(500, 110, 0.9), k13=(560, 110, 0.9), k15=(760, 110, 0.9))
    assert _close_ups(0.93, pose, joint_margin=0.2) == []
    out = _close_ups(0.93, pose, joint_margin=0.0)
    assert len(out) == 1 and 0.93 <= _held(out[0][0].box, _fill(TORSO, ARM)) < 0.99
    # the default margin keeps the edge a few pixels off both joints
    out = _close_ups(0.93, pose)
    assert len(out) == 1
    d = 0.03 * TORSO.h
    assert all(abs(out[0][0].box.x2 - x) >= d for x in (560, 760))
