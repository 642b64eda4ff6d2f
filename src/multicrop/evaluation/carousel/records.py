"""What an evaluation records per image: the prediction saved in ``results.jsonl``, and its score.

A method's :class:`~multicrop.evaluation.carousel.methods.MethodResult` for
one image becomes a :class:`Prediction` (:meth:`Prediction.from_result`), one
line of ``results.jsonl``; scored against the ground truth as loaded on this
run it becomes an :class:`ImageResult`.  A saved line holds only what was
predicted and what the method was asked for, never a copy of the ground
truth, so a resumed run scores old predictions against corrected labels.
"""

from __future__ import annotations

import json
import os
import statistics
from dataclasses import dataclass
from pathlib import Path

from ...datasets.carousel import CarouselItem
from ...errors import InvalidParameterError
from ...geometry import Box
from ...metrics.kiou import KIOU_THRESHOLDS, image_kiou
from ...metrics.orientation import OrientationScore, orientation_matches
from ...serialize import Serializable
from .methods import CarouselMethod, MethodResult

__all__ = [
    "RESULTS_FILE",
    "Task",
    "Prediction",
    "ImageResult",
    "read_results",
    "append_result",
    "check_reusable",
]

#: Per-image results inside the report directory (one JSON object per line).
RESULTS_FILE = "results.jsonl"

#: Keys of lines written by versions that saved the ground truth and scores
#: beside the prediction; they are read and ignored.
_LEGACY_KEYS = ("hard_failure", "gt", "kiou_50", "kiou_50_95")


@dataclass(frozen=True)
class Task:
    """One image to predict, as handed to a worker process.

    Attributes
    ----------
    name : str
        The item's name.
    image_path : str
    k : int
        Crops asked for (the metadata's ``subcrops``).
    ratios : str
        Ratios offered, ``"2:3,3:2"``.
    """

    name: str
    image_path: str
    k: int
    ratios: str

    @classmethod
    def of(cls, item: CarouselItem, ratios: str) -> Task:
        """The task for ``item`` with ``ratios`` offered."""
        return cls(item.name, str(item.image_path), item.k, ratios)


@dataclass(frozen=True)
class Prediction(Serializable):
    """What a method predicted for one image: one line of ``results.jsonl``.

    Attributes
    ----------
    name, method, method_version : str
    k : int
        Crops asked for (the metadata's ``subcrops``).
    ratios : str or None
        Ratios offered, ``"2:3,3:2"``; None in lines written before ratios
        were recorded (such results are not reused).
    boxes : tuple of Box
        Predicted crops in source pixels.
    failure : str or None
        The method's own failure reason.
    seconds : float
    error : str or None
        A library error the method raised (the image counts with no prediction).
    """

    name: str
    method: str
    method_version: str
    k: int
    ratios: str | None
    boxes: tuple[Box, ...]
    failure: str | None
    seconds: float
    error: str | None = None

    @classmethod
    def from_result(
        cls, task: Task, method: CarouselMethod, result: MethodResult, *, error: str | None = None
    ) -> Prediction:
        """The line for ``task``: ``method``'s ``result``, or an ``error`` with an empty result."""
        return cls(
            name=task.name,
            method=method.name,
            method_version=method.version,
            k=task.k,
            ratios=task.ratios,
            boxes=result.boxes,
            failure=result.failure,
            seconds=result.seconds,
            error=error,
        )

    @classmethod
    def from_line(cls, line: str) -> Prediction:
        """Parse one line of ``results.jsonl``.

        Lines of older versions are read too: their saved ground truth and
        scores are ignored and ``ratios`` is None.

        Raises
        ------
        json.JSONDecodeError, InvalidParameterError
            If ``line`` is not a result record.
        """
        data = json.loads(line)
        if not isinstance(data, dict):
            raise InvalidParameterError(f"a result line must be a JSON object, got {type(data).__name__}")
        data = {k: v for k, v in data.items() if k not in _LEGACY_KEYS}
        data.setdefault("ratios", None)
        return cls.from_dict(data)

    def to_line(self) -> str:
        """This prediction as one line of ``results.jsonl`` (without the newline)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)


@dataclass(frozen=True)
class ImageResult:
    """One image's :class:`Prediction` scored against the current ground truth.

    ``totals`` holds the matched IoU summed over the image's ground-truth
    boxes at each of :data:`~multicrop.metrics.kiou.KIOU_THRESHOLDS`, computed
    once (:meth:`score`); the image's own means and the table's box-weighted
    kIoU both derive from it.
    """

    prediction: Prediction
    gt: tuple[Box, ...]
    hard_failure: bool
    totals: tuple[float, ...]
    orientation: OrientationScore = OrientationScore(0, 0)

    @classmethod
    def score(cls, prediction: Prediction, item: CarouselItem) -> ImageResult:
        """Score ``prediction`` against ``item.boxes`` (kIoU and per-subject orientation)."""
        totals = tuple(image_kiou(prediction.boxes, item.boxes, threshold=t).total for t in KIOU_THRESHOLDS)
        return cls(prediction, item.boxes, item.hard_failure, totals,
                   orientation_matches(prediction.boxes, item.boxes))

    @property
    def k_error(self) -> int:
        """Crops predicted minus crops asked for (the metadata's ``subcrops``)."""
        return len(self.prediction.boxes) - self.prediction.k

    @property
    def kiou_50(self) -> float:
        """This image's kIoU@0.5 (0 without ground truth)."""
        return self.totals[0] / len(self.gt) if self.gt else 0.0

    @property
    def kiou_50_95(self) -> float:
        """This image's kIoU@0.5:0.95 (0 without ground truth)."""
        return statistics.fmean(self.totals) / len(self.gt) if self.gt else 0.0


def read_results(path: str | Path) -> list[Prediction]:
    """Predictions stored in a ``results.jsonl`` (a torn last line is ignored).

    Raises
    ------
    InvalidParameterError
        If a line other than the last is not a result record.
    """
    p = Path(path)
    if not p.is_file():
        return []
    out = []
    lines = p.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            out.append(Prediction.from_line(line))
        except (ValueError, TypeError):  # JSONDecodeError and InvalidParameterError are ValueErrors
            if i == len(lines) - 1:  # interrupted while writing: recompute that image
                continue
            raise InvalidParameterError(f"{p}: line {i + 1} is not a result record") from None
    return out


def append_result(path: Path, prediction: Prediction) -> None:
    """Append ``prediction`` to the ``results.jsonl`` at ``path``, flushed to disk."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(prediction.to_line() + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def check_reusable(prediction: Prediction, path: Path, method: CarouselMethod, ratios: str) -> None:
    """Refuse a report directory whose saved predictions were made differently.

    Raises
    ------
    InvalidParameterError
        If ``prediction`` (read from ``path``) was made by another method or
        version, or with other (or unrecorded) ratios.
    """
    if (prediction.method, prediction.method_version) != (method.name, method.version):
        raise InvalidParameterError(
            f"{path} holds results of method {prediction.method!r} version {prediction.method_version}; "
            f"use another report directory for {method.name!r} version {method.version}"
        )
    if prediction.ratios is None:
        raise InvalidParameterError(
            f"{path} holds results written before the offered ratios were recorded; "
            f"use another report directory (or delete it) to evaluate with ratios {ratios}"
        )
    if prediction.ratios != ratios:
        raise InvalidParameterError(
            f"{path} holds results for ratios {prediction.ratios}; use another report directory for ratios {ratios}"
        )
