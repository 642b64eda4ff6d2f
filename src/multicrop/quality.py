"""Faults of one whole image, on arrays: noise, blur, JPEG blocking, tilt.

No-reference estimates the offline ``measured`` judge
(:mod:`multicrop.judges.measures`) rates an image with; they build on the
shared measures of :mod:`multicrop.measures` (``gradient_magnitude``).
OpenCV is imported inside the functions that use it (start-up).
"""

from __future__ import annotations

import numpy as np

from .measures import gradient_magnitude

__all__ = ["IMMERKAER_KERNEL", "noise_sigma", "blur_ratio", "blur_ratios", "blockiness", "tilt_degrees"]

#: Immerkaer's noise-estimation kernel (the difference of two Laplacians).
IMMERKAER_KERNEL = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float32)


def noise_sigma(grey: np.ndarray, *, smooth_fraction: float = 0.5) -> float:
    """Standard deviation of additive noise in a grey image (Immerkaer's estimate on smooth pixels).

    The 3x3 Immerkaer filter cancels locally planar image content; what
    remains at pixels with a small gradient is mostly noise.  Edges inflate
    the plain estimate, so only the ``smooth_fraction`` of pixels with the
    smallest Sobel gradient are used (Tai & Yang's refinement), with the
    half-normal correction for that selection omitted: the value ranks
    images, it is not a calibrated sigma.

    Parameters
    ----------
    grey : ndarray, shape (H, W)
        Grey image on a 0..255 scale (any real dtype).
    smooth_fraction : float
        Share of pixels, lowest gradient first, that are used.

    Returns
    -------
    float
        Noise sigma in grey levels (0 for an image under 3x3).

    References
    ----------
    J. Immerkaer, "Fast noise variance estimation", CVIU 64(2), 1996.
    S.-C. Tai and S.-M. Yang, "A fast method for image noise estimation using Laplacian operator and
    adaptive edge detection", ISCCSP 2008.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> flat = np.full((200, 200), 100.0, np.float32)
    >>> round(noise_sigma(flat), 2), 7 < noise_sigma(flat + rng.normal(0, 10, flat.shape)) < 13
    (0.0, True)
    """
    import cv2  # OpenCV only where it is used (start-up)

    g = np.asarray(grey, np.float32)
    if g.shape[0] < 3 or g.shape[1] < 3:
        return 0.0
    conv = np.abs(cv2.filter2D(g, cv2.CV_32F, IMMERKAER_KERNEL)[1:-1, 1:-1])
    grad = gradient_magnitude(g)[1:-1, 1:-1]
    flat = grad.ravel()
    k = min(flat.size - 1, max(0, int(smooth_fraction * flat.size)))
    keep = grad <= np.partition(flat, k)[k]  # the quantile without a full sort
    return float(np.sqrt(np.pi / 2.0) * conv[keep].mean() / 6.0) if keep.any() else 0.0


def blur_ratio(grey: np.ndarray, *, mask: np.ndarray | None = None, width: int = 9) -> float:
    """Perceptual blur in ``[0, 1]`` (Crete-Roffet's re-blur measure): 0 sharp, 1 fully blurred.

    The image is blurred again with a ``width``-pixel box along each axis; a
    sharp image loses much of its neighbour-to-neighbour variation, an already
    blurred one little.  The measure is the share of variation that survives,
    the larger of the two axes.  It does not depend on exposure (a ratio) and
    ``mask`` restricts it to a region (the subject, or the background); see
    :func:`blur_ratios` for several regions at the cost of one.

    References
    ----------
    F. Crete-Roffet et al., "The blur effect: perception and estimation with a new no-reference
    perceptual blur metric", SPIE 6492, 2007.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> img = (rng.random((64, 64)) > 0.5).astype(np.float32) * 255
    >>> import cv2
    >>> sharp, soft = blur_ratio(img), blur_ratio(cv2.GaussianBlur(img, (0, 0), 3))
    >>> sharp < 0.1 < 0.5 < soft
    True
    """
    return blur_ratios(grey, [mask], width=width)[0]


def blur_ratios(grey: np.ndarray, masks, *, width: int = 9) -> list[float]:
    """:func:`blur_ratio` of each region in ``masks`` (``None`` = the whole image), sharing the filtering.

    A region with no variation at all (flat) counts as fully blurred (1), and
    so does an image one pixel wide and high; an image one pixel wide (or
    high) is measured along its other axis only.

    Examples
    --------
    >>> blur_ratios(np.zeros((1, 1), np.float32), [None]), blur_ratios(np.zeros((1, 5), np.float32), [None])
    ([1.0], [1.0])
    """
    import cv2  # OpenCV only where it is used (start-up)

    g = np.asarray(grey, np.float32)
    axes = [(axis, ksize) for axis, ksize in ((0, (1, width)), (1, (width, 1))) if g.shape[axis] > 1]
    worst = [0.0 if axes else 1.0] * len(masks)  # steps exist along an axis of at least two pixels
    for axis, ksize in axes:
        blurred = cv2.blur(g, ksize)
        if axis == 0:
            d_img, d_blur = cv2.absdiff(g[1:], g[:-1]), cv2.absdiff(blurred[1:], blurred[:-1])
        else:
            d_img, d_blur = cv2.absdiff(g[:, 1:], g[:, :-1]), cv2.absdiff(blurred[:, 1:], blurred[:, :-1])
        kept = cv2.max(cv2.subtract(d_img, d_blur), 0.0)
        for i, mask in enumerate(masks):
            if mask is None:
                s, k = float(d_img.sum()), float(kept.sum())
            else:
                m = (mask[1:, :] if axis == 0 else mask[:, 1:]).astype(np.uint8)
                s, k = cv2.sumElems(cv2.multiply(d_img, m, dtype=cv2.CV_32F))[0], 0.0
                k = cv2.sumElems(cv2.multiply(kept, m, dtype=cv2.CV_32F))[0]
            worst[i] = max(worst[i], (s - k) / s if s > 1e-9 else 1.0)
    return worst


