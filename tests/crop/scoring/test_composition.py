"""The scorer registry contract and the composition scorer's terms."""

import numpy as np
import pytest

from multicrop.crop.config import CompositionWeights, CropConfig
from multicrop.errors import UnknownNameError
from multicrop.geometry import Box
from multicrop.ratios import Ratio
from multicrop.crop.scoring import SCORERS, ScoredCrop, Scorer, ScoringContext, get_scorer
from multicrop.crop.scoring.composition import CompositionScorer


def context(faces=()):
    img = np.full((100, 150, 3), 128, np.uint8)
    sal = np.zeros((100, 150))
    sal[30:70, 60:90] = 1.0
    return ScoringContext(img, sal, faces)


@pytest.mark.parametrize("name", SCORERS.names())
def test_every_scorer_follows_the_contract(name):
    cls = SCORERS.get(name)
    scorer = SCORERS.create(name, weights=CropConfig(scorer=name).weights)
    assert isinstance(scorer, Scorer)
    assert scorer.name == name and isinstance(scorer.version, str) and scorer.version and scorer.description
    boxes = [Box(40, 20, 60, 60), Box(0, 0, 30, 30)]
    out = scorer.score(context(), boxes, ratio=Ratio(1, 1))
    assert [c.box for c in out] == boxes
    assert all(isinstance(c, ScoredCrop) and np.isfinite(c.score) for c in out)
    assert scorer.score(context(), [], ratio=Ratio(1, 1)) == []


def test_unknown_scorer_suggests():
    with pytest.raises(UnknownNameError, match="did you mean 'composition'"):
        get_scorer(CropConfig(scorer="compositon"))


def test_kept_border_and_density_terms():
    whole, cut, empty = Box(50, 20, 50, 60), Box(75, 20, 50, 60), Box(0, 0, 30, 30)
    a, b, c = CompositionScorer().score(context(), [whole, cut, empty], ratio=Ratio(5, 6))
    assert a.parts["kept"] == pytest.approx(1.0) and b.parts["kept"] == pytest.approx(0.5)
    assert a.parts["border"] == 0 and b.parts["border"] == pytest.approx(40 / 60, abs=1e-5)  # blob rows / edge rows
    assert c.parts["kept"] == 0 and c.parts["thirds"] == 0
    assert a.score > b.score > c.score


def test_thirds_term_prefers_subject_on_a_power_point():
    img = np.full((90, 90, 3), 128, np.uint8)
    sal = np.zeros((90, 90))
    sal[28:32, 28:32] = 1
    ctx = ScoringContext(img, sal)
    on, centred = CompositionScorer().score(ctx, [Box(0, 0, 90, 90), Box(0, 0, 60, 60)], ratio=Ratio(1, 1))
    assert on.parts["thirds"] > 0.95 > centred.parts["thirds"]


def test_cutting_a_face_is_penalised_and_headroom_checked():
    face = Box(60, 10, 30, 30)
    full, cut, low = Box(40, 2, 70, 70), Box(75, 0, 70, 70), Box(40, 9, 70, 70)
    a, b, c = CompositionScorer().score(context((face,)), [full, cut, low], ratio=Ratio(1, 1))
    assert a.parts["face_cut"] == 0 and b.parts["face_cut"] == 1
    assert a.parts["headroom"] == pytest.approx(1.0) and c.parts["headroom"] < 0.5
    assert a.score > b.score


def test_weights_change_the_score():
    boxes = [Box(50, 20, 50, 60)]
    base = CompositionScorer().score(context(), boxes, ratio=Ratio(5, 6))[0]
    zero = CompositionScorer(weights=CompositionWeights(saliency_kept=0)).score(context(), boxes, ratio=Ratio(5, 6))[0]
    assert base.score - zero.score == pytest.approx(1.0, abs=1e-5)


def test_scored_crop_round_trip():
    c = ScoredCrop(Box(1, 2, 3, 4), 0.5, {"kept": 0.1}, Ratio(3, 4))
    assert ScoredCrop.from_dict(c.to_dict()) == c


def test_score_is_the_weighted_sum_of_the_named_terms():
    from multicrop.crop.scoring.composition import TERMS

    w = CompositionWeights()
    boxes = [Box(50, 20, 50, 60), Box(75, 20, 50, 60)]
    for subject in (None, Box(60, 30, 30, 40)):
        for c in CompositionScorer().score(context(), boxes, ratio=Ratio(5, 6), subject=subject):
            unweighted = {"density", "thirds"} if subject is not None else set()
            expected = sum(sign * getattr(w, weight) * c.parts[part] for part, sign, weight in TERMS
                           if part in c.parts and part not in unweighted)
            assert c.score == pytest.approx(expected, abs=1e-5)
            assert ("framing" in c.parts) == (subject is not None)
            assert {"density", "thirds"} <= set(c.parts)  # reported either way
