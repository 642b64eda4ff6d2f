"""Subjects from detections and saliency, and direct selection on them (hand-made detections)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from multicrop.crop.analysis import analyse, parse_focus, settings_key, with_focus
from multicrop.crop.config import CropConfig, SelectionConfig, SubjectConfig
from multicrop.crop.pipeline import crop_photo, pipeline_versions
from multicrop.crop.scoring import ScoringContext, get_scorer
from multicrop.crop.direct import select_direct
from multicrop.crop.direct.zoom import upper_bodies
from multicrop.crop.people import face_seen
from multicrop.crop.subjects import Subject, connected_components, facing, find_subjects, portrait_lines
from multicrop.detectors.types import Detection
from multicrop.errors import InvalidParameterError
from multicrop.geometry import Box, iou


def _person(x, y, w, h, score=0.9):
    return Detection("person", "person", 1, Box(x, y, w, h), score)


def _held(crop: Box, box: Box) -> float:
    iw = max(min(crop.x2, box.x2) - max(crop.x, box.x), 0)
    ih = max(min(crop.y2, box.y2) - max(crop.y, box.y), 0)
    return iw * ih / box.area


def _photo(shape=(600, 900)):
    """A flat grey photo (its spectral saliency is near nothing): the detections alone make subjects."""
    return np.full((*shape, 3), 90, np.uint8)


CFG = CropConfig(strategy="direct", k="auto", saliency="spectral", detectors=())


def _crop(img, dets, cfg=CFG, **kw):
    a = analyse(img, cfg, detections=dets)
    return crop_photo(img, cfg, analysis=a, **kw), a


def test_overlapping_people_form_one_group_and_people_apart_stay_apart():
    sal = np.zeros((600, 900), np.float32)
    dets = [_person(100, 100, 120, 400), _person(190, 120, 120, 380), _person(650, 150, 120, 380)]
    subs = find_subjects(sal, dets)
    groups = [s for s in subs if s.members]
    singles = [s for s in subs if not s.members]
    assert len(groups) == 1 and len(groups[0].members) == 2 and groups[0].label == "group of 2 people"
    assert groups[0].box == Box(100, 100, 210, 400)
    assert len(singles) == 1 and singles[0].box == Box(650, 150, 120, 380)
    assert groups[0].importance == pytest.approx(1.0)  # the larger subject


def test_a_tiny_detection_is_background_and_an_unsure_one_is_a_guard():
    sal = np.zeros((600, 900), np.float32)
    tiny = _person(10, 10, 20, 40)                     # 0.15 % of the frame
    unsure = _person(600, 100, 100, 300, score=0.35)   # between guard_score and min_person_score
    sure = _person(100, 100, 100, 300)
    subs = find_subjects(sal, [tiny, unsure, sure])
    assert [(s.box, s.importance > 0) for s in subs] == [(sure.box, True), (unsure.box, False)]


def test_salient_blob_inside_a_detection_is_not_a_subject_but_one_apart_is():
    sal = np.zeros((600, 900), np.float32)
    sal[150:350, 120:220] = 1.0      # the person's own saliency
    sal[150:300, 650:750] = 1.0      # a thing no detector names (2.8 % of the frame)
    subs = find_subjects(sal, [_person(100, 100, 150, 400)])
    kinds = sorted((s.kind, s.source) for s in subs)
    assert kinds == [("person", "detector"), ("salient", "saliency")]
    salient = next(s for s in subs if s.kind == "salient")
    assert salient.box == Box(650, 150, 100, 150)
    # importance among the blobs (3/4 of the person's saliency mass: 0.75 ** 0.25) times saliency_weight
    assert salient.importance == pytest.approx(SubjectConfig().importance.salient * 0.75 ** 0.25)


def test_plain_background_is_never_a_subject():
    sal = np.full((600, 900), 0.8, np.float32)   # a bright sky over the whole frame
    assert find_subjects(sal) == ()


def test_no_crop_slices_a_person_or_leaves_a_sliver():
    img = _photo()
    dets = [_person(100, 120, 130, 420), _person(330, 100, 130, 440), _person(650, 150, 120, 380)]
    res, a = _crop(img, dets)
    assert len(res.crops) >= 2
    for c in res.crops:
        for det in dets:
            h = _held(c.box, det.box)
            assert h <= SelectionConfig().no_sliced_body.sliver or h >= SelectionConfig().holds_main.body_whole, (c.box, det.box, h)
    # every crop has a main subject of its own
    assert len(set(res.mains)) == len(res.mains) and all(m >= 0 for m in res.mains)


def test_a_guard_is_never_sliced():
    img = _photo()
    dets = [_person(100, 100, 150, 420), _person(240, 110, 150, 400, score=0.32)]
    res, a = _crop(img, dets)
    for c in res.crops:
        h = _held(c.box, dets[1].box)
        assert h <= SelectionConfig().no_sliced_body.sliver or h >= SelectionConfig().holds_main.body_whole


def test_focus_is_held_by_the_first_crop_and_recorded():
    img = _photo()
    dets = [_person(100, 100, 130, 420)]
    res, _ = _crop(img, dets, focus=Box(760, 300, 0, 0))
    first = res.crops[0].box
    assert first.x <= 760 <= first.x2 and first.y <= 300 <= first.y2
    rec = res.to_dict()
    assert rec["focus"] == {"x": 760.0, "y": 300.0, "w": 0.0, "h": 0.0}
    assert "the focus given is held by the first crop" in res.notes
    assert any(s["kind"] == "focus" for s in rec["subjects"])


def test_focus_needs_direct_and_must_lie_in_the_photo():
    img = _photo()
    with pytest.raises(InvalidParameterError, match="strategy 'direct'"):
        crop_photo(img, CFG.replace(strategy="partition", k=2), focus=Box(10, 10, 0, 0))
    with pytest.raises(InvalidParameterError, match="inside the 900x600 photo"):
        crop_photo(img, CFG, focus=Box(950, 10, 0, 0))


@pytest.mark.parametrize("text,box", [("120,80", Box(120, 80, 0, 0)), ("1, 2, 30, 40", Box(1, 2, 30, 40))])
def test_parse_focus(text, box):
    assert parse_focus(text) == box


@pytest.mark.parametrize("text", ["1,2,3", "a,b", "-1,5", ""])
def test_parse_focus_refuses(text):
    with pytest.raises(InvalidParameterError, match="focus must be X,Y or X,Y,W,H"):
        parse_focus(text)


def test_no_subject_gives_a_view_and_a_closer_one_inside_it_and_says_so():
    """direct-20: k auto's carousel has two slides on a photo with no subject too, the second inside the first
    (a zoom into the scene, not another half of it); ``min_slides`` 1 or ``max_k`` 1 keep one view."""
    from multicrop.geometry import iou

    res, _ = _crop(_photo(), [])
    assert len(res.crops) == 2 and res.notes[0].startswith("no subject found")
    assert res.notes[0].endswith("one view of the scene and 1 closer view inside it")
    wide, close = (c.box for c in res.crops)
    zoom = SelectionConfig().close_ups
    assert _held(wide, close) >= zoom.inside and iou(wide, close) <= zoom.iou + 1e-9 and close.area < wide.area
    for cfg in (ONE_SLIDE, CFG.replace(max_k=1)):
        one, _ = _crop(_photo(), [], cfg=cfg)
        assert [c.box for c in one.crops] == [wide] and one.notes[0].endswith("one view of the scene")


def test_no_subject_at_a_fixed_k_gives_k_distinct_views_the_first_the_one_view():
    one, _ = _crop(_photo(), [])
    cfg = CFG.replace(k=3)
    res, _ = _crop(_photo(), [], cfg=cfg)
    boxes = [c.box for c in res.crops]
    assert len(boxes) == 3 and boxes[0] == one.crops[0].box
    limit = cfg.selection.scene_views.iou
    assert all(iou(a, b) <= limit + 1e-9 for n, a in enumerate(boxes) for b in boxes[n + 1:]), boxes
    assert [b.x for b in boxes[1:]] == sorted(b.x for b in boxes[1:])   # reading order after the wide one
    assert res.notes[0].endswith("3 views of the scene")
    # asked for more than the photo has: as many as differ enough, and the note says how many were asked
    apart, _ = _crop(_photo(), [], cfg=cfg.replace(selection=cfg.selection.set(scene_views__iou=0.0)))
    assert len(apart.crops) == 1 and apart.notes[0].endswith("1 view of the scene, asked for 3 (no other view "
                                                            "slicing nothing differs enough from these)")
    off, _ = _crop(_photo(), [], cfg=cfg.replace(selection=cfg.selection.set(scene_views__enabled=False)))
    assert [c.box for c in off.crops] == [one.crops[0].box] and off.notes[0].endswith("one view of the scene")


def test_views_of_a_scene_slice_no_guard():
    img = _photo()
    guard = _person(380, 90, 140, 420, score=0.32)   # too unsure to be a subject: a guard
    res, a = _crop(img, [guard], cfg=CFG.replace(k=4))
    assert [s.importance for s in a.subjects] == [0] and len(res.crops) >= 2
    rule = SelectionConfig()
    for c in res.crops:
        h = _held(c.box, guard.box)
        assert h <= rule.no_sliced_body.sliver or h >= rule.holds_main.body_whole, (c.box, h)


def test_analysis_key_follows_image_settings_and_focus():
    img = _photo((200, 300))
    a = analyse(img, CFG)
    assert a.key == analyse(img, CFG).key
    other = img.copy()
    other[0, 0] = 0
    assert analyse(other, CFG).key != a.key
    assert settings_key(CFG) != settings_key(CFG.replace(subjects=SubjectConfig().set(detections__min_person_score=0.6)))
    assert with_focus(a, Box(5, 5, 0, 0), CFG).key != a.key


def test_analysis_of_another_size_is_refused():
    a = analyse(_photo((200, 300)), CFG)
    with pytest.raises(InvalidParameterError, match="analysis is of a 300x200 image"):
        crop_photo(_photo((210, 300)), CFG, analysis=a)


def test_versions_name_the_detectors():
    assert pipeline_versions(CFG)["detectors"] == "off"
    with_nanodet = pipeline_versions(CFG.replace(detectors=("nanodet",)))
    assert with_nanodet["detector:nanodet"].startswith("nanodet-")
    assert CropConfig(detectors=("nanodet", "yunet"), faces=False).active_detectors == ("nanodet",)
    with pytest.raises(InvalidParameterError, match="must not repeat"):
        CropConfig(detectors=("nanodet", "nanodet"))


def _kp(**points):
    kp = np.zeros((33, 3))
    names = {"nose": 0, "l_ear": 7, "r_ear": 8, "l_sh": 11, "r_sh": 12, "l_hip": 23, "r_hip": 24,
             "l_knee": 25, "r_knee": 26}
    for k, (x, y) in points.items():
        kp[names[k]] = (x, y, 1.0)
    return kp


def test_portrait_lines_from_keypoints_avoid_the_joints():
    kp = _kp(l_sh=(120, 100), r_sh=(80, 100), l_hip=(115, 200), r_hip=(85, 200), l_knee=(115, 300),
             r_knee=(85, 300))
    p = Subject("person", Box(60, 40, 80, 360), 0.9, 1.0, "detector", "person", keypoints=kp)
    lines = portrait_lines(p)
    assert lines == ((130.0, 160.0), (178.0, 192.0), (230.0, 275.0))
    for lo, hi in lines:  # never at the shoulders (100), hips (200) or knees (300)
        assert not (lo <= 100 <= hi or lo <= 200 <= hi or lo <= 300 <= hi)


def test_facing_from_the_nose_and_ears():
    right = _kp(nose=(130, 50), l_ear=(110, 50), r_ear=(90, 50))
    front = _kp(nose=(100, 50), l_ear=(115, 50), r_ear=(85, 50))
    box = Box(60, 40, 80, 300)
    assert facing(Subject("person", box, 0.9, 1.0, "detector", keypoints=right)) == 1.0
    assert facing(Subject("person", box, 0.9, 1.0, "detector", keypoints=front)) == 0.0
    assert facing(Subject("person", box, 0.9, 1.0, "detector")) == 0.0


def test_a_portrait_needs_a_face_the_pose_sees_inside_the_box():
    body = dict(l_sh=(120, 100), r_sh=(80, 100), l_hip=(115, 200), r_hip=(85, 200))
    box = Box(60, 40, 80, 360)
    seen = Subject("person", box, 0.9, 1.0, "detector", "person", keypoints=_kp(nose=(100, 60), **body))
    assert face_seen(seen) and len(upper_bodies(seen)) == 2
    # the nose not seen (a back turned, a head outside the photo), or outside the box: no portrait
    hidden = _kp(**body)
    outside = _kp(nose=(100, 20), **body)
    for kp in (hidden, outside, None):
        p = Subject("person", box, 0.9, 1.0, "detector", "person", keypoints=kp)
        assert not face_seen(p) and upper_bodies(p) == []
    # only people
    assert upper_bodies(dataclasses.replace(seen, kind="animal", label="dog")) == []


def test_connected_components_close_joins_near_parts():
    m = np.zeros((50, 100), bool)
    m[10:20, 10:20] = True
    m[10:20, 22:30] = True
    assert connected_components(m)[0] == 3
    assert connected_components(m, close=0.02)[0] == 2


def test_a_loose_faint_patch_beside_a_detection_is_not_a_subject():
    sal = np.zeros((600, 900), np.float32)
    sal[150:350, 120:220] = 1.0                  # the person
    patch = np.full((150, 150), 0.32, np.float32)
    patch[70:80, 70:80] = 1.0                    # a bright speck in a faint patch: mean 0.33 of the maximum
    sal[200:350, 600:750] = patch
    subs = find_subjects(sal, [_person(100, 100, 150, 400)])
    assert [s.kind for s in subs] == ["person"]
    alone = find_subjects(sal)                   # without detections, saliency is all there is
    assert sorted(s.kind for s in alone) == ["salient", "salient"]


def _ellipse_mask(shape, box: Box) -> np.ndarray:
    """A soft person mask: the ellipse inscribed in ``box``."""
    yy, xx = np.mgrid[: shape[0], : shape[1]]
    cx, cy = box.center
    return (((xx - cx) / (box.w / 2)) ** 2 + ((yy - cy) / (box.h / 2)) ** 2 <= 1).astype(np.float32)


def _masked_person(shape, box, person_box, score=0.9, face=False):
    """A person whose body is an ellipse in ``box``; with ``face`` the pose sees their nose, shoulders and hips."""
    return Detection("person", "person", 1, person_box, score, mask=_ellipse_mask(shape, box),
                     keypoints=_standing_pose(box) if face else None)


def _standing_pose(box: Box) -> np.ndarray:
    """MediaPipe keypoints of a figure standing in ``box``: nose, shoulders and hips seen, the rest not."""
    kp = np.zeros((33, 3))
    cx = box.x + box.w / 2
    for i, (dx, fy) in {0: (0.0, 0.07), 11: (0.3, 0.18), 12: (-0.3, 0.18), 23: (0.2, 0.52), 24: (-0.2, 0.52)}.items():
        kp[i] = (cx + dx * box.w, box.y + fy * box.h, 0.9)
    return kp


def _mask_held(box: Box, mask: np.ndarray) -> float:
    """Share of ``mask``'s weight inside ``box`` (rounded to whole pixels)."""
    x, y, x2, y2 = (int(round(v)) for v in box.corners())
    return float(mask[y:y2, x:x2].sum() / mask.sum())


