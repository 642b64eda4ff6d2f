"""Defaults that settings on several floors name, in a module that imports nothing.

``crop.config`` and the command faces read :data:`DEFAULT_DETECTORS` from here, so that reading
the crop settings (or printing ``--help``) never imports the detector registry, onnxruntime or
OpenCV; :mod:`multicrop.detectors` re-exports it.
"""

__all__ = ["DEFAULT_DETECTORS"]

#: The detectors a crop runs by default: NanoDet (80 COCO classes), YuNet faces, MediaPipe pose.
DEFAULT_DETECTORS: tuple[str, ...] = ("nanodet", "yunet", "pose")
