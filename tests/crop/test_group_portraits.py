"""A group of people no crop can hold whole is framed as a group portrait, cut only at portrait lines."""

from __future__ import annotations

import dataclasses

import numpy as np

from multicrop.crop.analysis import analyse
from multicrop.crop.config import CropConfig
from multicrop.crop.direct.measure import portrait_ok
from multicrop.crop.direct.pool import bottom_windows
from multicrop.crop.pipeline import crop_photo
from multicrop.crop.people import group_portraits, portrait_lines
from multicrop.crop.subjects import Subject, find_subjects
from multicrop.detectors.types import Detection
from multicrop.geometry import Box
from multicrop.ratios import parse_ratio


def _pose(box: Box, face: bool = True) -> np.ndarray:
    """MediaPipe keypoints of a figure standing in ``box``: shoulders and hips seen, the nose if ``face``."""
    kp = np.zeros((33, 3))
    cx = box.x + box.w / 2
    points = {11: (0.3, 0.18), 12: (-0.3, 0.18), 23: (0.2, 0.52), 24: (-0.2, 0.52)}
    if face:
        points[0] = (0.0, 0.07)
    for i, (dx, fy) in points.items():
        kp[i] = (cx + dx * box.w, box.y + fy * box.h, 0.9)
    return kp


def _member(box: Box, face: bool = True, kind: str = "person") -> Subject:
    return Subject(kind, box, 0.9, 1.0, "detector", kind, keypoints=_pose(box, face) if kind == "person" else None)


def _group(*members: Subject) -> Subject:
    x1, y1 = min(m.box.x for m in members), min(m.box.y for m in members)
    x2, y2 = max(m.box.x2 for m in members), max(m.box.y2 for m in members)
    return Subject("person", Box.from_corners(x1, y1, x2, y2), 0.9, 0.0, "detector", "group", members=members)


def _on_a_line(person: Subject, y: float) -> bool:
    return any(lo <= y <= hi for lo, hi in portrait_lines(person))


def test_a_group_portrait_ends_on_a_portrait_line_of_everyone_it_cuts():
    a, b = _member(Box(40, 40, 140, 420)), _member(Box(200, 70, 140, 440))
    shots = group_portraits(_group(a, b))
    assert shots, "two standing people with faces seen have a common portrait line"
    for shot in shots:
        assert shot.y == 40 and shot.x == 40 and shot.x2 == 340          # every head, both sides
        assert _on_a_line(a, shot.y2) and _on_a_line(b, shot.y2)
    # the deepest row and the highest: a waist-up shot, then a chest-up one
    assert len(shots) == 2 and shots[0].y2 > shots[1].y2


def test_no_group_portrait_cuts_a_face_the_pose_does_not_see_or_anyone_but_people():
    seen, hidden = _member(Box(40, 40, 140, 420)), _member(Box(200, 70, 140, 440), face=False)
    assert group_portraits(_group(seen, hidden)) == []
    # a short member ending above the row is held whole, so the row stands
    short = _member(Box(200, 40, 140, 110), face=False)
    rows = [s.y2 for s in group_portraits(_group(seen, short))]
    assert rows and all(y >= short.box.y2 and _on_a_line(seen, y) for y in rows)
    assert group_portraits(_group(seen, _member(Box(200, 70, 140, 440), kind="animal"))) == []
    assert group_portraits(seen) == []                                  # one person is no group
    no_pose = dataclasses.replace(_member(Box(200, 70, 140, 440)), keypoints=None)
    assert group_portraits(_group(seen, no_pose)) == []                 # no pose: no face seen, no line


def test_a_row_just_below_a_short_member_counts():
    seen = _member(Box(40, 40, 140, 420))
    lo, hi = portrait_lines(seen)[1]                                    # the waist band
    short = _member(Box(200, 40, 140, (lo + hi) / 2 + 2 - 40), face=False)   # ends inside it, past its middle
    rows = [s.y2 for s in group_portraits(_group(seen, short))]
    assert short.box.y2 in rows and _on_a_line(seen, short.box.y2)


def test_only_a_face_the_pose_sees_may_be_cut_at_a_portrait_line():
    bounds = Box(0, 0, 400, 500)
    seen, hidden = _member(Box(40, 40, 140, 420)), _member(Box(40, 40, 140, 420), face=False)
    lo, hi = portrait_lines(seen)[1]
    crop = np.array([[20.0, 0.0, 200.0, (lo + hi) / 2]])              # head held, bottom on the waist band
    assert portrait_ok(crop, seen, bounds, 0.9).tolist() == [True]
    assert portrait_ok(crop, hidden, bounds, 0.9).tolist() == [False]


def test_bottom_windows_keep_the_bottom_edge_and_the_ratio():
    bounds, target = Box(0, 0, 640, 480), Box(100, 30, 400, 250)
    wins = bottom_windows(target, parse_ratio("16:9"), bounds)
    assert len(wins) == 3
    for w in wins:
        assert abs(w.y2 - target.y2) < 1e-9 and w.y <= target.y and abs(w.w / w.h - 16 / 9) < 1e-9
        assert bounds.x <= w.x and w.x2 <= bounds.x2 + 1e-9
    assert bottom_windows(Box(0, 0, 600, 400), parse_ratio("16:9"), bounds) == []   # wider than the photo


def _ellipse(shape, box: Box) -> np.ndarray:
    yy, xx = np.mgrid[: shape[0], : shape[1]]
    cx, cy = box.center
    return (((xx - cx) / (box.w / 2)) ** 2 + ((yy - cy) / (box.h / 2)) ** 2 <= 1).astype(np.float32)


def test_two_people_too_tall_for_the_ratio_get_a_two_shot_not_a_slice():
    shape = (560, 620)
    boxes = (Box(60, 30, 240, 510), Box(260, 50, 240, 500))   # boxes overlap: one group
    dets = [Detection("person", "person", 1, b, 0.9, mask=_ellipse(shape, b), keypoints=_pose(b)) for b in boxes]
    cfg = CropConfig(strategy="direct", k="auto", saliency="spectral", detectors=(), ratios="16:9")
    img = np.full((*shape, 3), 90, np.uint8)
    a = analyse(img, cfg, detections=dets)
    sal = np.zeros(shape, np.float32)
    a = dataclasses.replace(a, saliency=sal, subjects=find_subjects(sal, dets, config=cfg.subjects))
    res = crop_photo(img, cfg, analysis=a)
    assert len(res.crops) == 1
    crop = res.crops[0].box
    people = [m for m in a.subjects[0].members]
    assert len(people) == 2
    for p in people:                                   # every head held, every body cut on a portrait line
        assert crop.y <= p.box.y and _on_a_line(p, crop.y2)
    assert any("cuts 2 people at portrait lines (a group portrait)" in n for n in res.notes)
    assert not any("cuts through" in n for n in res.notes)