#: k auto without the carousel's second slide: the tests of what gets a slide of its own count slides
ONE_SLIDE = CFG.replace(selection=CFG.selection.set(objective__min_slides=1))


def _crop_quiet(img, dets, cfg=CFG, saliency=None):
    """Crop with the detections and the ``saliency`` given (default zeros: a flat photo's spectral map is noise)."""
    a = analyse(img, cfg, detections=dets)
    sal = np.zeros(img.shape[:2], np.float32) if saliency is None else saliency
    a = dataclasses.replace(a, saliency=sal, subjects=find_subjects(sal, dets, config=cfg.subjects))
    return crop_photo(img, cfg, analysis=a), a


def test_a_group_gets_a_close_up_of_each_member_it_can_frame_alone():
    shape = (560, 600)   # the group's crop covers more than zoom_share of it
    # Boxes overlap (one group), bodies do not: each mask lies well inside its own box.
    a = _masked_person(shape, Box(110, 110, 130, 420), Box(100, 100, 190, 440))
    b = _masked_person(shape, Box(320, 110, 130, 420), Box(260, 100, 200, 440), score=0.8)
    res, an = _crop_quiet(_photo(shape), [a, b])
    assert [s.label for s in an.subjects] == ["group of 2 people"]
    masks = [a.mask, b.mask]

    def held(c, m):
        return _mask_held(c.box, m)

    assert len(res.crops) == 3 and res.mains == (0, 0, 0)
    assert min(held(res.crops[0], m) for m in masks) >= 0.99          # the group first
    frame = shape[0] * shape[1]
    for c, (own, other) in zip(res.crops[1:], ((1, 0), (0, 1))):      # then each member, the larger box first
        assert held(c, masks[own]) >= 0.99 and held(c, masks[other]) <= SelectionConfig().no_sliced_body.sliver
        assert c.box.area <= SelectionConfig().close_ups.share * frame
        assert c.box.area <= SelectionConfig().close_ups.shrink * res.crops[0].box.area
    assert any("2 close-ups" in n for n in res.notes)
    # zoom_share 0 turns close-ups off: the group alone
    off = CropConfig(strategy="direct", k="auto", saliency="spectral", detectors=(),
                     selection=SelectionConfig().set(close_ups__share=0.0))
    assert len(_crop_quiet(_photo(shape), [a, b], cfg=off)[0].crops) == 1


