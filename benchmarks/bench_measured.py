"""Manipulation checks of the offline ``measured`` judge: one table per manipulation.

Run: ``.venv/bin/python benchmarks/bench_measured.py``

Each bundled photo is scored, then scored again after one manipulation; the
table shows every rubric dimension's score before -> after (1-5 scale).  The
manipulation is aimed at one dimension (blur, noise and exposure at
technical quality, a bad crop and a tilt at composition, desaturation at
colour and tone); the others should move little.  The same manipulations
are asserted in ``tests/judges/test_measured.py``.
"""

from __future__ import annotations

import cv2
import numpy as np

from multicrop.datasets.photos import sample_photo
from multicrop.judges.measures import DIMENSION_IDS, PROXY_DIMENSIONS, measure, rubric_scores
from multicrop.saliency import compute_saliency

PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "motorcycle")


def _place(c: float, size: int, full: int, at: float) -> int:
    """Start of a crop of ``size`` that puts ``c`` at ``at`` or ``1 - at`` of it, whichever fits."""
    for a in (1 - at, at):
        x0 = int(round(c - a * size))
        if 0 <= x0 <= full - size:
            return x0
    return int(min(max(0, c - (1 - at) * size), full - size))


def bad_crop(img: np.ndarray, frac: float = 0.5, at: float = 0.05) -> np.ndarray:
    """A crop of ``frac`` of each side with the subject's centroid 5 % from a corner (subject cut and jammed)."""
    h, w = img.shape[:2]
    s = compute_saliency(img, method="spectral")
    s = s * (s >= 2 * s.mean())
    cy, cx = (s.sum(1) @ np.arange(h)) / s.sum(), (s.sum(0) @ np.arange(w)) / s.sum()
    ch, cw = int(h * frac), int(w * frac)
    x0, y0 = _place(cx, cw, w, at), _place(cy, ch, h, at)
    return np.ascontiguousarray(img[y0 : y0 + ch, x0 : x0 + cw])


def tilted(img: np.ndarray, degrees: float = 6.0) -> np.ndarray:
    """Rotated by ``degrees`` and cropped to the largest centred box with no empty corners."""
    h, w = img.shape[:2]
    rot = cv2.warpAffine(img, cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0), (w, h),
                         flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    a = np.radians(abs(degrees))
    k = 1.0 / (np.cos(a) + np.sin(a) * max(w, h) / min(w, h))
    ch, cw = int(h * k), int(w * k)
    return np.ascontiguousarray(rot[(h - ch) // 2 : (h + ch) // 2, (w - cw) // 2 : (w + cw) // 2])


MANIPULATIONS = {
    "blur (Gaussian sigma 2.5)": ("technical_quality", lambda im: cv2.GaussianBlur(im, (0, 0), 2.5)),
    "noise (Gaussian sigma 20)": ("technical_quality", lambda im: np.clip(
        im + np.random.default_rng(0).normal(0, 20, im.shape), 0, 255).astype(np.uint8)),
    "under-exposure (x0.3)": ("technical_quality", lambda im: (im * 0.3).astype(np.uint8)),
    "over-exposure (x2.2 + 30, clipped)": ("technical_quality", lambda im: np.clip(
        im * 2.2 + 30, 0, 255).astype(np.uint8)),
    "JPEG quality 5": ("technical_quality", lambda im: cv2.imdecode(cv2.imencode(
        ".jpg", im, [cv2.IMWRITE_JPEG_QUALITY, 5])[1], cv2.IMREAD_UNCHANGED)),
    "bad crop (half size, subject in a corner)": ("composition", bad_crop),
    "tilt (6 degrees)": ("composition", tilted),
    "desaturate (grey)": ("colour_and_tone", lambda im: np.repeat(
        cv2.cvtColor(im, cv2.COLOR_RGB2GRAY)[..., None], 3, axis=2)),
}


def table(title: str, target: str, fn) -> str:
    short = {d: d.split("_")[0][:6] + ("*" if d in PROXY_DIMENSIONS else "") for d in DIMENSION_IDS}
    lines = [f"### {title} -> aimed at {target}", "",
             "| photo | " + " | ".join(short[d] for d in DIMENSION_IDS) + " |",
             "|---" * (len(DIMENSION_IDS) + 1) + "|"]
    deltas = {d: [] for d in DIMENSION_IDS}
    for name in PHOTOS:
        img = sample_photo(name)
        a, b = rubric_scores(measure(img)), rubric_scores(measure(fn(img)))
        for d in DIMENSION_IDS:
            deltas[d].append(b[d] - a[d])
        lines.append(f"| {name} | " + " | ".join(f"{a[d]:.2f}→{b[d]:.2f}" for d in DIMENSION_IDS) + " |")
    lines.append("| mean Δ | " + " | ".join(f"{np.mean(deltas[d]):+.2f}" for d in DIMENSION_IDS) + " |")
    return "\n".join(lines)


def main() -> None:
    print("(* = proxy dimension: no pixel measure of it exists)\n")
    for title, (target, fn) in MANIPULATIONS.items():
        print(table(title, target, fn), end="\n\n")


if __name__ == "__main__":
    main()
