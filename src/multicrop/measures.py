"""Functions on image arrays that both wings measure with.

The crop scorer (:mod:`multicrop.crop.scoring.composition`) rates thousands
of candidate boxes of one photo at once; the offline ``measured`` judge
(:mod:`multicrop.judges.measures`) rates one whole image.  What they have in
common lives here, once:

* :func:`summed_area_table` and :func:`box_sums`: sums of a per-pixel map over
  many boxes in constant time each;
* :func:`luminance`: the one grey conversion (ITU-R BT.601 weights, as OpenCV);
* :func:`gradient_magnitude` and :func:`laplacian_variance`: the two sharpness
  measures (see below why there are two);
* :data:`THIRDS_POINTS`: the rule-of-thirds power points;
* :func:`border_band`: the width of the band along a frame's edge in which
  salient mass counts as cut (:data:`BORDER_BAND` of the short side);
* :func:`tone_departure`: how far a mean luminance lies from a reference key.

The faults only the ``measured`` judge rates on a whole image (noise, blur,
blocking, tilt) are :mod:`multicrop.quality`.

Where the two wings use these differently, on purpose:

sharpness
    The scorer compares crops *of one photo*: mean Sobel gradient magnitude
    in the crop relative to the whole image.  The judge rates an image on an
    absolute scale: variance of the Laplacian (a focus measure), mapped
    logarithmically.
thirds
    The scorer: Gaussian of the squared distance from the saliency centroid
    (pixel centres over the crop's width) to the nearest of the four points.
    The judge: linear fall-off of the distance (pixel indices over ``n - 1``)
    to the nearest of the four points or the centre.
border cut
    Both use :func:`border_band`.  The scorer takes the highest mean saliency
    along one of the crop's edges (edges on the photo's own border do not
    count); the judge the share of salient mass in the whole ring relative to
    the ring's area.
exposure
    Both are :func:`tone_departure` of the mean luminance: the scorer from
    mid-grey (0.5 of the range, spread 0.5), the judge from a slightly low key
    (118 of 255, spread 80: a departure from a typical photo's key, not a
    fault).

Examples
--------
>>> sat = summed_area_table(np.ones((2, 3)))
>>> sat.shape, float(sat[2, 3])
((3, 4), 6.0)
>>> box_sums(sat, np.array([0, 1]), np.array([0, 0]), np.array([3, 2]), np.array([1, 2])).tolist()
[3.0, 2.0]
>>> border_band(np.array([10, 100]), fraction=BORDER_BAND).tolist()
[1, 3]
>>> float(tone_departure(0.75, centre=0.5, spread=0.5))
0.5
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "BORDER_BAND",
    "THIRDS_POINTS",
    "summed_area_table",
    "box_sums",
    "luminance",
    "gradient_magnitude",
    "laplacian_variance",
    "border_band",
    "tone_departure",
]

#: Width of the band along a frame's edge, as a fraction of its short side.
BORDER_BAND = 0.03

#: Rule-of-thirds power points ``(u, v)`` as fractions of the frame's width and height.
THIRDS_POINTS: tuple[tuple[float, float], ...] = tuple((u, v) for u in (1 / 3, 2 / 3) for v in (1 / 3, 2 / 3))


def summed_area_table(values: np.ndarray) -> np.ndarray:
    """Summed-area table with a zero first row and column, float64, shape (H+1, W+1) (``cv2.integral``).

    ``S[y2, x2] - S[y1, x2] - S[y2, x1] + S[y1, x1]`` is the sum over rows
    ``y1:y2`` and columns ``x1:x2`` (:func:`box_sums`).

    Parameters
    ----------
    values : ndarray, shape (H, W)
        A per-pixel map (any real dtype).

    Returns
    -------
    ndarray of float64, shape (H + 1, W + 1)
    """
    import cv2  # OpenCV only where it is used (start-up)

    if values.dtype not in (np.float32, np.float64):
        values = values.astype(np.float64)  # cv2.integral takes 8-bit or float input
    return cv2.integral(np.ascontiguousarray(values), sdepth=cv2.CV_64F)


def box_sums(sat: np.ndarray, x1: np.ndarray, y1: np.ndarray, x2: np.ndarray, y2: np.ndarray) -> np.ndarray:
    """Sums of the map behind ``sat`` over integer boxes ``[y1:y2, x1:x2]`` (arrays of corners)."""
    return sat[y2, x2] - sat[y1, x2] - sat[y2, x1] + sat[y1, x1]


def luminance(image: np.ndarray) -> np.ndarray:
    """Luminance of an RGB image, uint8, shape (H, W) (BT.601 weights, as OpenCV's ``RGB2GRAY``).

    Examples
    --------
    >>> luminance(np.full((1, 2, 3), 255, np.uint8)).tolist()
    [[255, 255]]
    """
    import cv2  # OpenCV only where it is used (start-up)

    return cv2.cvtColor(np.ascontiguousarray(image[..., :3]), cv2.COLOR_RGB2GRAY)


def gradient_magnitude(grey: np.ndarray) -> np.ndarray:
    """Per-pixel magnitude of the 3x3 Sobel gradient of a float32 grey image, float32, shape (H, W).

    Examples
    --------
    >>> g = np.zeros((5, 6), np.float32); g[:, 3:] = 1
    >>> gradient_magnitude(g)[2].tolist()
    [0.0, 0.0, 4.0, 4.0, 0.0, 0.0]
    """
    import cv2  # OpenCV only where it is used (start-up)

    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)
    return cv2.magnitude(gx, gy)


def laplacian_variance(grey: np.ndarray) -> float:
    """Variance of the 3x3 Laplacian of a float32 grey image (a focus measure).

    References
    ----------
    J. L. Pech-Pacheco et al., "Diatom autofocusing in brightfield microscopy:
    a comparative study", ICPR 2000.

    Examples
    --------
    >>> laplacian_variance(np.full((8, 8), 128, np.float32))
    0.0
    """
    import cv2  # OpenCV only where it is used (start-up)

    lap = cv2.Laplacian(grey, cv2.CV_32F, ksize=3)
    _, sd = cv2.meanStdDev(lap)
    return float(sd[0, 0]) ** 2


def border_band(short_side: np.ndarray | int, *, fraction: float = BORDER_BAND) -> np.ndarray:
    """Width in pixels of the band along a frame's edges: ``fraction`` of its short side, at least 1.

    Rounded half to even (as Python's ``round``); an array of sides gives an
    int64 array of widths.
    """
    return np.maximum(1, np.round(fraction * np.asarray(short_side))).astype(np.int64)


def tone_departure(mean: np.ndarray | float, *, centre: float, spread: float) -> np.ndarray:
    """``|mean - centre| / spread``, clipped to ``[0, 1]``: 0 at the reference key, 1 at ``spread`` or more away."""
    return np.clip(np.abs(mean - centre) / spread, 0, 1)