def test_a_group_no_crop_can_part_is_one_slide_at_k_auto_and_the_note_says_why():
    shape = (500, 520)
    # the bodies themselves overlap: every crop of one person cuts the other; the pair's slide is over
    # close_ups.share of the photo, so each would otherwise get a close-up
    a = _masked_person(shape, Box(120, 40, 160, 420), Box(110, 30, 180, 440))
    b = _masked_person(shape, Box(220, 40, 160, 420), Box(210, 30, 180, 440), score=0.8)
    res, _ = _crop_quiet(_photo(shape), [a, b])
    assert len(res.crops) == 1 and res.crops[0].box.area > SelectionConfig().close_ups.share * 500 * 520
    assert "the group of 2 people is one slide: no crop of fewer of them holds each whole without cutting another" \
        in res.notes
    # the same pair small in a larger photo: its slide is already a close view, and no such note
    big = (900, 940)
    a = _masked_person(big, Box(120, 40, 160, 420), Box(110, 30, 180, 440))
    b = _masked_person(big, Box(220, 40, 160, 420), Box(210, 30, 180, 440), score=0.8)
    res, _ = _crop_quiet(_photo(big), [a, b])
    assert not any("one slide" in n for n in res.notes)
    # members a crop can part get their close-ups, and no such note
    shape = (560, 600)
    a = _masked_person(shape, Box(110, 110, 130, 420), Box(100, 100, 190, 440))
    b = _masked_person(shape, Box(320, 110, 130, 420), Box(260, 100, 200, 440), score=0.8)
    res, _ = _crop_quiet(_photo(shape), [a, b])
    assert len(res.crops) == 3 and not any("one slide" in n for n in res.notes)


def test_a_fixed_k_is_filled_by_a_close_up_and_the_note_says_so():
    shape = (560, 600)
    a = _masked_person(shape, Box(110, 110, 130, 420), Box(100, 100, 190, 440))
    b = _masked_person(shape, Box(320, 110, 130, 420), Box(260, 100, 200, 440), score=0.8)
    cfg = CropConfig(strategy="direct", k=4, saliency="spectral", detectors=())
    # no pose sees a face: nobody gets a portrait, even with portraits on (the default)
    assert cfg.selection.close_ups.portraits
    res, _ = _crop_quiet(_photo(shape), [a, b], cfg=cfg)
    assert len(res.crops) == 3
    short = [n for n in res.notes if "asked for" in n]
    assert short == ["this photo has 1 distinct subject and 2 close-ups worth a crop; wrote 3 crops, asked for 4 "
                     "(no other framing of the group of 2 people holds it whole without a cut and differs enough from the "
                     "crops chosen)"]
    # where the pose sees their faces: the pair, each person whole, then a zoom to one person's upper body
    a = _masked_person(shape, Box(110, 110, 130, 420), Box(100, 100, 190, 440), face=True)
    b = _masked_person(shape, Box(320, 110, 130, 420), Box(260, 100, 200, 440), score=0.8, face=True)
    res, _ = _crop_quiet(_photo(shape), [a, b], cfg=cfg)
    assert len(res.crops) == 4 and not any("asked for" in n for n in res.notes)
    whole = [sum(_held(c.box, p.box) >= 0.99 for p in (a, b)) for c in res.crops]
    assert whole[:3] == [2, 1, 1] and whole[3] == 0
    # the last one is a portrait: its bottom edge cuts one person between chest and waist, nobody else is touched
    held = [_mask_held(res.crops[3].box, p.mask) for p in (a, b)]
    assert sorted(held)[0] <= 0.01 and 0.2 < sorted(held)[1] < 0.9, held
    person = (a, b)[int(np.argmax(held))].box
    assert res.crops[3].box.y <= person.y + 1 and res.crops[3].box.y2 < person.y2
    # with k auto the carousel stops at the people whole (no portrait)
    auto = _crop_quiet(_photo(shape), [a, b], cfg=cfg.replace(k="auto"))[0]
    assert len(auto.crops) == 3
    # portraits off: k is short again, as without faces
    off = cfg.replace(selection=cfg.selection.set(close_ups__portraits=False))
    assert len(_crop_quiet(_photo(shape), [a, b], cfg=off)[0].crops) == 3


