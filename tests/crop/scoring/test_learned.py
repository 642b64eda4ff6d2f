"""The learned framing term: a head over the embedding of each candidate crop."""

import numpy as np
import pytest

from multicrop.crop.scoring import ScoredCrop, ScoringContext
from multicrop.crop.scoring import learned as learned_mod
from multicrop.crop.scoring.learned import LearnedScorer, LinearHead, as_linear_head, crop_pixels, framing_scores
from multicrop.embeddings import EMBEDDING, embed
from multicrop.errors import InvalidParameterError
from multicrop.geometry import Box
from multicrop.ratios import Ratio


@pytest.fixture(scope="module")
def image():
    rng = np.random.default_rng(0)
    img = np.full((48, 96, 3), 30, np.uint8)
    img[:, 48:] = 220                                    # dark left half, bright right half
    img[10:30, 60:80] = rng.integers(0, 255, (20, 20, 3), dtype=np.uint8)
    return img


BOXES = [Box(0, 0, 40, 40), Box(50, 4, 40, 40), Box(24, 0, 48, 48), Box(56, 8, 30, 30)]


def _one_dim_head(k, lo=-50.0, hi=50.0):
    coef = np.zeros(EMBEDDING.dim, np.float32)
    coef[k] = 1.0
    return LinearHead(coef=coef, intercept=0.0, scale=(lo, hi))


def test_scores_are_the_chosen_dimension_of_each_crop(image):
    embs = np.stack([embed(crop_pixels(image, b), threads=1) for b in BOXES])
    k = int(np.argmax(embs.std(0)))                      # the dimension the crops differ on most
    got = framing_scores(image, BOXES, _one_dim_head(k), threads=1)
    np.testing.assert_allclose(got, (embs[:, k] + 50.0) / 100.0, atol=1e-5)
    assert np.argsort(got).tolist() == np.argsort(embs[:, k]).tolist()
    neg = LinearHead(coef=-_one_dim_head(k).coef, intercept=0.0, scale=(-50.0, 50.0))
    assert np.argsort(framing_scores(image, BOXES, neg, threads=1)).tolist() == np.argsort(-embs[:, k]).tolist()


def test_scores_are_clipped_to_unit_interval(image):
    head = LinearHead(coef=np.zeros(EMBEDDING.dim), intercept=9.0, scale=(1.0, 5.0))
    assert framing_scores(image, BOXES, head, threads=1).tolist() == [1.0] * 4


def test_batching_gives_the_scores_of_one_at_a_time(image):
    head = LinearHead(coef=np.random.default_rng(1).normal(size=EMBEDDING.dim) * 0.05, intercept=0.5, scale=(0, 1))
    whole = framing_scores(image, BOXES, head, threads=1, batch=32)
    single = framing_scores(image, BOXES, head, threads=1, batch=1)
    pairs = framing_scores(image, BOXES, head, threads=1, batch=3)
    np.testing.assert_allclose(whole, single, atol=1e-5)
    np.testing.assert_allclose(whole, pairs, atol=1e-5)


def test_empty_box_list(image):
    assert framing_scores(image, [], _one_dim_head(0)).shape == (0,)


def test_boxes_at_and_past_the_edge_are_clipped(image):
    assert crop_pixels(image, Box(80, 30, 40, 40)).shape == (18, 16, 3)
    assert crop_pixels(image, Box(-10, -10, 20, 20)).shape == (10, 10, 3)
    assert crop_pixels(image, Box(95.5, 47.5, 0.2, 0.2)).shape == (1, 1, 3)
    edge = [Box(0, 0, 96, 48), Box(56, 0, 40, 48), Box(80, 30, 40, 40)]
    got = framing_scores(image, edge, _one_dim_head(3), threads=1)
    assert got.shape == (3,) and np.isfinite(got).all()
    inside = framing_scores(image, [Box(80, 30, 16, 18)], _one_dim_head(3), threads=1)
    np.testing.assert_allclose(got[2], inside[0], atol=1e-6)


def test_top_scores_only_the_best_by_prior(image):
    head = _one_dim_head(5)
    full = framing_scores(image, BOXES, head, threads=1)
    cut = framing_scores(image, BOXES, head, threads=1, top=2, prior=np.array([0.1, 0.9, 0.5, 0.2]))
    assert np.isnan(cut[[0, 3]]).all()
    np.testing.assert_allclose(cut[[1, 2]], full[[1, 2]], atol=1e-6)


def test_a_head_with_targets_uses_overall():
    class Target:
        coef, intercept, scale = np.ones(EMBEDDING.dim), 2.0, (1.0, 5.0)

    class Head:
        def target(self, name):
            return Target() if name == "overall" else None

        def names(self):
            return ("overall",)

    lin = as_linear_head(Head())
    assert lin.intercept == 2.0 and lin.scale == (1.0, 5.0)


