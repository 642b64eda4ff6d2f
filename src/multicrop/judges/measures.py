"""Image measurements behind the offline ``measured`` judge.

Each rubric dimension is scored from measurements of the pixels:

technical quality
    Sharpness (variance of the Laplacian), noise (Immerkaer's fast noise
    estimate) and clipping (share of pure-black / pure-white pixels).  BRISQUE
    is not used: OpenCV's implementation lives in the contrib ``quality``
    module, which the ``opencv-python-headless`` wheel does not ship (and the
    contrib wheel must not be installed beside it).
composition
    Spectral-residual saliency (:func:`multicrop.saliency.compute_saliency`):
    placement of the salient centroid near a thirds point or the centre,
    left/right and top/bottom balance of salient mass, salient mass cut by the
    frame border, and how concentrated the saliency is.
colour and tone
    Colourfulness (Hasler & Suesstrunk, 2003), RMS contrast, tonal range
    (1st-99th luminance percentile) and mean saturation.
distinctiveness, emotional impact
    HONEST PROXIES ONLY: no pixel statistic measures originality or feeling.
    Distinctiveness uses subject isolation (salient vs. background contrast,
    background blur relative to the subject) and departure from mid-key
    exposure; emotional impact uses arousal-related statistics (colourfulness,
    contrast, saturation) and subject isolation.  Treat these two columns as
    weak, documented baselines, not judgements.

The measurements the crop scorer makes too (luminance, sharpness, thirds
points, border band, tone departure) come from :mod:`multicrop.measures`,
which also says where the two use them differently.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> sharp = (rng.random((200, 300, 3)) * 255).astype(np.uint8)
>>> m = measure(sharp)
>>> 0 <= m.sharpness <= 1 and 0 <= m.colourfulness <= 1
True
>>> s = rubric_scores(m)
>>> sorted(s) == sorted(DIMENSION_IDS) and all(1 <= v <= 5 for v in s.values())
True
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import cv2
import numpy as np

from ..measures import BORDER_BAND, THIRDS_POINTS, border_band, laplacian_variance, luminance, tone_departure
from ..saliency import compute_saliency
from .rubric import DIMENSION_IDS

__all__ = ["VERSION", "Measurements", "measure", "rubric_scores", "holistic_score"]

#: Part of every ``measured`` call key: bump when measurements or weights change.
VERSION = "1"

_IMMERKAER = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float32)

#: Key of a typical photo (mean luminance of 255) and the departure from it that counts as full.
KEY_CENTRE, KEY_SPREAD = 118.0, 80.0


@dataclass(frozen=True)
class Measurements:
    """Normalised measurements, each in ``[0, 1]`` (1 = more of the property)."""

    sharpness: float
    noise: float
    clipping: float
    placement: float
    balance: float
    border_cut: float
    concentration: float
    colourfulness: float
    contrast: float
    tonal_range: float
    saturation: float
    isolation: float
    key_departure: float

    def to_dict(self) -> dict:
        """The measurements rounded to 4 decimals, as the judge's reply reports them.

        Not :class:`multicrop.serialize.Serializable`: the rounding is part of the reply.
        """
        return {k: round(v, 4) for k, v in asdict(self).items()}


def _clip01(x: float) -> float:
    return float(min(1.0, max(0.0, x)))


def measure(image: np.ndarray, *, saliency_side: int = 384) -> Measurements:
    """Measure an RGB image.

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
    saliency_side : int
        Long side of the copy used for colour, saliency and composition
        measures (sharpness, noise and clipping use full resolution).

    Returns
    -------
    Measurements

    References
    ----------
    D. Hasler and S. Suesstrunk, "Measuring colourfulness in natural images", SPIE 5007, 2003.
    J. Immerkaer, "Fast noise variance estimation", CVIU 64(2), 1996.
    """
    rgb = np.ascontiguousarray(image[..., :3])
    h, w = rgb.shape[:2]
    grey = luminance(rgb)
    g32 = grey.astype(np.float32)

    # Technical quality.
    lap_var = laplacian_variance(g32)
    sharpness = _clip01((np.log10(1.0 + lap_var) - 1.0) / 2.5)  # var 10 -> 0, ~3000 -> 1
    conv = cv2.filter2D(g32, cv2.CV_32F, _IMMERKAER)
    sigma = (float(np.sqrt(np.pi / 2.0) * cv2.norm(conv[1:-1, 1:-1], cv2.NORM_L1) / (6.0 * (h - 2) * (w - 2)))
             if h > 2 and w > 2 else 0.0)
    noise = _clip01((sigma - 2.0) / 12.0)
    hist = np.bincount(grey.ravel(), minlength=256).astype(np.float64) / grey.size
    clipping = _clip01((hist[:3].sum() + hist[253:].sum()) * 4.0)

    # Colour, tone and composition are statistics of the whole frame: measured
    # on a copy whose long side is ``saliency_side`` (keeps 1 MP under 50 ms).
    scale = min(1.0, saliency_side / max(h, w))
    small = rgb if scale >= 1.0 else cv2.resize(rgb, (max(8, round(w * scale)), max(8, round(h * scale))),
                                                 interpolation=cv2.INTER_AREA)
    f = small.astype(np.float32)
    rg = f[..., 0] - f[..., 1]
    yb = 0.5 * (f[..., 0] + f[..., 1]) - f[..., 2]
    m_hs = float(np.hypot(rg.std(), yb.std()) + 0.3 * np.hypot(rg.mean(), yb.mean()))
    colourfulness = _clip01(m_hs / 90.0)
    contrast = _clip01(float(cv2.meanStdDev(grey)[1][0, 0]) / 70.0)
    cdf = np.cumsum(hist)
    p1, p99 = int(np.searchsorted(cdf, 0.01)), int(np.searchsorted(cdf, 0.99))
    tonal_range = _clip01((p99 - p1) / 230.0)
    hsv_s = cv2.cvtColor(small, cv2.COLOR_RGB2HSV)[..., 1]
    saturation = _clip01(float(hsv_s.mean()) / 255.0 / 0.6)

    # Composition, from saliency on the small copy.
    sal = compute_saliency(small, method="spectral").astype(np.float64)
    sh, sw = sal.shape
    total = float(sal.sum())
    if total <= 1e-9:
        placement = balance = concentration = 0.5
        border_cut = 0.0
        isolation = 0.0
    else:
        cy = float(sal.sum(axis=1) @ np.arange(sh)) / total / max(sh - 1, 1)
        cx = float(sal.sum(axis=0) @ np.arange(sw)) / total / max(sw - 1, 1)
        anchors = [(0.5, 0.5), *THIRDS_POINTS]
        d = min(np.hypot(cy - a, cx - b) for a, b in anchors)
        placement = _clip01(1.0 - d / 0.25)
        left, top = float(sal[:, : sw // 2].sum()) / total, float(sal[: sh // 2].sum()) / total
        balance = _clip01(1.0 - (abs(left - 0.5) + abs(top - 0.5)))
        b = int(border_band(min(sh, sw), fraction=BORDER_BAND))
        inner = float(sal[b:-b, b:-b].sum()) if sh > 2 * b and sw > 2 * b else 0.0
        border_area = 1.0 - max(sh - 2 * b, 0) * max(sw - 2 * b, 0) / (sh * sw)
        border_share = (total - inner) / total / max(border_area, 1e-9)
        border_cut = _clip01(border_share - 0.5)  # salient mass on the border relative to its area
        mask = sal > 0.5 * sal.max()
        frac = float(mask.mean())
        concentration = _clip01(1.0 - frac / 0.5)
        if mask.any() and (~mask).any():
            gs = luminance(small).astype(np.float32)
            lap_s = np.abs(cv2.Laplacian(gs, cv2.CV_32F, ksize=3))
            lum_gap = abs(float(gs[mask].mean()) - float(gs[~mask].mean())) / 128.0
            fg_sharp, bg_sharp = float(lap_s[mask].mean()), float(lap_s[~mask].mean())
            blur_gap = (fg_sharp - bg_sharp) / max(fg_sharp + bg_sharp, 1e-6)
            isolation = _clip01(0.5 * lum_gap + 0.5 * max(0.0, blur_gap) + 0.25 * concentration)
        else:
            isolation = 0.0
    key_departure = float(tone_departure(float(hist @ np.arange(256)), centre=KEY_CENTRE, spread=KEY_SPREAD))

    return Measurements(
        sharpness=sharpness, noise=noise, clipping=clipping, placement=placement, balance=balance,
        border_cut=border_cut, concentration=concentration, colourfulness=colourfulness,
        contrast=contrast, tonal_range=tonal_range, saturation=saturation, isolation=isolation,
        key_departure=key_departure,
    )


def _dimension_values(m: Measurements) -> dict[str, float]:
    return {
        "technical_quality": 0.6 * m.sharpness + 0.2 * (1 - m.noise) + 0.2 * (1 - m.clipping),
        "composition": 0.35 * m.placement + 0.2 * m.balance + 0.25 * (1 - m.border_cut) + 0.2 * m.concentration,
        "colour_and_tone": 0.4 * m.colourfulness + 0.2 * m.contrast + 0.25 * m.tonal_range + 0.15 * m.saturation,
        "distinctiveness": 0.6 * m.isolation + 0.25 * m.key_departure + 0.15 * m.colourfulness,
        "emotional_impact": 0.3 * m.colourfulness + 0.25 * m.contrast + 0.2 * m.saturation + 0.25 * m.isolation,
    }


def rubric_scores(m: Measurements, *, scale: tuple[int, int] = (1, 5)) -> dict[str, float]:
    """Map measurements to one score per rubric dimension on ``scale``."""
    lo, hi = scale
    vals = _dimension_values(m)
    return {d: round(lo + (hi - lo) * _clip01(vals[d]), 3) for d in DIMENSION_IDS}


_HOLISTIC_WEIGHTS = {"technical_quality": 0.3, "composition": 0.25, "colour_and_tone": 0.2,
                     "distinctiveness": 0.125, "emotional_impact": 0.125}


def holistic_score(m: Measurements, *, scale: tuple[int, int] = (1, 10)) -> float:
    """Weighted mean of the dimension values, mapped to ``scale``."""
    vals = _dimension_values(m)
    v = sum(_HOLISTIC_WEIGHTS[d] * _clip01(vals[d]) for d in DIMENSION_IDS)
    return round(scale[0] + (scale[1] - scale[0]) * v, 3)