def test_a_close_up_that_would_slice_a_neighbour_is_not_made():
    shape = (560, 600)
    # The masks touch: no crop holds one person whole without a slice of the other.
    a = _masked_person(shape, Box(100, 100, 190, 440), Box(100, 100, 190, 440))
    b = _masked_person(shape, Box(260, 100, 200, 440), Box(260, 100, 200, 440), score=0.8)
    res, _ = _crop_quiet(_photo(shape), [a, b])
    assert len(res.crops) == 1 and not any("close-up" in n for n in res.notes)


def test_many_small_people_close_together_are_one_crowd_guard_never_cut_through():
    shape = (600, 900)
    sal = np.zeros(shape, np.float32)
    crowd = [_person(300 + 40 * i, 420, 30, 80, score=0.5) for i in range(8)]   # 0.44 % of the frame each
    subs = find_subjects(sal, crowd + [_person(60, 100, 140, 420)])
    guards = [s for s in subs if s.kind == "crowd"]
    assert len(guards) == 1 and guards[0].label == "crowd of 8" and guards[0].importance == 0
    assert guards[0].box == Box(300, 420, 310, 80) and guards[0].bodies == (guards[0],)
    assert [s.kind for s in find_subjects(sal, crowd[:4])] == []               # four are not a crowd
    assert [s.kind for s in find_subjects(sal, crowd, config=SubjectConfig().set(crowds__min=0))] == []
    # A person standing in the middle of a crowd (a portrait photo, so that their crop is narrow):
    # a tight crop of them would hold part of the crowd.
    shape = (900, 640)
    street = [_person(30 + 70 * i, 700, 30, 80, score=0.5) for i in range(8)]
    dets = street + [_person(260, 380, 110, 400)]
    weight = next(s for s in find_subjects(np.zeros(shape, np.float32), dets) if s.kind == "crowd").weight

    def crowd_shares(cfg):
        res, _ = _crop_quiet(_photo(shape), dets, cfg=cfg)
        return [_mask_held(c.box, weight) for c in res.crops]
    shares = crowd_shares(CropConfig(strategy="direct", k=2, saliency="spectral", detectors=()))
    assert shares and all(v <= SelectionConfig().no_sliced_body.crowd or v >= 1 - SelectionConfig().no_sliced_body.crowd for v in shares), shares
    # without crowds the person's own tight framing goes through the crowd
    loose = crowd_shares(CropConfig(strategy="direct", k=2, saliency="spectral", detectors=(),
                                    subjects=SubjectConfig().set(crowds__min=0)))
    assert any(SelectionConfig().no_sliced_body.crowd < v < 1 - SelectionConfig().no_sliced_body.crowd for v in loose), loose


def test_a_group_with_an_object_member_may_cut_the_object_but_not_the_person():
    sal = np.zeros((600, 900), np.float32)
    table = Detection("object", "dining table", 67, Box(50, 350, 700, 200), 0.8)
    person = _person(200, 100, 150, 400)
    group = find_subjects(sal, [table, person])[0]
    assert len(group.members) == 2 and group.bodies == (next(m for m in group.members if m.kind == "person"),)


def _animal(x, y, w, h, score=0.8):
    return Detection("animal", "zebra", 24, Box(x, y, w, h), score)


def test_an_animal_behind_another_weighs_what_shows_of_it_and_the_one_in_front_gets_a_close_up():
    shape = (560, 600)
    sal = np.zeros(shape, np.float32)
    front = _animal(150, 220, 200, 300)                 # ends lower in the frame: nearer the camera
    back = _animal(300, 150, 200, 250)                  # its lower left corner hidden by the front one
    group = find_subjects(sal, [front, back])[0]
    assert len(group.members) == 2
    behind = next(m for m in group.members if m.box == back.box)
    assert next(m for m in group.members if m.box == front.box).weight is None
    hidden = behind.weight[220:400, 300:350]
    assert hidden.max() == 0 and behind.weight.sum() == 200 * 250 - 50 * 180
    res, _ = _crop_quiet(_photo(shape), [front, back])
    close = [c for c in res.crops[1:] if _held(c.box, front.box) >= SelectionConfig().holds_main.body_whole]
    assert len(close) == 1 and close[0].box.area <= SelectionConfig().close_ups.share * shape[0] * shape[1]
    seen = _mask_held(close[0].box, behind.weight)
    assert seen <= SelectionConfig().close_ups.sliver
    # no sliver allowed: no close-up
    strict = CropConfig(strategy="direct", k="auto", saliency="spectral", detectors=(),
                        selection=SelectionConfig().set(close_ups__sliver=SelectionConfig().no_sliced_body.sliver))
    assert not any(_held(c.box, front.box) >= SelectionConfig().holds_main.body_whole for c in _crop_quiet(_photo(shape), [front, back],
                                                                               cfg=strict)[0].crops[1:])


def test_two_overlapping_boxes_that_end_level_are_not_one_behind_the_other():
    sal = np.zeros((560, 600), np.float32)
    # a detector's fragment beside the whole animal ends 11 px lower: under a tenth of the whole one's height
    fragment, whole = _animal(280, 96, 156, 275), _animal(372, 64, 228, 296)
    group = find_subjects(sal, [fragment, whole])[0]
    assert len(group.members) == 2 and all(m.weight is None for m in group.members)
    level = SubjectConfig().set(groups__behind_margin=0.0)
    assert any(m.weight is not None for m in find_subjects(sal, [fragment, whole], config=level)[0].members)


def test_a_close_up_follows_the_crop_of_its_own_subject():
    shape = (560, 900)
    a = _masked_person(shape, Box(110, 110, 130, 420), Box(100, 100, 190, 440))
    b = _masked_person(shape, Box(320, 110, 130, 420), Box(260, 100, 200, 440), score=0.8)
    c = _person(720, 300, 80, 200)                      # apart, smaller: a subject of its own, taken second
    res, an = _crop_quiet(_photo(shape), [a, b, c], cfg=CropConfig(
        strategy="direct", k="auto", saliency="spectral", detectors=(), selection=SelectionConfig().set(close_ups__share=0.3)))
    labels = [an.subjects[m].label for m in res.mains]
    assert labels[0] == "group of 2 people" and labels.count("group of 2 people") >= 2 and "person" in labels
    # the crops of one subject are one run: its close-ups right after its first crop
    runs = [m for n, m in enumerate(res.mains) if n == 0 or res.mains[n - 1] != m]
    assert len(runs) == len(set(runs)), res.mains


def test_a_texture_spread_over_the_frame_has_no_subject_and_gets_views_of_the_scene():
    spots = np.zeros((600, 900), np.float32)
    for i in range(6):
        spots[100 + 60 * (i % 2):140 + 60 * (i % 2), 60 + 140 * i:100 + 140 * i] = 1.0
    texture = np.maximum(spots, 0.2)     # the bright specks hold 5 % of the map's saliency
    assert find_subjects(texture) == ()
    assert len(find_subjects(spots)) >= 1 and all(s.kind == "salient" for s in find_subjects(spots))
    assert len(find_subjects(texture, config=SubjectConfig().set(salient__scene_share=0.0))) >= 1
    res, _ = _crop_quiet(_photo(), [], saliency=texture)  # views of the scene, not one slide per speck
    assert len(res.crops) == 2 and res.notes[0] == ("no subject found (no person, animal or thing detected, nothing "
                                                    "salient): one view of the scene and 1 closer view inside it")


