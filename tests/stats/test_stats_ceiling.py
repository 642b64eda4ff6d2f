"""Noise ceiling: Spearman–Brown, an independent pandas reference, planted values."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from multicrop.errors import InvalidParameterError
from multicrop.stats.ceiling import headroom, noise_ceiling, spearman_brown
from multicrop.datasets.simulate import planted_ceiling


def test_spearman_brown_by_hand():
    assert spearman_brown(0.5) == pytest.approx(2 / 3)
    assert spearman_brown(0.6, 3) == pytest.approx(1.8 / 2.2)


def _pandas_reference(image, score, keys):
    """One split computed the slow way: rank the random keys inside each image."""
    df = pd.DataFrame({"image": image, "score": score, "key": keys})
    df["pos"] = df.groupby("image")["key"].rank(method="first") - 1
    df["k"] = df.groupby("image")["score"].transform("size")
    df = df[df["k"] >= 2]
    df["half"] = np.where(df["pos"] < df["k"] // 2, "a", "b")
    means = df.pivot_table(index="image", columns="half", values="score", aggfunc="mean")
    r = stats.spearmanr(means["a"], means["b"]).statistic
    return np.sqrt(2 * r / (1 + r))


def test_single_split_equals_pandas_reference():
    rng = np.random.default_rng(0)
    n_img = 60
    k = rng.integers(1, 9, size=n_img)  # ragged, some images with one rater
    image = np.repeat([f"i{j:03d}" for j in range(n_img)], k)
    score = np.repeat(rng.normal(size=n_img), k) + rng.normal(size=k.sum())
    got = noise_ceiling(image, score, n_splits=1, rng=np.random.default_rng(5))
    keys = np.random.default_rng(5).random((1, (k[k >= 2]).sum()))[0]
    keep = np.repeat(k >= 2, k)
    ref = _pandas_reference(image[keep], score[keep], keys)
    assert got.ceiling == pytest.approx(ref, abs=1e-12)
    assert got.n_images == int((k >= 2).sum())


def test_recovers_planted_ceiling():
    rng = np.random.default_rng(1)
    n_img, k, noise = 3000, 8, 1.5
    q = rng.normal(size=n_img)
    score = np.repeat(q, k) + noise * rng.normal(size=n_img * k)
    got = noise_ceiling(np.repeat(np.arange(n_img), k), score, n_splits=50, rng=rng)
    assert got.ceiling == pytest.approx(planted_ceiling(noise, k), abs=0.01)
    assert got.mean_raters == k


def test_perfect_raters_give_ceiling_one_and_errors():
    img = np.repeat(np.arange(10), 4)
    nc = noise_ceiling(img, np.repeat(np.arange(10.0), 4), n_splits=3, rng=np.random.default_rng(0))
    assert nc.ceiling == pytest.approx(1.0)
    with pytest.raises(InvalidParameterError, match="at least 3 images"):
        noise_ceiling([1, 2, 3], [1.0, 2.0, 3.0], rng=np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="finite"):
        noise_ceiling([1, 1, 2, 2], [1.0, np.nan, 2.0, 3.0], rng=np.random.default_rng(0))
    assert headroom(0.5, 0.8) == pytest.approx(0.625)
    with pytest.raises(InvalidParameterError, match="ceiling"):
        headroom(0.5, 0.0)
