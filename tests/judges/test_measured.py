"""Sanity of the offline measured judge."""

import asyncio
import json

import cv2
import numpy as np
import pytest

from multicrop.datasets.photos import sample_photo
from multicrop.judges.backends import JUDGE_BACKENDS
from multicrop.judges.measures import holistic_score, measure, rubric_scores
from multicrop.judges.types import ImageRef, JudgeRequest


@pytest.fixture(scope="module")
def photo():
    return cv2.resize(sample_photo("astronaut"), (384, 384), interpolation=cv2.INTER_AREA)


def test_blurred_image_scores_lower_on_technical_quality(photo):
    blurred = cv2.GaussianBlur(photo, (0, 0), 3)
    sharp_s, blur_s = rubric_scores(measure(photo)), rubric_scores(measure(blurred))
    assert blur_s["technical_quality"] < sharp_s["technical_quality"] - 0.5
    assert measure(blurred).sharpness < measure(photo).sharpness


def test_grey_image_scores_lower_on_colour_than_colourful(photo):
    grey = np.repeat(cv2.cvtColor(photo, cv2.COLOR_RGB2GRAY)[..., None], 3, axis=2)
    m_grey, m_col = measure(grey), measure(photo)
    assert m_grey.colourfulness < 0.02 < m_col.colourfulness
    assert rubric_scores(m_grey)["colour_and_tone"] < rubric_scores(m_col)["colour_and_tone"] - 0.5


def test_flat_image_is_worst_everywhere_and_scores_stay_in_range(photo):
    flat = np.full_like(photo, 128)
    s_flat, s_photo = rubric_scores(measure(flat)), rubric_scores(measure(photo))
    assert all(1 <= v <= 5 for v in s_flat.values()) and all(1 <= v <= 5 for v in s_photo.values())
    assert all(s_flat[d] < s_photo[d] for d in s_flat)
    assert 1 <= holistic_score(measure(flat)) < holistic_score(measure(photo)) <= 10


def test_a_clipped_noisy_image_measures_as_such(photo):
    rng = np.random.default_rng(0)
    noisy = np.clip(photo.astype(float) + rng.normal(0, 25, photo.shape), 0, 255).astype(np.uint8)
    assert measure(noisy).noise > measure(photo).noise + 0.3
    blown = np.clip(photo.astype(int) * 3, 0, 255).astype(np.uint8)
    assert measure(blown).clipping > measure(photo).clipping + 0.3


def test_backend_answers_json_on_the_requested_scale_deterministically(photo):
    be = JUDGE_BACKENDS.create("measured", model="measured-v1", max_side=256)
    img = ImageRef(photo, label="astro")

    def req(dim, scale):
        return JudgeRequest(prompt="", prompt_kind="dimension", dimension=dim, scale=scale, image=img,
                            temperature=0.3, repetition=0)

    async def go():
        return [await be.execute(req("composition", (1, 5))), await be.execute(req("composition", (1, 5))),
                await be.execute(req("overall", (1, 10)))]

    a, b, h = asyncio.run(go())
    assert a == b
    assert 1 <= json.loads(a.text)["score"] <= 5 and 1 <= json.loads(h.text)["score"] <= 10
    assert "sharpness=" in json.loads(a.text)["reason"] and a.cost_usd == 0.0