def _two_apart(shape=(560, 600)):
    """Two people whose boxes overlap and whose bodies do not: one group, a close-up of each."""
    return (_masked_person(shape, Box(110, 110, 130, 420), Box(100, 100, 190, 440)),
            _masked_person(shape, Box(320, 110, 130, 420), Box(260, 100, 200, 440), score=0.8))


def _forced_pair(k: int):
    """:func:`_two_apart` cropped with ``force_k`` to ``k``: the pair, the config and the result."""
    shape = (560, 600)
    pair = _two_apart(shape)
    cfg = CropConfig(strategy="direct", k=k, force_k=True, saliency="spectral", detectors=())
    return pair, cfg, _crop_quiet(_photo(shape), list(pair), cfg=cfg)[0]


def test_force_k_fills_keep_apart_from_the_close_ups():
    _, cfg, res = _forced_pair(5)
    assert len(res.crops) == 5
    close, fills = res.crops[1:3], res.crops[3:]
    for f in fills:
        for c in close:
            assert iou(f.box, c.box) <= cfg.nms_iou + 1e-9, (f.box, c.box)
    assert any("force_k" in n and "2 showing no new subject" in n for n in res.notes)


def test_k_auto_gives_a_small_detail_no_crop_of_its_own_and_a_fixed_k_frames_it():
    shape = (600, 900)
    img = _photo(shape)
    person = _person(100, 100, 200, 420)                      # 15.6 % of the frame
    dog = Detection("animal", "dog", 18, Box(650, 470, 100, 80), 0.8)   # 1.5 %: above min_subject_area
    res, _ = _crop_quiet(img, [person, dog], ONE_SLIDE)
    assert len(res.crops) == 1 and _held(res.crops[0].box, person.box) >= 0.99
    assert _held(res.crops[0].box, dog.box) <= 0.01
    note = "1 small subject beside larger ones not framed: k auto leaves details out; a fixed k frames them"
    assert note in res.notes
    # the carousel's second slide (objective.min_slides) zooms on the person, not on the detail
    res, _ = _crop_quiet(img, [person, dog])
    assert len(res.crops) == 2 and all(_held(c.box, dog.box) <= 0.01 for c in res.crops)
    # the rule switched off, or a fixed k: the dog gets its crop
    off = CFG.replace(selection=CFG.selection.set(details__area=0.0))
    for cfg in (off, CFG.replace(k=2)):
        res, _ = _crop_quiet(img, [person, dog], cfg)
        assert len(res.crops) == 2 and any(_held(c.box, dog.box) >= 0.99 for c in res.crops)
        assert not any("not framed" in n for n in res.notes)


def test_a_detail_beside_subjects_of_its_own_size_is_a_subject():
    shape = (600, 900)
    img = _photo(shape)
    dogs = [Detection("animal", "dog", 18, Box(x, 470, 100, 80), 0.8) for x in (100, 650)]  # 1.5 % each
    res, _ = _crop_quiet(img, dogs)
    assert len(res.crops) == 2


def test_an_animal_or_vehicle_too_small_to_frame_is_never_sliced():
    shape = (600, 900)
    img = _photo(shape)
    person = _person(300, 150, 160, 420)
    car = Detection("vehicle", "car", 3, Box(470, 90, 60, 45), 0.6)   # 0.5 % of the frame, beside the head
    subs = find_subjects(np.zeros(shape, np.float32), [person, car])
    assert [(s.kind, s.importance > 0) for s in subs] == [("person", True), ("vehicle", False)]

    def sliced(cfg):
        res, _ = _crop_quiet(img, [person, car], cfg)
        assert res.crops
        return [round(_held(c.box, car.box), 2) for c in res.crops if 0.01 < _held(c.box, car.box) < 0.99]

    assert sliced(CFG) == []
    # without the guard the person's best framing takes part of the car
    assert sliced(CFG.replace(subjects=CFG.subjects.set(guards__area=1.0))) != []


def test_a_close_up_may_leave_a_masked_neighbour_its_last_tenth_but_no_more():
    from multicrop.crop.direct import close_ups
    from multicrop.crop.direct.measure import MaskTables
    from multicrop.crop.scoring import ScoringContext, get_scorer

    shape = (400, 900)

    def rect(b):
        m = np.zeros(shape, np.float32)
        m[int(b.y):int(b.y2), int(b.x):int(b.x2)] = 1
        return m

    # a and b overlap: a close-up of a holds b too; the horse's box starts inside b's mask, so the
    # close-up's edge must stop where b is held 91.6 % (under body_whole, over zoom_mask_whole).
    a, b, horse = Box(100, 100, 100, 200), Box(190, 100, 95, 200), Box(278, 100, 322, 200)
    dets = [Detection("person", "person", 1, a, 0.9, mask=rect(a)),
            Detection("person", "person", 1, b, 0.85, mask=rect(b)),
            Detection("animal", "horse", 19, horse, 0.8)]
    sal = np.zeros(shape, np.float32)
    ctx = ScoringContext(np.full((*shape, 3), 90, np.uint8), sal, ())

    def ups(mask_whole):
        cfg = CFG.replace(selection=CFG.selection.set(close_ups__mask_whole=mask_whole))
        subs = find_subjects(sal, dets, config=cfg.subjects)
        return close_ups(ctx, get_scorer(cfg), cfg.selection, cfg.candidates, bounds=Box(0, 0, 900, 400),
                         min_side=16, ratios=cfg.ratios, subjects=[s for s in subs if s.importance > 0],
                         guards=[s for s in subs if s.importance <= 0], chosen=[Box(0, 0, 600, 400)], n=3,
                         tables=MaskTables())

    out = ups(0.9)
    assert len(out) == 1
    box = out[0][0].box
    assert _mask_held(box, rect(a)) >= 0.99 and 0.9 <= _mask_held(box, rect(b)) < 0.99
    assert _held(box, horse) <= SelectionConfig().no_sliced_body.sliver
    assert ups(0.99) == []


def test_a_small_body_is_a_detail_only_beside_a_larger_detected_one_not_beside_a_bright_patch():
    shape = (600, 900)
    img = _photo(shape)
    plane = Detection("vehicle", "airplane", 5, Box(650, 100, 100, 80), 0.8)   # 1.5 % of the frame
    sal = np.zeros(shape, np.float32)
    sal[300:550, 50:450] = 1.0                                                 # a bright island: 18.5 %
    res, a = _crop_quiet(img, [plane], saliency=sal)
    assert sorted(s.kind for s in a.subjects) == ["salient", "vehicle"]
    assert len(res.crops) == 2 and any(_held(c.box, plane.box) >= 0.99 for c in res.crops)
    # beside a larger detected body the same plane is a detail
    big = Detection("vehicle", "airplane", 5, Box(50, 300, 400, 250), 0.8)
    res, _ = _crop_quiet(img, [plane, big], ONE_SLIDE)
    assert len(res.crops) == 1 and any("1 small subject" in n for n in res.notes)
    res, _ = _crop_quiet(img, [plane, big])
    assert not any(_held(c.box, plane.box) > 0.01 for c in res.crops)