@pytest.mark.parametrize("kwargs, match", [
    ({"batch": 0}, "batch"), ({"top": 2}, "prior"), ({"top": 0, "prior": np.zeros(4)}, "top"),
])
def test_bad_options_name_the_parameter(image, kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        framing_scores(image, BOXES, _one_dim_head(0), **kwargs)


def test_a_head_of_another_size_is_refused(image):
    with pytest.raises(InvalidParameterError, match="1280"):
        framing_scores(image, BOXES, LinearHead(coef=np.ones(8), scale=(0, 1)))
    with pytest.raises(InvalidParameterError, match="image"):
        framing_scores(np.zeros((4, 4)), BOXES, _one_dim_head(0))


class _Flat:
    """A base scorer giving fixed scores, one per box."""

    name, version = "flat", "1"

    def __init__(self, scores):
        self.scores = scores

    def score(self, context, boxes, *, ratio, region=None, subject=None):
        return [ScoredCrop(b, s, {"base": s}, ratio) for b, s in zip(boxes, self.scores)]


def _context(image):
    return ScoringContext(image, np.zeros(image.shape[:2], np.float32), ())


def test_learned_scorer_moves_the_top_boxes_around_their_mean_rating(image):
    head = _one_dim_head(int(np.argmax(np.stack([embed(crop_pixels(image, b), threads=1) for b in BOXES]).std(0))))
    rated = framing_scores(image, BOXES, head, threads=1)
    s = LearnedScorer(head, _Flat([0.2, 0.9, 0.5, 0.1]), weight=2.0, top=2, threads=1)
    got = s.score(_context(image), BOXES, ratio=Ratio(1, 1))
    top = [1, 2]                                         # the two best base scores
    want = np.array([0.9, 0.5]) + 2.0 * (rated[top] - rated[top].mean())
    np.testing.assert_allclose([got[i].score for i in top], want, atol=1e-6)
    assert [got[0].score, got[3].score] == [0.2, 0.1]    # the others keep their base score
    assert got[1].parts == {"base": 0.9, "learned": pytest.approx(rated[1], abs=1e-6)} and "learned" not in got[0].parts


def test_learned_scorer_embeds_each_box_of_a_photo_once(image, monkeypatch):
    calls = []
    real = learned_mod.framing_scores

    def counting(img, boxes, head, **kw):
        calls.append(len(boxes))
        return real(img, boxes, head, **kw)

    monkeypatch.setattr(learned_mod, "framing_scores", counting)
    s = LearnedScorer(_one_dim_head(3), _Flat([1.0, 0.9, 0.8, 0.7]), top=3, threads=1)
    first = s.score(_context(image), BOXES, ratio=Ratio(1, 1))
    again = s.score(_context(image), BOXES, ratio=Ratio(1, 1))
    assert calls == [3] and [c.score for c in first] == [c.score for c in again]
    s.score(_context(image.copy()), BOXES, ratio=Ratio(1, 1))   # another photo: rated afresh
    assert calls == [3, 3]


def test_learned_scorer_with_weight_zero_is_the_base_scorer_in_crop_photo():
    from multicrop.crop.config import CropConfig
    from multicrop.crop.pipeline import crop_photo
    from multicrop.crop.scoring import get_scorer

    rng = np.random.default_rng(2)
    img = (rng.random((120, 180, 3)) * 40).astype(np.uint8)
    img[30:90, 20:60] = 230
    img[40:100, 120:160] = 200
    cfg = CropConfig(saliency="spectral", detectors=(), k=2)
    plain = crop_photo(img, cfg, threads=1)
    head = _one_dim_head(7)
    zero = crop_photo(img, cfg, threads=1, scorer=LearnedScorer(head, get_scorer(cfg), weight=0.0, threads=1))
    assert [c.box for c in zero.crops] == [c.box for c in plain.crops]
    heavy = crop_photo(img, cfg, threads=1, scorer=LearnedScorer(head, get_scorer(cfg), weight=5.0, threads=1))
    assert heavy.versions["scorer"].startswith("learned/1+composition/") and "+w5+top8" in heavy.versions["scorer"]
    assert plain.versions["scorer"].startswith("composition/")


@pytest.mark.parametrize("kwargs, match", [({"weight": -1.0}, "weight"), ({"weight": float("nan")}, "weight"),
                                           ({"top": 0}, "top"), ({"top": 1}, "top must be an integer >= 2")])
def test_learned_scorer_refuses_bad_options(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        LearnedScorer(_one_dim_head(0), _Flat([]), **kwargs)
