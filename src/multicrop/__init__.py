"""multicrop: one photo in, k distinct aesthetically strong crops out.

The main entry point is :func:`multicrop.crop_photo`; everything else lives
in submodules (``multicrop.geometry``, ``multicrop.saliency``, ...).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("multicrop")
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0.0.0+unknown"

__all__ = ["__version__", "crop_photo", "CropConfig", "CropResult"]


def __getattr__(name: str):
    # The pipeline pulls in onnxruntime and OpenCV; import it only when used.
    if name in ("crop_photo", "CropConfig", "CropResult"):
        from . import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module 'multicrop' has no attribute {name!r}")
