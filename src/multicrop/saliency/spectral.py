"""Spectral residual saliency (Hou & Zhang, CVPR 2007), in numpy.

The log amplitude spectrum of a small copy of the image minus its local
average is the "spectral residual"; transforming it back with the original
phase highlights what is unexpected in the image.
"""

from __future__ import annotations

import cv2
import numpy as np

__all__ = ["spectral_residual", "VERSION"]

VERSION = "1"


def spectral_residual(image: np.ndarray, *, width: int = 64, sigma: float = 2.5) -> np.ndarray:
    """Spectral residual saliency map.

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
    width : int
        Width of the copy the spectrum is computed on (the method works at
        coarse scale by design).
    sigma : float
        Gaussian smoothing of the result, in pixels of the small copy.

    Returns
    -------
    ndarray of float32, shape (H, W), values in [0, 1]

    References
    ----------
    X. Hou and L. Zhang, "Saliency Detection: A Spectral Residual Approach", CVPR 2007.
    """
    h0, w0 = image.shape[:2]
    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY).astype(np.float32)
    ws = max(8, min(width, w0))
    hs = max(8, round(h0 * ws / w0))
    small = cv2.resize(grey, (ws, hs), interpolation=cv2.INTER_AREA)
    spec = np.fft.fft2(small)
    log_amp = np.log(np.abs(spec) + 1e-8)
    phase = np.angle(spec)
    residual = log_amp - cv2.blur(log_amp, (3, 3), borderType=cv2.BORDER_REFLECT)
    sal = np.abs(np.fft.ifft2(np.exp(residual + 1j * phase))) ** 2
    sal = cv2.GaussianBlur(sal.astype(np.float32), (0, 0), sigma)
    sal = cv2.resize(sal, (w0, h0), interpolation=cv2.INTER_LINEAR)
    lo, hi = float(sal.min()), float(sal.max())
    return ((sal - lo) / (hi - lo) if hi > lo else np.zeros_like(sal)).astype(np.float32)
