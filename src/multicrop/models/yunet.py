"""YuNet face detection run by onnxruntime: letterbox, network, decoding.

Used by two sibling floors (:mod:`multicrop.saliency.faces` paints faces into
saliency maps, :mod:`multicrop.detectors` names them as detections), so it
lives beside the model file, below both.

The shipped ``face_detection_yunet_2023mar.onnx`` takes one fixed
``1 x 3 x 640 x 640`` BGR image with values 0-255 (no scaling); the photo is
shrunk (never enlarged) to fit 640 x 640 and padded at the right and bottom.
For each stride 8, 16 and 32 and each cell ``(row, col)`` the network gives a
class and an objectness score (their geometric mean is the face score), a box
``(dx, dy, log w, log h)`` in stride units around the cell's corner
``(col, row)`` and five landmarks as offsets from that corner (right eye, left
eye, nose tip, right and left mouth corners), decoded as OpenCV's
``FaceDetectorYN`` decodes them; overlapping faces are merged by NMS.

References
----------
W. Wu, H. Peng and S. Yu, "YuNet: A tiny millisecond-level face detector",
Machine Intelligence Research 20, 2023.
"""

from __future__ import annotations

import cv2
import numpy as np

from .sessions import onnx_session

__all__ = ["yunet_faces", "INPUT_SIZE", "STRIDES", "LANDMARKS", "NMS_IOU"]

INPUT_SIZE = 640
STRIDES = (8, 16, 32)
#: YuNet's five landmarks, in its output order.
LANDMARKS = ("right_eye", "left_eye", "nose_tip", "right_mouth_corner", "left_mouth_corner")
#: Overlap above which the weaker of two face boxes goes (OpenCV's FaceDetectorYN default).
NMS_IOU = 0.3


def _decode(outputs: dict[str, np.ndarray], *, score_threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    boxes, scores, marks = [], [], []
    for stride in STRIDES:
        n = INPUT_SIZE // stride
        cls = outputs[f"cls_{stride}"].reshape(-1).clip(0, 1)
        obj = outputs[f"obj_{stride}"].reshape(-1).clip(0, 1)
        score = np.sqrt(cls * obj)
        cells = np.flatnonzero(score >= score_threshold)
        if cells.size == 0:
            continue
        col = (cells % n).astype(np.float64)
        row = (cells // n).astype(np.float64)
        b = outputs[f"bbox_{stride}"].reshape(-1, 4)[cells].astype(np.float64)
        cx, cy = (col + b[:, 0]) * stride, (row + b[:, 1]) * stride
        w, h = np.exp(b[:, 2]) * stride, np.exp(b[:, 3]) * stride
        boxes.append(np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1))
        k = outputs[f"kps_{stride}"].reshape(-1, 5, 2)[cells].astype(np.float64)
        marks.append(np.stack([(k[..., 0] + col[:, None]) * stride, (k[..., 1] + row[:, None]) * stride], axis=2))
        scores.append(score[cells].astype(np.float64))
    if not boxes:
        return np.zeros((0, 4)), np.zeros(0), np.zeros((0, 5, 2))
    return np.concatenate(boxes), np.concatenate(scores), np.concatenate(marks)


def _nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> np.ndarray:
    order = np.argsort(-scores, kind="stable")
    keep: list[int] = []
    for i in order:
        if keep:
            k = boxes[keep]
            ix = np.clip(np.minimum(k[:, 2], boxes[i, 2]) - np.maximum(k[:, 0], boxes[i, 0]), 0, None)
            iy = np.clip(np.minimum(k[:, 3], boxes[i, 3]) - np.maximum(k[:, 1], boxes[i, 1]), 0, None)
            inter = ix * iy
            area = lambda b: (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])  # noqa: E731
            if np.any(inter / np.maximum(area(k) + area(boxes[i]) - inter, 1e-9) > iou):
                continue
        keep.append(int(i))
    return np.array(keep, dtype=np.intp)


def yunet_faces(
    image: np.ndarray, *, threads: int, score_threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Faces in an RGB image, best score first.

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
        RGB.
    threads : int
        onnxruntime intra-op threads.
    score_threshold : float
        Minimum face score.

    Returns
    -------
    boxes : ndarray of shape (N, 4)
        Corners ``x1, y1, x2, y2`` in ``image`` pixels, clipped to it.
    scores : ndarray of shape (N,)
    landmarks : ndarray of shape (N, 5, 2)
        ``(x, y)`` of :data:`LANDMARKS` in ``image`` pixels.
    """
    h, w = image.shape[:2]
    f = min(1.0, INPUT_SIZE / max(h, w))
    sw, sh = max(1, round(w * f)), max(1, round(h * f))
    small = image if f == 1.0 else cv2.resize(image, (sw, sh), interpolation=cv2.INTER_AREA)
    canvas = np.zeros((INPUT_SIZE, INPUT_SIZE, 3), np.float32)
    canvas[:sh, :sw] = small[..., ::-1]
    x = np.ascontiguousarray(canvas.transpose(2, 0, 1)[None])
    sess = onnx_session("yunet", threads=threads)
    names = [o.name for o in sess.get_outputs()]
    outputs = dict(zip(names, sess.run(names, {sess.get_inputs()[0].name: x})))
    boxes, scores, marks = _decode(outputs, score_threshold=score_threshold)
    keep = _nms(boxes, scores, NMS_IOU)
    sx, sy = sw / w, sh / h
    boxes = boxes[keep] / [sx, sy, sx, sy]
    boxes = boxes.clip(0, [w, h, w, h])
    marks = marks[keep] / [sx, sy]
    return boxes, scores[keep], marks
