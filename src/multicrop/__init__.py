"""multicrop: one photo in, k distinct aesthetically strong crops out.

The main entry point is :func:`multicrop.crop_photo`; everything else lives
in submodules (``multicrop.geometry``, ``multicrop.saliency``, ...).
"""

from __future__ import annotations

import functools

__all__ = ["__version__", "package_version", "crop_photo", "analyse", "Analysis", "CropConfig", "OutputConfig",
           "CropResult"]


@functools.cache
def package_version() -> str:
    """The installed package's version, as ``importlib.metadata.version`` reads it (on first use).

    Read from the distribution's metadata folder on ``sys.path`` when that is
    sure (:func:`multicrop.distributions.version_on_path`), else through
    importlib.metadata (about 40 ms of imports).
    """
    import sys

    from .distributions import version_on_path

    found = version_on_path("multicrop", sys.path, sys.meta_path)
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("multicrop")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0.0.0+unknown"


def __getattr__(name: str):
    if name == "__version__":
        return package_version()
    # The pipeline pulls in onnxruntime and OpenCV; import it only when used.
    if name in ("crop_photo", "CropResult", "analyse", "Analysis"):
        from .crop import pipeline

        return getattr(pipeline, name)
    if name in ("CropConfig", "OutputConfig"):
        from .crop import config

        return getattr(config, name)
    raise AttributeError(f"module 'multicrop' has no attribute {name!r}")
