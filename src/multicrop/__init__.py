"""multicrop: one photo in, k distinct aesthetically strong crops out.

The main entry point is :func:`multicrop.crop_photo`; everything else lives
in submodules (``multicrop.geometry``, ``multicrop.saliency``, ...).
"""

from __future__ import annotations

import functools

__all__ = ["__version__", "crop_photo", "CropConfig", "CropResult"]


@functools.cache
def _version() -> str:
    # importlib.metadata costs ~100 ms at import; read it only when asked.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("multicrop")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0.0.0+unknown"


def __getattr__(name: str):
    if name == "__version__":
        return _version()
    # The pipeline pulls in onnxruntime and OpenCV; import it only when used.
    if name in ("crop_photo", "CropConfig", "CropResult"):
        from .crop import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module 'multicrop' has no attribute {name!r}")
