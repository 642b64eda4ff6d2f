"""The offline measured judge: manipulation checks (each aimed at one dimension) and the backend's replies.

The manipulations and their tables are in ``benchmarks/bench_measured.py``; these tests assert that a
manipulation lowers the dimension it is aimed at by at least a score point on the 1-5 scale, and by
clearly more than it moves any other dimension.
"""

import asyncio
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from multicrop.datasets.photos import sample_photo
from multicrop.judges.backends import JUDGE_BACKENDS
from multicrop.judges.measures import PROXY_DIMENSIONS, VERSION, holistic_score, measure, rubric_scores
from multicrop.judges.types import ImageRef, JudgeRequest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_measured import MANIPULATIONS  # noqa: E402

NORMAL_KEY = ("astronaut", "chelsea", "coffee", "motorcycle")  # rocket is a night launch: brightening helps it


@pytest.fixture(scope="module")
def base():
    return {n: rubric_scores(measure(sample_photo(n))) for n in NORMAL_KEY}


@pytest.mark.parametrize("title", [t for t, (target, _) in MANIPULATIONS.items()
                                   if target != "composition"])
def test_a_manipulation_lowers_its_dimension_and_moves_the_others_less(title, base):
    target, fn = MANIPULATIONS[title]
    for name in NORMAL_KEY:
        before, after = base[name], rubric_scores(measure(fn(sample_photo(name))))
        drop = before[target] - after[target]
        # The proxies are built from the same colour and exposure measures, so they are not "others" here.
        others = max(abs(after[d] - before[d]) for d in before if d != target and d not in PROXY_DIMENSIONS)
        assert drop >= 0.7, (name, target, before, after)
        assert drop >= 1.4 * others, (name, before, after)
        if target == "technical_quality":  # measured dimensions other than exposure-sensitive tone hold still
            assert abs(after["composition"] - before["composition"]) <= 0.75, (name, before, after)


def test_noise_and_blur_leave_the_non_technical_dimensions_nearly_unchanged(base):
    for title in ("blur (Gaussian sigma 2.5)", "noise (Gaussian sigma 20)"):
        _, fn = MANIPULATIONS[title]
        for name in NORMAL_KEY:
            before, after = base[name], rubric_scores(measure(fn(sample_photo(name))))
            assert all(abs(after[d] - before[d]) <= 0.4 for d in before if d != "technical_quality")


def test_a_bad_crop_lowers_composition_on_most_photos():
    _, fn = MANIPULATIONS["bad crop (half size, subject in a corner)"]
    names = ("astronaut", "chelsea", "coffee", "rocket", "motorcycle")
    drops = [rubric_scores(measure(sample_photo(n)))["composition"] - rubric_scores(measure(fn(sample_photo(n))))[
        "composition"] for n in names]
    assert np.mean(drops) >= 0.3 and sum(d >= 0.3 for d in drops) >= 3, drops


def _horizon(angle: float) -> np.ndarray:
    """Sky over sea with a level (or tilted) horizon and a kite: a scene where tilt is visible."""
    img = np.zeros((300, 450, 3), np.uint8)
    img[:] = (110, 160, 220)
    sea = np.array([[(x, 150 + np.tan(np.radians(angle)) * (x - 225)) for x in (0, 449)]])
    pts = np.array([[0, int(sea[0, 0, 1])], [449, int(sea[0, 1, 1])], [449, 299], [0, 299]], np.int32)
    cv2.fillPoly(img, [pts], (20, 60, 110))
    cv2.rectangle(img, (280, 60), (320, 100), (200, 40, 30), -1)  # a kite in the sky
    return img


def test_a_tilted_horizon_lowers_composition_only():
    level, tilted = measure(_horizon(0.0)), measure(_horizon(6.0))
    assert level.tilt == 0.0 and tilted.tilt > 0.5
    a, b = rubric_scores(level), rubric_scores(tilted)
    assert a["composition"] - b["composition"] >= 0.5
    assert all(abs(a[d] - b[d]) <= 0.25 for d in ("technical_quality", "colour_and_tone"))