def test_k_auto_leaves_a_thing_no_detector_names_to_a_larger_person_beside_it():
    shape = (600, 900)
    img = _photo(shape)
    person = _person(60, 20, 300, 560)                       # 31 % of the frame

    def crops(blob: Box, **selection):
        sal = np.zeros(shape, np.float32)
        sal[int(blob.y):int(blob.y2), int(blob.x):int(blob.x2)] = 1.0
        res, a = _crop_quiet(img, [person], CFG.replace(selection=CFG.selection.set(objective__min_slides=1, **selection)),
                             sal)
        assert sorted(s.kind for s in a.subjects) == ["person", "salient"]
        return res.crops

    tap = Box(600, 60, 130, 100)                             # 2.4 %: no detail by size alone; 7.7 % of the person
    assert len(crops(tap)) == 1
    assert len(crops(tap, details__salient=0.0)) == 2
    sign = Box(600, 60, 200, 150)                            # 18 % of the person's box: its own slide
    assert len(crops(sign)) == 2
    assert len(crops(sign, details__salient=0.25)) == 1
    arch = Box(450, 50, 420, 300)                            # three quarters of the person's box: its own slide
    assert len(crops(arch)) == 2


def test_a_crop_that_must_cut_says_why_and_one_that_need_not_says_nothing():
    shape = (600, 600)
    img = _photo(shape)
    # a horse wider than any 2:3 crop and taller than any 3:2 crop of the square photo
    horse = Detection("animal", "horse", 19, Box(20, 20, 560, 560), 0.9)
    res, _ = _crop_quiet(img, [horse])
    assert len(res.crops) == 1 and _held(res.crops[0].box, horse.box) < 0.99
    assert res.notes[0] == "crop 1 cuts through 1 horse: no candidate of the allowed ratios frames the horse without a cut"
    small = Detection("animal", "horse", 19, Box(100, 100, 300, 300), 0.9)
    res, _ = _crop_quiet(img, [small])
    assert _held(res.crops[0].box, small.box) >= 0.99 and not any("cuts" in n for n in res.notes)
    # direct selection counts the crops that slice a body (one_ratio weighs them, test_one_ratio.py)
    sal = np.zeros(shape, np.float32)
    for det, cut in ((horse, 1), (small, 0)):
        sel = select_direct(ScoringContext(img, sal), get_scorer(CFG), CFG, bounds=Box(0, 0, 600, 600), min_side=16,
                            subjects=tuple(find_subjects(sal, [det], config=CFG.subjects)))
        assert len(sel.crops) == 1 and sel.cut == cut


def _nested(a: Box, b: Box) -> float:
    """Share of the smaller box's area inside the larger one."""
    iw = max(0.0, min(a.x2, b.x2) - max(a.x, b.x))
    ih = max(0.0, min(a.y2, b.y2) - max(a.y, b.y))
    return iw * ih / min(a.area, b.area)


def test_a_fixed_k_goes_on_with_zooms_of_the_subject_shown():
    # One standing person small in a wide photo, k = 3: the person's framing, then zooms in or out of
    # it (one box within the other), each holding the person whole; the notes count them.
    shape = (500, 1000)
    p = _masked_person(shape, Box(460, 150, 80, 250), Box(450, 140, 100, 270))
    cfg = CropConfig(strategy="direct", k=3, saliency="spectral", detectors=())
    res, _ = _crop_quiet(_photo(shape), [p], cfg=cfg)
    assert len(res.crops) == 3
    first = res.crops[0].box
    mask = _ellipse_mask(shape, Box(460, 150, 80, 250))
    for c in res.crops:
        assert _mask_held(c.box, mask) >= 0.99
    for c in res.crops[1:]:
        assert _nested(c.box, first) >= SelectionConfig().close_ups.inside - 1e-6
        assert iou(c.box, first) <= SelectionConfig().close_ups.iou + 1e-6
    assert "2 zooms in or out of a subject another crop shows" in res.notes
    assert not any("asked for" in n for n in res.notes)
    areas = [c.box.area for c in res.crops]  # the wide view first: a zoom out comes before the crop it holds
    assert areas == sorted(areas, reverse=True), areas
    # zooms off: the one framing, and the note says which subject left k short
    off = cfg.replace(selection=cfg.selection.set(close_ups__zooms=False))
    res, _ = _crop_quiet(_photo(shape), [p], cfg=off)
    assert len(res.crops) == 1
    assert any(n.endswith("asked for 3 (no other framing of the person holds it whole without a cut and differs "
                          "enough from the crops chosen)") for n in res.notes)


def test_zooms_never_hold_part_of_another_subject():
    # A person with a detected object beside it, k = 6: the fill goes on with zooms of the person, and
    # none of them holds the object by more than a sliver without holding it whole (before the rule, a
    # zoom out of the person's crop held 49 % of it).
    shape = (500, 1000)
    p = _masked_person(shape, Box(300, 150, 80, 250), Box(290, 140, 100, 270))
    cup = Detection("object", "cup", 47, Box(420, 260, 200, 100), 0.9)
    cfg = CropConfig(strategy="direct", k=6, saliency="spectral", detectors=())
    res, _ = _crop_quiet(_photo(shape), [p, cup], cfg=cfg)
    assert len(res.crops) == 6 and any("zooms in or out" in n for n in res.notes), res.notes
    for c in res.crops:
        held = _held(c.box, cup.box)
        assert held <= SelectionConfig().close_ups.sliver + 1e-6 or held >= 0.9 - 1e-6, (c.box, held)


def test_a_force_k_fill_that_slices_someone_says_so():
    (a, b), _, res = _forced_pair(6)
    assert len(res.crops) == 6
    sliced = [n + 1 for n, c in enumerate(res.crops)
              if any(0.01 < _mask_held(c.box, p.mask) < 0.99 for p in (a, b))]
    said = sorted(int(n.split()[1]) for n in res.notes if n.endswith("a fill asked for by force_k"))
    assert sliced and said == sliced          # every slicing fill is named, and only those


def test_k_auto_tops_a_one_slide_carousel_up_with_a_zoom_of_its_subject():
    """direct-17: where the objective stops at one slide, ``objective.min_slides`` asks for a second: a framing
    of the same subject nested in or around the first, cutting no one; ``min_slides`` 1 or ``max_k`` 1 keep one
    slide."""
    from multicrop.geometry import iou

    img = _photo()
    person = _person(100, 100, 200, 420)
    res, _ = _crop_quiet(img, [person])
    assert len(res.crops) == 2
    a, b = (c.box for c in res.crops)
    assert _held(a, person.box) >= 0.99 and _held(b, person.box) >= 0.99
    small, large = sorted((a, b), key=lambda x: x.area)
    assert _held(large, small) >= 0.9 and iou(a, b) <= SelectionConfig().close_ups.iou
    assert a == large  # the wide view first, whether the second slide zooms in or out
    assert "1 zoom in or out of a subject another crop shows" in res.notes
    one, _ = _crop_quiet(img, [person], ONE_SLIDE)
    assert [c.box for c in one.crops] == [a]
    capped, _ = _crop_quiet(img, [person], CFG.replace(max_k=1))
    assert [c.box for c in capped.crops] == [a]
    empty, _ = _crop_quiet(img, [])  # no subject: a view and a closer one (direct-20), not a zoom of a subject
    assert len(empty.crops) == 2 and empty.notes[0].startswith("no subject found")


