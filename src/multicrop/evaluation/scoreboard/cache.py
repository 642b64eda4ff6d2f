"""The scoreboard's on-disk cache of what the models found in each photo.

The expensive half of an analysis (:func:`multicrop.crop.analysis.run_models`:
the saliency map and the detections) is stored per photo, keyed by
:func:`models_key`: the analysis copy's pixels and the settings and versions
that shape the models' output *only* — the saliency model and its version,
the detectors run and their versions.  Nothing that decides how detections
become subjects, nor any selection setting, is part of the key: the subjects
are made again from the cached map and detections on every run
(:func:`multicrop.crop.analysis.analysis_from`), so a change to the crop wing
is measured without running a model.

One ``.npz`` file per key: the map (float32, exact), every detection's fields
as JSON, its keypoints and mask as arrays.

Examples
--------
>>> import numpy as np
>>> from multicrop.crop.config import CropConfig
>>> img = np.zeros((8, 8, 3), np.uint8)
>>> models_key(img, CropConfig(saliency="spectral")) == models_key(img, CropConfig(saliency="spectral", k=5))
True
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...crop.analysis import detector_versions_of, run_models
from ...crop.config import CropConfig
from ...detectors.types import Detection
from ...geometry import Box
from ...hashing import content_hash, hash_bytes
from ...saliency import SALIENCY

__all__ = ["CACHE_FORMAT", "models_settings", "models_key", "ModelCache", "encode_models", "decode_models"]

#: Bump when the file layout changes (part of every key).
CACHE_FORMAT = "scoreboard-models-1"


def models_settings(config: CropConfig) -> dict:
    """What shapes :func:`~multicrop.crop.analysis.run_models`'s output besides the pixels.

    The saliency model (name and version) and the detectors run (names and
    versions): exactly what ``run_models`` passes to the models.  Selection
    settings, ``k``, ratios, the strategy and the subject thresholds are not
    among them.
    """
    return {"format": CACHE_FORMAT,
            "saliency": f"{config.saliency}/{SALIENCY.get(config.saliency).version}",
            "detectors": detector_versions_of(config)}


def models_key(image: np.ndarray, config: CropConfig) -> str:
    """Cache key of the models' output on ``image`` (the analysis copy) under ``config``: hex digest."""
    img = np.ascontiguousarray(image)
    return content_hash({"image": hash_bytes(img.tobytes()), "shape": list(img.shape),
                         "models": models_settings(config)}).split(":", 1)[1]


def encode_models(saliency: np.ndarray, detections) -> bytes:
    """The ``.npz`` bytes of a saliency map and its detections (lossless)."""
    meta = []
    arrays = {"saliency": np.asarray(saliency)}
    for i, d in enumerate(detections):
        meta.append({"kind": d.kind, "label": d.label, "class_id": int(d.class_id),
                     "box": [float(d.box.x), float(d.box.y), float(d.box.w), float(d.box.h)],
                     "score": float(d.score), "detector": d.detector,
                     "keypoints": d.keypoints is not None, "mask": d.mask is not None})
        if d.keypoints is not None:
            arrays[f"keypoints_{i}"] = np.asarray(d.keypoints)
        if d.mask is not None:
            arrays[f"mask_{i}"] = np.asarray(d.mask)
    buf = io.BytesIO()
    np.savez_compressed(buf, meta=np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8), **arrays)
    return buf.getvalue()


def decode_models(data: bytes) -> tuple[np.ndarray, tuple[Detection, ...]]:
    """The saliency map and detections :func:`encode_models` wrote."""
    with np.load(io.BytesIO(data)) as z:
        meta = json.loads(z["meta"].tobytes().decode("utf-8"))
        sal = z["saliency"]
        dets = tuple(Detection(m["kind"], m["label"], m["class_id"], Box(*m["box"]), m["score"],
                               keypoints=z[f"keypoints_{i}"] if m["keypoints"] else None,
                               mask=z[f"mask_{i}"] if m["mask"] else None, detector=m["detector"])
                     for i, m in enumerate(meta))
    return sal, dets


@dataclass
class ModelCache:
    """A directory of cached model outputs (None: no cache, the models always run).

    Attributes
    ----------
    root : Path or None
    hits, misses : int
        Counted by :meth:`models`.
    """

    root: Path | None = None
    hits: int = 0
    misses: int = 0

    def path(self, key: str) -> Path:
        return Path(self.root) / "models" / key[:2] / f"{key}.npz"

    def models(self, image: np.ndarray, config: CropConfig, *,
               threads: int | None = None) -> tuple[np.ndarray, tuple[Detection, ...]]:
        """The saliency map and detections of ``image``: from the cache, or run and stored."""
        if self.root is None:
            self.misses += 1
            return run_models(image, config, threads=threads)
        p = self.path(models_key(image, config))
        if p.is_file():
            try:
                out = decode_models(p.read_bytes())
            except (OSError, ValueError, KeyError):  # a torn or foreign file: run again and replace it
                pass
            else:
                self.hits += 1
                return out
        self.misses += 1
        sal, dets = run_models(image, config, threads=threads)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(encode_models(sal, dets))
        os.replace(tmp, p)
        return sal, dets