def test_a_subject_jammed_against_the_border_measures_as_cut():
    img = np.full((300, 450, 3), 90, np.uint8)
    centred, jammed = img.copy(), img.copy()
    cv2.circle(centred, (150, 100), 40, (230, 200, 40), -1)  # on a thirds point
    cv2.circle(jammed, (440, 290), 40, (230, 200, 40), -1)  # in the corner, cut by two edges
    mc, mj = measure(centred), measure(jammed)
    assert mj.border_cut > mc.border_cut + 0.3 and mj.placement < mc.placement
    assert rubric_scores(mj)["composition"] < rubric_scores(mc)["composition"] - 0.5


def test_flat_image_is_worst_everywhere_and_scores_stay_in_range():
    photo = sample_photo("astronaut")
    flat = np.full_like(photo, 128)
    s_flat, s_photo = rubric_scores(measure(flat)), rubric_scores(measure(photo))
    assert all(1 <= v <= 5 for v in s_flat.values()) and all(1 <= v <= 5 for v in s_photo.values())
    assert all(s_flat[d] < s_photo[d] for d in s_flat if d != "technical_quality")
    assert 1 <= holistic_score(measure(flat)) < holistic_score(measure(photo)) <= 10


@pytest.mark.parametrize("shape", [(1, 1), (1, 300), (300, 1), (1, 2), (2, 2)])
def test_an_image_one_pixel_wide_or_high_is_measured_and_scored_in_range(shape):
    # a 1 px side has no step along it: the blur measure reads the other axis, a 1x1 image counts as flat
    img = np.zeros((*shape, 3), np.uint8)
    img[..., 0] = np.linspace(0, 255, shape[1], dtype=np.uint8)[None, :]
    m = measure(img)
    assert all(0 <= v <= 1 for v in m.to_dict().values())  # each measurement normalised, none NaN
    assert all(1 <= v <= 5 for v in rubric_scores(m).values()) and 1 <= holistic_score(m) <= 10
    from multicrop.quality import blur_ratios
    grey = img[..., 0].astype(np.float32)
    assert blur_ratios(grey, [None]) == ([1.0] if shape in ((1, 1), (300, 1)) else blur_ratios(grey.T.copy(), [None]))


def test_grey_input_is_measured_like_its_rgb_copy():
    g = sample_photo("camera")
    assert measure(g) == measure(np.repeat(g[..., None], 3, axis=2))


def test_backend_answers_json_deterministically_and_labels_the_proxies():
    be = JUDGE_BACKENDS.create("measured", model="measured-v1", max_side=256)
    assert be.version == VERSION == "2" and be.proxy_dimensions == PROXY_DIMENSIONS
    img = ImageRef(cv2.resize(sample_photo("astronaut"), (256, 256)), label="astro")

    def req(dim, scale):
        return JudgeRequest(prompt="", prompt_kind="dimension", dimension=dim, scale=scale, image=img,
                            temperature=0.3, repetition=0)

    async def go():
        return [await be.execute(req("composition", (1, 5))), await be.execute(req("composition", (1, 5))),
                await be.execute(req("overall", (1, 10))), await be.execute(req("emotional_impact", (1, 5)))]

    a, b, h, e = asyncio.run(go())
    assert a == b
    # a typed score, no reply text to parse
    assert a.text is None and 1 <= a.score <= 5 and 1 <= h.score <= 10
    assert a.reason.startswith("placement=") and a.cost_usd == 0.0
    assert e.reason.startswith("PROXY (no pixel measure of emotional_impact)")
    assert "PROXY" not in a.reason
    assert not be.reads_prompt and be.deterministic


def test_measurements_are_written_rounded_to_four_decimals_under_their_names():
    import dataclasses

    from multicrop.judges.measures import Measurements

    names = [f.name for f in dataclasses.fields(Measurements)]
    m = Measurements(*[1 / 3] * len(names))
    assert m.to_dict() == dict.fromkeys(names, 0.3333)
