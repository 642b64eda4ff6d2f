"""The ``yunet`` detector: faces, with YuNet's five landmarks as keypoints."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..geometry import Box
from ..models import MODELS
from ..models.yunet import yunet_faces
from .base import DETECTORS, Detector
from .types import Detection

__all__ = ["YuNet", "MIN_SCORE", "DECODE_VERSION"]

#: Version of the letterbox and decoding in :mod:`multicrop.models.yunet` and of MIN_SCORE
#: (bump when the detections of the same file change).
DECODE_VERSION = "1"
#: Face confidence threshold, the value multicrop's saliency faces have always
#: used.  On the 100 coco-subjects photos (no face outlines there: a face is
#: taken as right when at least 30 % of its box lies on a person's outline)
#: 0.7 finds 61 faces of which 93 % are right; 0.6 finds 78 (86 %), 0.5 finds
#: 90 (82 %), 0.8 finds 45 (98 %).  Reproduce with
#: ``python benchmarks/bench_detectors.py --no-speed --labelled DIR``.
MIN_SCORE = 0.7


@DETECTORS.register
class YuNet(Detector):
    name = "yunet"
    models = ("yunet",)
    version = f"yunet-{DECODE_VERSION}-{MODELS['yunet'].version}"
    description = "YuNet faces with five landmarks (onnxruntime; shipped weights, MIT)"
    kinds = ("face",)
    gives_keypoints = True
    default_min_score = MIN_SCORE

    def __call__(self, image: np.ndarray, *, found: Sequence[Detection] = ()) -> tuple[Detection, ...]:
        h, w = image.shape[:2]
        boxes, scores, marks = yunet_faces(image, threads=self.threads, score_threshold=self.min_score)
        out = []
        for (x1, y1, x2, y2), score, pts in zip(boxes, scores, marks):
            box = Box.from_corners(float(x1), float(y1), float(x2), float(y2)).clip(w, h)
            if box.area <= 0:
                continue
            keypoints = np.concatenate([pts, np.ones((5, 1))], axis=1).astype(np.float32)
            out.append(Detection(kind="face", label="face", class_id=-1, box=box, score=float(min(score, 1.0)),
                                 keypoints=keypoints, detector=self.name))
        return tuple(out)