def test_k_auto_tops_a_one_slide_carousel_of_things_up_with_a_closer_view():
    """direct-22: three dishes overlapping on a table, no person, animal or vehicle: the objective's one slide
    holds the middle dish whole and the left one in part, so every zoom of the middle dish holds part of another
    (no zoom) and nothing has a close-up.  The carousel gets a closer view inside its slide, as a photo with no
    subject does (direct-20), breaking no hard rule: it holds a dish whole and none by half.  With scene views
    off, or ``min_slides`` 1, one slide."""
    dishes = [Detection("object", "bowl", 51, b, 0.8)
              for b in (Box(115, 44, 332, 315), Box(355, 18, 245, 321), Box(77, 64, 265, 324))]
    res, a = _crop_quiet(_photo(), dishes)
    assert [s.label for s in a.subjects] == ["bowl"] * 3
    assert len(res.crops) == 2, res.notes
    wide, close = (c.box for c in res.crops)
    zoom = SelectionConfig().close_ups
    assert _held(wide, close) >= zoom.inside and iou(wide, close) <= zoom.iou + 1e-9
    held = [_held(close, d.box) for d in dishes]
    main = a.subjects[res.mains[0]].box  # the view looks closer at the slide's own subject
    assert _held(wide, main) >= 0.9 and _held(close, main) >= SelectionConfig().holds_main.whole - 1e-6
    assert res.mains[1] == -1  # a view has no main subject of its own
    assert not any(SelectionConfig().no_half_salient.hold <= h < 0.9 for h in held), held
    assert "1 closer view inside the first crop" in res.notes
    off = CFG.replace(selection=CFG.selection.set(scene_views__enabled=False))
    for cfg in (off, ONE_SLIDE):
        one, _ = _crop_quiet(_photo(), dishes, cfg=cfg)
        assert [c.box for c in one.crops] == [wide] and not any("closer view" in n for n in one.notes)


def test_the_closer_view_looks_at_the_slide_s_own_subject_and_is_a_zoom():
    """A review of direct-22: with ``--focus`` on a cup holding a bowl, the closer view held the bowl whole and the
    focused cup by 41 %; it must hold the slide's main subject (here the focus) whole.  And it is a zoom: with
    ``close_ups.zooms`` or ``close_ups.enabled`` off a one-slide carousel of a person stays one slide."""
    cfg = CFG.replace(ratios="2:3,3:2,1:1")
    dets = [Detection("object", "cup", 47, Box(319, 250, 303, 245), 0.844),
            Detection("object", "bowl", 51, Box(345, 297, 100, 133), 0.525)]
    focus = Box(319, 250, 303, 245)
    img = _photo()
    a = analyse(img, cfg, detections=dets)
    sal = np.zeros(img.shape[:2], np.float32)
    a = dataclasses.replace(a, saliency=sal, subjects=find_subjects(sal, dets, config=cfg.subjects))
    res = crop_photo(img, cfg, analysis=a, focus=focus)
    assert len(res.crops) == 2 and "1 closer view inside the first crop" in res.notes, res.notes
    assert _held(res.crops[1].box, focus) >= SelectionConfig().holds_main.whole - 1e-6
    person = _person(150, 200, 110, 230)
    two, _ = _crop_quiet(_photo(), [person])
    assert len(two.crops) == 2  # its zoom
    for off in ({"close_ups__zooms": False}, {"close_ups__enabled": False}):
        one, _ = _crop_quiet(_photo(), [person], cfg=CFG.replace(selection=CFG.selection.set(**off)))
        assert [c.box for c in one.crops] == [two.crops[0].box] and not any("closer" in n for n in one.notes)


def test_every_detected_body_is_seen_whole_on_some_slide():
    """direct-19: a large cat whose whole framings are all wide and hold a salient thing beside it lost to that
    thing at k auto: one slide of the thing, none of the cat (a held-out coco128 photo: remotes beside a cat).
    Now a slide holds the cat whole, and shows first, as the wider view; with the rule off the cat gets none."""
    shape = (600, 900)
    cat = Detection("animal", "cat", 17, Box(60, 60, 520, 520), 0.8)
    sal = np.zeros(shape, np.float32)
    sal[150:450, 560:860] = 1.0  # a salient thing no detector names, right of the cat and over its edge
    res, a = _crop_quiet(_photo(shape), [cat], saliency=sal)
    assert [s.kind for s in a.subjects] == ["animal", "salient"]
    held = [_held(c.box, cat.box) for c in res.crops]
    assert len(res.crops) == 2 and held[0] >= 0.99 and held[1] < 0.1, held
    assert _held(res.crops[0].box, res.crops[1].box) >= SelectionConfig().close_ups.inside  # the wide view first
    off = CFG.replace(selection=CFG.selection.set(every_body__enabled=False))
    res, _ = _crop_quiet(_photo(shape), [cat], cfg=off, saliency=sal)
    assert len(res.crops) == 1 and _held(res.crops[0].box, cat.box) < 0.1
    one, _ = _crop_quiet(_photo(shape), [cat], cfg=CFG.replace(max_k=1), saliency=sal)
    assert len(one.crops) == 1  # within k


def test_the_every_body_slide_slices_no_one():
    """A person, a car and a dog at k auto: every_body's slide for the car must break no hard rule, so it may not
    be a framing that cuts the dog (the loosened candidates of a subject nothing frames without a cut: a review
    found one holding 68 % of the dog, with a note blaming the ratios)."""
    dets = [Detection("person", "person", 1, Box(364, 48, 371, 227), 0.74),
            Detection("vehicle", "car", 3, Box(216, 454, 431, 104), 0.83),
            Detection("animal", "dog", 18, Box(269, 219, 155, 215), 0.92)]
    res, _ = _crop_quiet(_photo(), dets)
    sliced = [(n, d.label) for n, c in enumerate(res.crops) for d in dets if 0.02 < _held(c.box, d.box) < 0.98]
    assert sliced == [] and not any("cuts through" in n for n in res.notes), (sliced, res.notes)
    assert any(_held(c.box, dets[1].box) >= 0.99 for c in res.crops)  # the car is still seen whole


def test_a_fixed_k_short_of_k_counts_the_every_body_slide_once():
    """The cat beside a salient thing at k = 3: the salient thing's slide, then the cat's (every_body), and the
    note says two distinct subjects and two crops (with the rule off: one slide, and no cat at all)."""
    from multicrop.crop.direct.notes import short_note

    cat = Detection("animal", "cat", 17, Box(60, 60, 520, 520), 0.8)
    sal = np.zeros((600, 900), np.float32)
    sal[150:450, 560:860] = 1.0
    res, _ = _crop_quiet(_photo(), [cat], cfg=CFG.replace(k=3), saliency=sal)
    assert len(res.crops) == 2 and max(_held(c.box, cat.box) for c in res.crops) >= 0.99
    assert res.notes[0].startswith("this photo has 2 distinct subjects; wrote 2 crops, asked for 3")
    assert short_note(1, 3, force=False, wider=1) == ("this photo has 1 distinct subject and 1 wider view worth a "
                                                      "crop; wrote 2 crops, asked for 3")
    assert short_note(1, 4, force=True, wider=1).endswith("wrote 4 crops as asked (force_k), 2 showing no new subject")


