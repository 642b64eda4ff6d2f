"""Precision at the top: by hand, by brute force over tie orders, independent of image order."""

import itertools

import numpy as np
import pytest

from multicrop.errors import InvalidParameterError
from multicrop.evaluation.judges.metrics import precision_at_top


def test_precision_at_top_by_hand():
    assert precision_at_top([4, 3, 2, 1], [1, 2, 3, 4], fraction=0.5) == 0.0
    assert precision_at_top([4, 3, 2, 1], [4, 1, 3, 2], fraction=0.5) == 0.5  # {0,1} vs {0,2}
    # k = 2; predicted: image 0 in, images 1-3 tie for one place (1/3 each);
    # human top is {0, 1}: expected overlap 1 + 1/3, precision (4/3) / 2
    assert precision_at_top([3, 2, 2, 2, 1], [5, 4, 3, 2, 1], fraction=0.4) == pytest.approx(2 / 3, abs=1e-15)
    # ties on both sides: k = 2; predicted {0: 1, 1: 1/3, 2: 1/3, 3: 1/3}; human {0: 1/2, 1: 1/2, 4: 1/2, 5: 1/2}
    assert precision_at_top([9, 5, 5, 5, 1, 0], [7, 7, 1, 0, 7, 7], fraction=0.3) == pytest.approx(
        (1 * 0.5 + (1 / 3) * 0.5) / 2, abs=1e-15)
    with pytest.raises(InvalidParameterError, match="fraction"):
        precision_at_top([1, 2], [1, 2], fraction=0)


def _brute_force_expected_precision(p, h, fraction):
    """Average the position-tie-broken precision over every ordering of the images."""
    k = int(np.ceil(fraction * len(p)))
    vals = []
    for order in itertools.permutations(range(len(p))):
        o = np.array(order)
        top_p = set(o[np.argsort(-np.asarray(p)[o], kind="stable")[:k]])
        top_h = set(o[np.argsort(-np.asarray(h)[o], kind="stable")[:k]])
        vals.append(len(top_p & top_h) / k)
    return float(np.mean(vals))


@pytest.mark.parametrize("seed", range(4))
def test_precision_at_top_is_the_expectation_over_random_tie_breaks(seed):
    rng = np.random.default_rng(seed)
    p, h = rng.integers(0, 3, size=7), rng.integers(0, 3, size=7)
    assert precision_at_top(p, h, fraction=0.3) == pytest.approx(_brute_force_expected_precision(p, h, 0.3),
                                                                 abs=1e-12)


def test_precision_at_top_does_not_depend_on_image_order():
    """Integer verdicts tie a lot; before the fix the id order decided the ties."""
    rng = np.random.default_rng(0)
    p, h = rng.integers(1, 11, size=300), np.round(rng.normal(size=300), 1)
    ref = precision_at_top(p, h)
    for s in range(5):
        perm = np.random.default_rng(s).permutation(300)
        assert precision_at_top(p[perm], h[perm]) == pytest.approx(ref, abs=1e-12)
