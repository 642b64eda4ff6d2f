"""The rules as objects: one contract for every rule, the settings split, old keys, the rules table."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from multicrop.crop.pipeline import crop_photo
from multicrop.crop.analysis import settings_key
from multicrop.crop.config import CropConfig, SelectionConfig, SubjectConfig
from multicrop.crop.direct.measure import MaskTables, measure
from multicrop.crop.direct.rules import HardRule, SoftTerm, rule_table
from multicrop.crop.direct.zoom import sub_groups
from multicrop.crop.scoring import ScoringContext
from multicrop.crop.subjects import Subject
from multicrop.errors import ImageTooSmallError, InvalidParameterError
from multicrop.geometry import Box
from multicrop.ratios import Ratio

DOCS = Path(__file__).resolve().parents[3] / "docs" / "cropping.md"
RULES = SelectionConfig().rules()


def _person(x, y, w, h, **kw):
    return Subject("person", Box(x, y, w, h), 0.9, 1.0, "detector", "person", **kw)


def _scene():
    """Two people and a salient thing, a face on the first person; candidates of every kind."""
    shape = (300, 600)
    kp = np.zeros((33, 3))
    kp[[0, 7, 8]] = [[118, 80, 1], [92, 80, 1], [108, 80, 1]]  # nose well right of the ears: faces right
    a, b = _person(60, 60, 80, 220, keypoints=kp), _person(300, 70, 90, 210)
    thing = Subject("salient", Box(480, 100, 60, 60), 1.0, 0.5, "saliency", "salient")
    ctx = ScoringContext(np.full((*shape, 3), 90, np.uint8), np.zeros(shape, np.float32), (Box(80, 65, 40, 40),))
    r = Ratio(2, 3)
    boxes = [Box(40, 40, 140, 210), Box(100, 40, 140, 210), Box(70, 90, 120, 180), Box(20, 10, 193, 290),
             Box(450, 40, 100, 150), Box(500, 40, 100, 150), Box(280, 40, 140, 210)]
    pool = [(bx, r) for bx in boxes] + [(Box(0, 0, 450, 300), Ratio(3, 2))]  # wide, landscape, holds two
    m = measure(ctx, pool, [a, b, thing], [a, b], Box(0, 0, 600, 300), MaskTables())
    return m, np.array([0, 0, 0, 0, 2, 2, 1, 0])


@pytest.mark.parametrize("name", list(RULES))
def test_every_rule_has_a_reason_and_its_off_switch_changes_its_own_scenario(name):
    rule = RULES[name]
    assert type(rule).reason and dataclasses.is_dataclass(rule)
    assert "->" in type(rule).evidence or type(rule).evidence.startswith("off: "), \
        "the evidence is a scoreboard line: what moved when the rule was off or changed"
    with pytest.raises(dataclasses.FrozenInstanceError):
        rule.enabled = False  # type: ignore[misc]
    off = rule.set(enabled=False)
    m, main = _scene()
    if isinstance(rule, HardRule):
        assert rule.violations(m).any(), "the scenario breaks every hard rule somewhere"
        assert not off.violations(m).any()
    elif isinstance(rule, SoftTerm):
        kw = {"ratios": (Ratio(2, 3), Ratio(3, 2))} if name == "not_too_wide" else {}
        on = rule.term(m, main, **kw)
        assert np.abs(on).max() > 0 and not np.abs(off.term(m, main, **kw)).any()
    else:  # stage rules: close-ups and details, their off switch is read by selection (tests/crop/test_subjects.py)
        assert rule.enabled and not off.enabled


def test_settings_are_few_and_only_the_subjects_enter_the_analysis_key():
    assert len(dataclasses.fields(SelectionConfig)) + len(dataclasses.fields(SubjectConfig)) <= 25
    cfg = CropConfig()
    assert settings_key(cfg) == settings_key(cfg.replace(selection=cfg.selection.set(objective__overlap_weight=1.0)))
    assert settings_key(cfg) != settings_key(cfg.replace(subjects=cfg.subjects.set(groups__overlap=0.3)))


def test_old_flat_direct_settings_load_through_the_key_table():
    cfg = CropConfig.from_dict({"k": 3, "direct": {"zoom_share": 0.0, "min_person_score": 0.6, "body_whole": 0.97}})
    assert cfg.selection.close_ups.share == 0.0 and cfg.subjects.detections.min_person_score == 0.6
    # a key that fed two rules sets both
    assert cfg.selection.holds_main.body_whole == 0.97 and cfg.selection.no_sliced_body.whole == 0.97
    assert CropConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(InvalidParameterError, match="direct: unknown key 'colour'"):
        CropConfig.from_dict({"direct": {"colour": 1}})
    with pytest.raises(InvalidParameterError, match=r"SelectionConfig: unknown setting 'zoom'"):
        SelectionConfig().set(zoom__share=0.1)
    with pytest.raises(InvalidParameterError, match=r"CloseUps.share must be in \[0, 1\], got 2"):
        SelectionConfig().set(close_ups__share=2)


def test_the_rules_table_in_the_docs_is_the_code_s():
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(r"<!-- rules-table -->\n(.*?)\n<!-- /rules-table -->", text, re.S)
    assert found is not None and found.group(1).strip() == rule_table(RULES).strip()


def test_a_row_of_eight_has_sub_groups_of_neighbours_up_to_half_of_it():
    row = tuple(_person(20 + 60 * i, 50, 50, 150) for i in range(8))
    group = Subject("person", Box(20, 50, 470, 150), 0.9, 1.0, "detector", "group of 8", members=row[::-1])
    runs = sub_groups(group)
    assert {len(r) for r in runs} == {2, 3, 4}
    assert len(runs) == 7 + 6 + 5
    for r in runs:  # neighbours, left to right
        xs = [m.box.x for m in r]
        assert xs == sorted(xs) and all(b - a == pytest.approx(60) for a, b in zip(xs, xs[1:]))
    assert sub_groups(group, enabled=False) == [] and sub_groups(row[0]) == []


@pytest.mark.parametrize("ratios", ["1:1000", "1000000:1"])
def test_a_ratio_no_crop_can_meet_is_one_clear_error(ratios):
    img = np.full((400, 600, 3), 90, np.uint8)
    img[150:250, 250:350] = 230
    cfg = CropConfig(k="auto", ratios=ratios, saliency="spectral", detectors=())
    with pytest.raises(ImageTooSmallError, match=r"no crop of ratio .* fits a photo of 600x400"):
        crop_photo(img, cfg)


def test_a_tiny_photo_at_k_auto_is_one_clear_error_or_a_crop():
    img = np.full((64, 64, 3), 90, np.uint8)
    img[20:40, 20:40] = 230
    cfg = CropConfig(k="auto", saliency="spectral", detectors=())
    try:
        res = crop_photo(img, cfg)
    except ImageTooSmallError as exc:
        assert "64x64" in str(exc) and "\n" not in str(exc)
    else:
        assert 1 <= len(res.crops) and all(min(c.box.w, c.box.h) >= cfg.min_crop_side for c in res.crops)


def test_a_body_s_outline_decides_when_it_is_left_out_and_its_box_when_it_is_whole():
    # A car whose box (200..400) is mostly empty: the thing itself is a disc at 300.  A crop ending at
    # x = 230 overlaps the box by 15 % but shows none of the disc.
    shape = (300, 600)
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    disc = (((xx - 300) ** 2 + (yy - 150) ** 2) <= 60 ** 2).astype(np.float32)
    box = Box(200, 50, 200, 200)
    bare = Subject("vehicle", box, 0.9, 1.0, "detector", "car")
    outlined = dataclasses.replace(bare, outline=disc)
    ctx = ScoringContext(np.full((*shape, 3), 90, np.uint8), np.zeros(shape, np.float32), ())
    r = Ratio(2, 3)
    pool = [(Box(30, 0, 200, 300), r), (Box(250, 0, 200, 300), r), (Box(190, 0, 200, 300), r)]
    rule = SelectionConfig().no_sliced_body
    for body, sliced in ((bare, [True, True, True]), (outlined, [False, True, True])):
        m = measure(ctx, pool, [body], [body], Box(0, 0, 600, 300), MaskTables())
        assert rule.sliced(m)[:, 0].tolist() == sliced
    # whole is still the box: the crop holding the disc but not the box's right edge slices it
    m = measure(ctx, pool, [outlined], [outlined], Box(0, 0, 600, 300), MaskTables())
    assert m.out_shares[2, 0] == pytest.approx(1.0) and m.body_shares[2, 0] < rule.whole


def test_outlines_come_from_trusted_saliency_masks_and_are_off_by_default():
    from multicrop.crop.subjects import find_subjects
    from multicrop.detectors.types import Detection

    yy, xx = np.mgrid[:300, :600]
    sal = np.where(((xx - 300) ** 2 + (yy - 150) ** 2) <= 60 ** 2, 0.9, 0.05).astype(np.float32)
    car = Detection("vehicle", "car", 3, Box(200, 50, 200, 200), 0.9)
    assert all(s.outline is None for s in find_subjects(sal, [car]))
    on = SubjectConfig().set(detections__outline_trust=0.6)
    (s,) = find_subjects(sal, [car], config=on)
    assert s.outline is not None and 0.2 < s.outline.sum() / s.box.area < 0.4   # the disc, not the box
    flat = np.full((300, 600), 0.5, np.float32)   # a flat map: no mask to trust
    assert find_subjects(flat, [car], config=on)[0].outline is None


def test_a_subject_no_crop_holds_whole_keeps_its_face_before_its_last_few_percent():
    """When every framing must cut the subject, one that keeps the face whole beats a few points more of
    the body through the face (a man cut at the eyebrows by the top edge, coco-subjects ...165)."""
    from multicrop.crop.direct.quality import valid

    shape = (300, 600)
    tall = _person(100, 20, 100, 260)  # taller than any candidate: every crop cuts him
    ctx = ScoringContext(np.full((*shape, 3), 90, np.uint8), np.zeros(shape, np.float32), (Box(130, 20, 40, 40),))
    r = Ratio(2, 3)
    boxes = [Box(90, 30, 133, 200),   # 77 % of him, his face 75 % held: cut
             Box(90, 0, 120, 180),    # 62 %, his face whole (cut at a portrait line)
             Box(90, 40, 133, 200)]   # 77 %, half his face
    m = measure(ctx, [(b, r) for b in boxes], [tall], [tall], Box(0, 0, 600, 300), MaskTables())
    ok, cuts, portrait = valid(m, np.zeros(3, np.int64), SelectionConfig())
    assert (cuts + portrait).tolist() == [1, 1, 1]  # the middle one at a portrait line
    assert ok.tolist() == [False, True, False]
    # the face's rule off: the most of him again
    ok, _, _ = valid(m, np.zeros(3, np.int64), SelectionConfig().set(no_cut_face__enabled=False))
    assert ok.tolist() == [True, False, True]
