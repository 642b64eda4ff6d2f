"""Per-subject orientation accuracy: does each crop face the way the human crop does?

Predictions are matched one-to-one to ground-truth boxes greedily by IoU
(highest first, pairs above ``min_iou`` only, like kIoU's matching); a
matched pair is *correct* when both boxes are landscape (``w >= h``) or both
portrait.  Unmatched boxes do not count: this measures the orientation of
the subjects a method found, kIoU measures whether it found them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..geometry import Box
from .kiou import match_boxes

__all__ = ["OrientationScore", "orientation_matches"]


@dataclass(frozen=True)
class OrientationScore:
    """Matched pairs and how many of them share the orientation."""

    matched: int
    correct: int

    @property
    def accuracy(self) -> float:
        """``correct / matched`` (0 when nothing matched)."""
        return self.correct / self.matched if self.matched else 0.0


def orientation_matches(predictions: Sequence[Box], ground_truth: Sequence[Box], *,
                        min_iou: float = 0.1) -> OrientationScore:
    """Orientation agreement of predictions matched to ground truth (IoU >= ``min_iou``).

    Examples
    --------
    >>> gt = [Box(0, 0, 20, 30), Box(50, 0, 30, 20)]
    >>> s = orientation_matches([Box(0, 0, 30, 20), Box(50, 0, 30, 20)], gt)
    >>> s.matched, s.correct, s.accuracy
    (2, 1, 0.5)
    """
    matches = match_boxes(predictions, ground_truth, threshold=min_iou)
    correct = sum((predictions[m.pred].w >= predictions[m.pred].h) == (ground_truth[m.gt].w >= ground_truth[m.gt].h)
                  for m in matches)
    return OrientationScore(len(matches), int(correct))