def blockiness(grey: np.ndarray, *, block: int = 8) -> float:
    """How much stronger the steps are across the ``block`` grid than inside the blocks (0 = none).

    JPEG codes 8x8 blocks independently; at high compression each block's
    edges show as steps.  The measure is the mean absolute difference across
    grid lines over the mean difference elsewhere (each plus one grey level), minus 1.  It needs the
    decoded file at its own size: resampling moves and blurs the grid.

    Examples
    --------
    >>> ramp = np.add.outer(np.arange(64), np.arange(64)).astype(np.float32) * 0.1
    >>> g = np.kron(np.arange(64, dtype=np.float32).reshape(8, 8) * 3, np.ones((8, 8), np.float32))
    >>> bool(blockiness(g + ramp) > 5), blockiness(ramp)
    (True, 0.0)
    """
    g = np.asarray(grey, np.float32)
    scores = []
    for axis in (0, 1):
        d = np.abs(np.diff(g, axis=axis))
        n = d.shape[axis]
        if n < 2 * block:
            continue
        on = np.zeros(n, bool)
        on[block - 1 :: block] = True
        across = (d[on] if axis == 0 else d[:, on]).mean()
        inside = (d[~on] if axis == 0 else d[:, ~on]).mean()
        # One grey level added to both: a flat picture with a few crisp edges is not blocky.
        scores.append(max(0.0, (float(across) + 1.0) / (float(inside) + 1.0) - 1.0))
    return float(np.mean(scores)) if scores else 0.0


def tilt_degrees(grey: np.ndarray, *, max_tilt: float = 12.0, min_length: float = 0.3) -> tuple[float, float]:
    """Tilt of the dominant near-level straight lines (a horizon), and how much line evidence there is.

    Long straight lines (Canny edges, probabilistic Hough transform, at least
    ``min_length`` of the image's width) within ``max_tilt`` degrees of
    horizontal vote with their length; the tilt is the length-weighted median
    of their angles from level.  Near-vertical lines do not vote: they
    converge under perspective whenever the camera is tipped up or down.

    Returns
    -------
    tilt : float
        Degrees, signed (0 when there is no line).
    evidence : float
        Total voting line length over the image's width.

    Examples
    --------
    >>> import cv2
    >>> img = np.zeros((200, 300), np.uint8); _ = cv2.line(img, (10, 90), (290, 120), 255, 2)
    >>> t, e = tilt_degrees(img)
    >>> 5 < t < 7 and e > 0.5
    True
    """
    import cv2  # OpenCV only where it is used (start-up)

    g = np.asarray(grey)
    if g.dtype != np.uint8:
        g = np.clip(g, 0, 255).astype(np.uint8)
    short, width = min(g.shape[:2]), g.shape[1]
    smooth = cv2.GaussianBlur(g, (0, 0), 1.0)
    edges = cv2.Canny(smooth, 50, 150)
    # Only edge pixels whose gradient points within max_tilt of vertical can lie on a near-level line:
    # dropping the rest keeps the Hough transform cheap.
    gx = np.abs(cv2.Sobel(smooth, cv2.CV_32F, 1, 0, ksize=3))
    gy = np.abs(cv2.Sobel(smooth, cv2.CV_32F, 0, 1, ksize=3))
    edges[gy * np.tan(np.radians(max_tilt + 5.0)) < gx] = 0
    lines = cv2.HoughLinesP(edges, 1, np.pi / 720, threshold=max(20, short // 8),
                            minLineLength=max(8, int(min_length * width)), maxLineGap=max(2, short // 100))
    if lines is None:
        return 0.0, 0.0
    segments = lines.reshape(-1, 4).astype(np.float64)  # OpenCV 4 gives (N, 1, 4), OpenCV 5 (N, 4)
    x1, y1, x2, y2 = (segments[:, i] for i in range(4))
    ang = np.degrees(np.arctan2(y2 - y1, x2 - x1))
    dev = (ang + 90.0) % 180.0 - 90.0  # angle from level, either direction of the segment
    length = np.hypot(x2 - x1, y2 - y1)
    keep = np.abs(dev) <= max_tilt
    if not keep.any():
        return 0.0, 0.0
    dev, length = dev[keep], length[keep]
    order = np.argsort(dev)
    cum = np.cumsum(length[order])
    median = float(dev[order][np.searchsorted(cum, cum[-1] / 2.0)])
    return median, float(length.sum() / width)