def test_a_subject_with_only_a_close_up_gets_its_every_body_slide_counted_as_distinct():
    """A review's fuzz: the cat's slide and the group's close-up came first, then every_body's slide of the group
    whole; the short note called that slide a 'wider view' of a subject shown before (only the close-up showed it)."""
    dets = [Detection("animal", "cat", 17, Box(27, 335, 243, 169), 0.8),
            Detection("person", "person", 1, Box(251, 127, 437, 269), 0.8),
            Detection("vehicle", "car", 3, Box(294, 373, 71, 145), 0.8),
            Detection("animal", "horse", 19, Box(268, 327, 350, 108), 0.8)]
    res, _ = _crop_quiet(_photo(), dets, cfg=CFG.replace(k=4))
    assert res.notes[0].startswith("this photo has 2 distinct subjects and 1 close-up worth a crop; wrote 3 crops"), \
        res.notes[0]


def test_with_a_focus_no_wider_slide_goes_before_the_focus_crop():
    """The wide view first, but the user's focus leads: the slides every_body and the top-up add (here a wider view
    holding the focus crop) come after it (before this test they went first)."""
    person = _person(300, 100, 150, 300)
    focus = Box(345, 250, 60, 90)
    img = _photo()
    sal = np.zeros(img.shape[:2], np.float32)

    def run(cfg):
        a = analyse(img, cfg, detections=[person])
        a = dataclasses.replace(a, saliency=sal, subjects=find_subjects(sal, [person], config=cfg.subjects, focus=focus),
                                focus=focus)
        return crop_photo(img, cfg, analysis=a, focus=focus)

    res = run(CFG)
    alone = run(CFG.replace(selection=CFG.selection.set(objective__min_slides=1, every_body__enabled=False)))
    assert res.crops[0].box == alone.crops[0].box and "the focus given is held by the first crop" in res.notes
    inside = SelectionConfig().close_ups.inside
    assert any(_held(c.box, res.crops[0].box) >= inside for c in res.crops[1:])  # a wider view, after it


def test_a_zoom_out_comes_before_the_crop_it_holds():
    """The wide view first: a small person's tight framing is topped up with a wider view of them, and the
    carousel shows the wider one first, then zooms in (before, the wider view came second)."""
    person = _person(200, 150, 80, 120)
    res, _ = _crop_quiet(_photo(), [person])
    assert len(res.crops) == 2 and "1 zoom in or out of a subject another crop shows" in res.notes
    wide, tight = (c.box for c in res.crops)
    assert wide.area > tight.area and _held(wide, tight) >= SelectionConfig().close_ups.inside
    one, _ = _crop_quiet(_photo(), [person], ONE_SLIDE)
    assert [c.box for c in one.crops] == [tight]  # the objective's own slide, now second


def test_k_auto_second_slide_is_a_portrait_of_a_person_whose_face_is_seen():
    """direct-17: the top-up tries portraits (face seen, cut at a portrait line) before zooms, and says so."""
    shape = (600, 900)
    a = _masked_person(shape, Box(110, 110, 130, 420), Box(100, 100, 150, 440), face=True)
    res, _ = _crop_quiet(_photo(shape), [a])
    assert len(res.crops) == 2
    whole, portrait = (c.box for c in res.crops)
    assert _mask_held(whole, a.mask) >= 0.99 and 0.2 < _mask_held(portrait, a.mask) < 0.99
    assert portrait.y <= a.box.y and portrait.y2 < a.box.y2          # the head held, cut below
    assert "1 portrait of a person another crop shows whole, cut at the chest or waist" in res.notes
    one, _ = _crop_quiet(_photo(shape), [a], ONE_SLIDE)
    assert [c.box for c in one.crops] == [whole]


def test_notes_follow_k_autos_second_slide():
    """A group topped up with a zoom is no longer "one slide"; a detail the zoom holds whole is not "not framed"."""
    shape = (600, 900)
    x0, y0, bw, bh = 202.5, 90.0, 306.9, 420.0
    a = _masked_person(shape, Box(x0 + 5, y0 + 5, bw - 10, bh - 10), Box(x0, y0, bw, bh))
    b = _masked_person(shape, Box(x0 + 495 - bw + 5, y0 + 5, bw - 10, bh - 10), Box(x0 + 495 - bw, y0, bw, bh),
                       score=0.8)
    res, _ = _crop_quiet(_photo(shape), [a, b])
    assert len(res.crops) == 2 and "1 zoom in or out of a subject another crop shows" in res.notes
    assert not any("is one slide" in n for n in res.notes)
    one, _ = _crop_quiet(_photo(shape), [a, b], ONE_SLIDE)
    assert len(one.crops) == 1 and any("is one slide" in n for n in one.notes)

    person = _person(100, 100, 200, 420)
    dog = Detection("animal", "dog", 18, Box(330, 480, 100, 80), 0.8)
    res, _ = _crop_quiet(_photo(shape), [person, dog])
    assert len(res.crops) == 2 and _held(res.crops[0].box, dog.box) >= 0.99  # the zoom out, shown first
    assert not any("not framed" in n for n in res.notes)
    one, _ = _crop_quiet(_photo(shape), [person, dog], ONE_SLIDE)
    assert len(one.crops) == 1 and any("not framed" in n for n in one.notes)


def test_k_autos_second_slide_does_not_choose_the_ratio_of_one_ratio_sets():
    """With one ratio for every slide, the ratio is chosen on the slides the objective chose: a ratio is not
    preferred because it can add a top-up slide (direct-17's ``topped``)."""
    from multicrop.ratios import Ratio

    ratios = (Ratio(4, 5), Ratio(1, 1), Ratio(1.91, 1))
    img, person = _photo((700, 700)), _person(44, 129, 489, 294)
    got = {}
    for n in (1, 2):
        cfg = CFG.replace(ratios=ratios, one_ratio=True, selection=CFG.selection.set(objective__min_slides=n))
        res, _ = _crop_quiet(img, [person], cfg)
        got[n] = [c.ratio for c in res.crops]
    assert got[1] == [Ratio(1.91, 1)] and got[2][0] == Ratio(1.91, 1)


def test_a_slides_alternatives_never_repeat_a_slide_that_follows():
    """A judge's pick among a slide's alternatives must not turn it into a copy of the zoom after it: each
    alternative overlaps every other slide by at most IoU ``close_ups.iou`` (or what the slide itself does)."""
    from multicrop.geometry import iou

    img, dets = _photo(), [_person(100, 100, 200, 420)]
    a = analyse(img, CFG, detections=dets)
    sal = np.zeros(img.shape[:2], np.float32)
    a = dataclasses.replace(a, saliency=sal, subjects=find_subjects(sal, dets, config=CFG.subjects))
    res = crop_photo(img, CFG, analysis=a, shortlist=4)
    assert len(res.crops) == 2 and len(res.shortlists) == 2
    limit = SelectionConfig().close_ups.iou
    for n, alts in enumerate(res.shortlists):
        assert alts[0].box == res.crops[n].box
        other = res.crops[1 - n].box
        assert all(iou(x.box, other) <= max(limit, iou(res.crops[n].box, other)) + 1e-9 for x in alts[1:])
    assert len(res.shortlists[0]) >= 2  # the rule thins the list, it does not empty it
