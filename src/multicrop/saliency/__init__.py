"""Saliency maps: a registry of methods and one function to call them.

Maps know nothing of crops; both wings (crop scoring, the offline judge) use them.

Built-in methods:

``u2netp``
    U^2-Netp salient-object detection (ONNX weights), run with onnxruntime.
    The default.
``spectral``
    Spectral residual saliency (Hou & Zhang, 2007): weight-free, a few numpy
    FFTs, an order of magnitude faster and much coarser.

Faces found by YuNet (:mod:`multicrop.saliency.faces`) are added on top by
:func:`multicrop.crop.pipeline.analyse` (the one place the two are combined), so
that crops do not cut through a face.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..errors import InvalidParameterError
from ..registry import Registry
from . import spectral, u2netp

__all__ = ["SaliencyMethod", "SALIENCY", "compute_saliency", "U2Netp", "SpectralResidual"]


class SaliencyMethod:
    """Base of registered saliency methods.

    A subclass sets the class attributes and implements :meth:`__call__`.

    Attributes
    ----------
    name, version, description : str
        Registry name; version (part of every cache key and output: bump it
        when maps change); one line for ``multicrop saliency list``.
    needs_weights : bool
        Capability flag: the method loads a model file.
    models : tuple of str
        The shipped model files it runs (keys of :data:`multicrop.models.MODELS`).

    Parameters
    ----------
    threads : int, optional
        Intra-op threads for methods that run a model (default: the process's
        share of the CPUs, :func:`multicrop.saliency.u2netp.thread_count`).
    """

    name: ClassVar[str]
    version: ClassVar[str]
    description: ClassVar[str]
    needs_weights: ClassVar[bool] = False
    models: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, threads: int | None = None) -> None:
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise InvalidParameterError(f"threads must be a positive integer or None, got {threads!r}")
        self.threads = threads

    def __call__(self, image: np.ndarray) -> np.ndarray:
        """``(H, W)`` float32 map in ``[0, 1]`` of an ``(H, W, 3)`` uint8 RGB image."""
        raise NotImplementedError


#: Registered saliency methods (entry-point group ``multicrop.saliency``).
SALIENCY: Registry[type[SaliencyMethod]] = Registry("saliency", entry_point_group="multicrop.saliency")


@SALIENCY.register
class U2Netp(SaliencyMethod):
    name = "u2netp"
    version = u2netp.VERSION
    description = "U^2-Netp salient-object detection (onnxruntime; shipped weights)"
    needs_weights = True
    models = ("u2netp",)

    def __call__(self, image: np.ndarray) -> np.ndarray:
        return u2netp.u2netp_saliency(image, threads=self.threads)


@SALIENCY.register
class SpectralResidual(SaliencyMethod):
    name = "spectral"
    version = spectral.VERSION
    description = "Spectral residual saliency (Hou & Zhang 2007); no weights"

    def __call__(self, image: np.ndarray) -> np.ndarray:
        return spectral.spectral_residual(image)


def compute_saliency(image: np.ndarray, *, method: str = "u2netp", threads: int | None = None) -> np.ndarray:
    """Saliency map of ``image``.

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
        RGB image.
    method : str
        Name of a registered method (``multicrop saliency list``).
    threads : int, optional
        Threads for methods that run a model (see :class:`SaliencyMethod`).

    Returns
    -------
    ndarray of float32, shape (H, W)
        Values in ``[0, 1]``.

    Raises
    ------
    InvalidParameterError
        If ``image`` is not an RGB array, or a method returns a map of the wrong shape.
    UnknownNameError
        If ``method`` is not registered.

    Examples
    --------
    >>> img = np.zeros((64, 96, 3), np.uint8); img[20:40, 60:80] = 255
    >>> s = compute_saliency(img, method="spectral")
    >>> s.shape, float(s.max()) <= 1.0
    ((64, 96), True)
    >>> bool(s[20:40, 60:80].mean() > s[:, :30].mean())
    True
    """
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3:
        raise InvalidParameterError(
            f"image must be an (H, W, 3) RGB array, got {getattr(image, 'shape', type(image))}"
        )
    sal = np.asarray(SALIENCY.create(method, threads=threads)(image), dtype=np.float32)
    if sal.shape != image.shape[:2]:
        raise InvalidParameterError(
            f"saliency method {method!r} returned shape {sal.shape}, expected {image.shape[:2]}"
        )
    return sal
