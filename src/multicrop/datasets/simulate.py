"""Simulated studies with planted effects, used to check the protocol.

Everything is Gaussian so the planted quantities have closed forms: for a
bivariate normal pair with Pearson ``r`` the population Spearman correlation is
``(6 / pi) * arcsin(r / 2)`` (Pearson 1907; Kruskal 1958).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError
from ..schema import DIMENSION_IDS as DIMENSIONS
from .ratings import DIMENSION_ATTRIBUTES

__all__ = [
    "DIMENSIONS",
    "MATCHED_ATTRIBUTES",
    "SimulatedStudy",
    "JudgePairs",
    "gaussian_spearman",
    "planted_ceiling",
    "simulate_study",
    "simulate_judge_pairs",
]

#: human attribute simulated for the first three rubric dimensions: the ones
#: the protocol matches them with (:data:`multicrop.datasets.ratings.DIMENSION_ATTRIBUTES`)
MATCHED_ATTRIBUTES = DIMENSION_ATTRIBUTES


def gaussian_spearman(r):
    """Population Spearman correlation of a bivariate normal with Pearson ``r``.

    Examples
    --------
    >>> round(float(gaussian_spearman(0.5)), 4)
    0.4826
    """
    return 6.0 / np.pi * np.arcsin(np.asarray(r, dtype=float) / 2.0)


def planted_ceiling(rater_noise: float, n_raters: int) -> float:
    """Noise ceiling that :func:`~multicrop.stats.ceiling.noise_ceiling` should recover.

    Ratings are ``q + e`` with ``var(q) = 1`` and ``sd(e) = rater_noise``;
    with ``n_raters`` (even) raters each half-mean has Pearson correlation
    ``1 / (1 + 2 s^2 / k)`` with the other, converted to Spearman, stepped up
    by Spearman–Brown and square-rooted.
    """
    if n_raters < 2 or n_raters % 2:
        raise InvalidParameterError(f"n_raters must be an even number >= 2, got {n_raters!r}")
    r_half = 1.0 / (1.0 + 2.0 * rater_noise**2 / n_raters)
    rs = float(gaussian_spearman(r_half))
    return float(np.sqrt(2.0 * rs / (1.0 + rs)))


@dataclass(frozen=True)
class SimulatedStudy:
    """A simulated judge table and human ratings with known structure.

    Attributes
    ----------
    judge_table : pandas.DataFrame
        Tidy judge scores (``image, family, prompt_kind, dimension,
        repetition, score``).
    ratings : pandas.DataFrame
        Per-rater ratings (``image, rater, score`` plus ``quality``,
        ``composition``, ``colour``).
    quality : ndarray, shape (n_images,)
        Latent overall quality (variance 1).
    ceiling : float
        Planted noise ceiling of the human overall mean.
    """

    judge_table: pd.DataFrame
    ratings: pd.DataFrame
    quality: np.ndarray
    ceiling: float


def simulate_study(
    n_images: int = 300,
    *,
    n_families: int = 3,
    n_raters: int = 10,
    rater_noise: float = 1.0,
    judge_noise: float = 0.5,
    holistic_fidelity: float = 0.6,
    dimension_signal: float = 0.8,
    holistic_shared: float = 0.8,
    n_holistic: int = 5,
    n_dimension: int = 3,
    rng: np.random.Generator,
) -> SimulatedStudy:
    """Simulate a rubric-scored judge panel and human raters.

    Five latent dimensions ``z_d ~ N(0, 1)`` make the overall quality
    ``q = sum(z_d) / sqrt(5)``.  Raters see ``q`` (and the first three ``z_d``
    as attributes) plus noise.  Each family's holistic verdict follows
    ``fidelity * q + sqrt(1 - fidelity^2) * u_f`` plus per-call noise, where
    the off-target part ``u_f`` is shared between families in proportion
    ``holistic_shared`` (so averaging verdicts removes little of it); each dimension prompt follows
    ``signal * z_d + sqrt(1 - signal^2) * u_fd`` plus per-call noise.  With
    ``dimension_signal > holistic_fidelity`` a combiner fed dimension scores
    beats every single holistic judge: that is the planted fusion gain.

    Examples
    --------
    >>> s = simulate_study(20, n_families=2, rng=np.random.default_rng(0))
    >>> sorted(s.judge_table["prompt_kind"].unique().tolist())
    ['dimension', 'holistic']
    >>> len(s.ratings) == 20 * 10
    True
    """
    for name, v in (("holistic_fidelity", holistic_fidelity), ("dimension_signal", dimension_signal),
                    ("holistic_shared", holistic_shared)):
        if not 0.0 <= v <= 1.0:
            raise InvalidParameterError(f"{name} must be in [0, 1], got {v!r}")
    if n_images < 3 or n_families < 1 or n_holistic < 1 or n_dimension < 1:
        raise InvalidParameterError("n_images >= 3, n_families, n_holistic and n_dimension >= 1 required")
    n, nd = int(n_images), len(DIMENSIONS)
    z = rng.normal(size=(n, nd))
    q = z.sum(axis=1) / np.sqrt(nd)
    images = np.array([f"img{i:05d}" for i in range(n)])

    rq = q[:, None] + rater_noise * rng.normal(size=(n, n_raters))
    ratings = {
        "image": np.repeat(images, n_raters),
        "rater": np.tile([f"r{j:03d}" for j in range(n_raters)], n),
        "score": rq.ravel(),
    }
    for d, attr in MATCHED_ATTRIBUTES.items():
        k = DIMENSIONS.index(d)
        ratings[attr] = (z[:, k : k + 1] + rater_noise * rng.normal(size=(n, n_raters))).ravel()

    frames = []
    fid, sig = holistic_fidelity, dimension_signal
    shared = rng.normal(size=n)
    for f in range(n_families):
        fam = f"family{f}"
        off = np.sqrt(holistic_shared) * shared + np.sqrt(1 - holistic_shared) * rng.normal(size=n)
        view = fid * q + np.sqrt(1 - fid**2) * off
        h = view[:, None] + judge_noise * rng.normal(size=(n, n_holistic))
        frames.append(pd.DataFrame({
            "image": np.repeat(images, n_holistic), "family": fam, "prompt_kind": "holistic",
            "dimension": "overall", "repetition": np.tile(np.arange(n_holistic), n), "score": h.ravel(),
        }))
        dview = sig * z + np.sqrt(1 - sig**2) * rng.normal(size=(n, nd))
        p = dview[:, :, None] + judge_noise * rng.normal(size=(n, nd, n_dimension))
        frames.append(pd.DataFrame({
            "image": np.repeat(images, nd * n_dimension), "family": fam, "prompt_kind": "dimension",
            "dimension": np.tile(np.repeat(DIMENSIONS, n_dimension), n),
            "repetition": np.tile(np.arange(n_dimension), n * nd), "score": p.ravel(),
        }))
    table = pd.concat(frames, ignore_index=True)
    return SimulatedStudy(table, pd.DataFrame(ratings), q, planted_ceiling(rater_noise, n_raters))


@dataclass(frozen=True)
class JudgePairs:
    """Many simulated datasets of two judges and a human mean.

    Attributes
    ----------
    human, a, b : ndarray, shape (n_datasets, n_images)
    true_delta : float
        Population ``spearman(a, human) - spearman(b, human)``.
    """

    human: np.ndarray
    a: np.ndarray
    b: np.ndarray
    true_delta: float


def simulate_judge_pairs(
    n_datasets: int,
    n_images: int,
    *,
    noise_a: float = 0.8,
    noise_b: float = 1.2,
    rater_noise: float = 1.5,
    n_raters: int = 10,
    rng: np.random.Generator,
) -> JudgePairs:
    """Simulate datasets where judge ``a`` beats judge ``b`` by a known Δρ.

    ``q ~ N(0, 1)``; human mean ``q + N(0, rater_noise^2 / n_raters)``; judge
    ``a = q + N(0, noise_a^2)``, ``b = q + N(0, noise_b^2)``.

    Examples
    --------
    >>> sim = simulate_judge_pairs(2, 50, rng=np.random.default_rng(0))
    >>> sim.a.shape, round(sim.true_delta, 4)
    ((2, 50), 0.1282)
    """
    shape = (int(n_datasets), int(n_images))
    q = rng.normal(size=shape)
    human = q + rater_noise / np.sqrt(n_raters) * rng.normal(size=shape)
    a = q + noise_a * rng.normal(size=shape)
    b = q + noise_b * rng.normal(size=shape)
    vh = 1.0 + rater_noise**2 / n_raters
    ra = 1.0 / np.sqrt((1.0 + noise_a**2) * vh)
    rb = 1.0 / np.sqrt((1.0 + noise_b**2) * vh)
    return JudgePairs(human, a, b, float(gaussian_spearman(ra) - gaussian_spearman(rb)))
