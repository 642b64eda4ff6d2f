"""What an evaluation records per image: the prediction saved in ``results.jsonl``, its score, the table rows.

A method's :class:`~multicrop.evaluation.carousel.methods.MethodResult` for
one image becomes a :class:`Prediction` (:meth:`Prediction.from_result`), one
line of ``results.jsonl``; scored against the ground truth as loaded on this
run it becomes an :class:`ImageResult`.  A saved line holds only what was
predicted and what the method was asked for, never a copy of the ground
truth nor a score, so a resumed run scores old predictions against corrected
labels, and lines written before a measure existed (the blob-cut count) get
it computed on the next run.  :func:`score_rows` sums image results into the
table's :class:`ScoreRow` per subset.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...datasets.carousel import CarouselItem
from ...errors import InvalidParameterError
from ...geometry import Box
from ...metrics.kiou import KIOU_THRESHOLDS, image_kiou
from ...metrics.orientation import OrientationScore, orientation_matches
from ...serialize import Serializable
from .blobs import BlobCut
from .methods import CarouselMethod, MethodResult

__all__ = [
    "RESULTS_FILE",
    "Task",
    "Prediction",
    "ImageResult",
    "ScoreRow",
    "score_rows",
    "read_results",
    "append_result",
    "heal_torn_tail",
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
    blob_cache : str or None
        Where the worker stores the image's blob-cut saliency map after the
        prediction (:func:`multicrop.evaluation.carousel.blobs.blob_map`);
        None: it does not.
    """

    name: str
    image_path: str
    k: int
    ratios: str
    blob_cache: str | None = None

    @classmethod
    def of(cls, item: CarouselItem, ratios: str, *, blob_cache: str | Path | None = None) -> Task:
        """The task for ``item`` with ``ratios`` offered."""
        return cls(item.name, str(item.image_path), item.k, ratios, None if blob_cache is None else str(blob_cache))


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
    kIoU both derive from it.  ``blob_cut`` counts the predicted crops that
    cut a salient blob (:mod:`multicrop.evaluation.carousel.blobs`); None
    when it was not measured (turned off, or the image could not be read).
    """

    prediction: Prediction
    gt: tuple[Box, ...]
    hard_failure: bool
    totals: tuple[float, ...]
    orientation: OrientationScore = OrientationScore(0, 0)
    blob_cut: BlobCut | None = None

    @classmethod
    def score(cls, prediction: Prediction, item: CarouselItem, *, blob_cut: BlobCut | None = None) -> ImageResult:
        """Score ``prediction`` against ``item.boxes`` (kIoU and per-subject orientation).

        ``blob_cut`` is the prediction's measured blob cuts, kept as given.
        """
        totals = tuple(image_kiou(prediction.boxes, item.boxes, threshold=t).total for t in KIOU_THRESHOLDS)
        return cls(prediction, item.boxes, item.hard_failure, totals,
                   orientation_matches(prediction.boxes, item.boxes), blob_cut)

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


@dataclass(frozen=True)
class ScoreRow(Serializable):
    """One line of the results table."""

    method: str
    subset: str
    kiou_50_95: float
    kiou_50: float
    image_mean_50_95: float
    image_mean_50: float
    n_images: int
    n_boxes: int
    failures: int
    errors: int
    seconds_per_image: float
    k_exact: float = 0.0
    k_mae: float = 0.0
    orientation_accuracy: float = 0.0
    blob_cut: float | None = None



def score_rows(method: str, results: Sequence[ImageResult], subsets: Sequence[str]) -> tuple[ScoreRow, ...]:
    """Table rows for ``subsets`` of ``results`` (subsets with no image are left out).

    Besides kIoU: ``k_exact``, the share of images with exactly ``k`` crops
    (the metadata's ``subcrops``), ``k_mae``, the mean absolute difference,
    and ``orientation_accuracy``, the share of matched (prediction, label)
    pairs facing the same way (:mod:`multicrop.metrics.orientation`), and
    ``blob_cut``, the share of predicted crops that cut a salient blob over
    the images where it was measured (None if it was measured on none;
    :mod:`multicrop.evaluation.carousel.blobs`).

    kIoU is box-weighted (summed matched IoU over all ground-truth boxes), as
    :func:`multicrop.metrics.kiou.summarize_kiou`; the per-image sums come from
    each :class:`ImageResult`, so nothing is matched twice.
    """
    rows = []
    for subset in subsets:
        sel = [r for r in results if subset == "all" or (subset == "failures") == r.hard_failure]
        n_gt = sum(len(r.gt) for r in sel)
        if not sel or not n_gt:
            continue
        measured = [r.blob_cut for r in sel if r.blob_cut is not None]
        per_t = [sum(r.totals[t] for r in sel) / n_gt for t in range(len(KIOU_THRESHOLDS))]
        rows.append(
            ScoreRow(
                method=method,
                subset=subset,
                kiou_50_95=statistics.fmean(per_t),
                kiou_50=per_t[0],
                image_mean_50_95=statistics.fmean(r.kiou_50_95 for r in sel),
                image_mean_50=statistics.fmean(r.kiou_50 for r in sel),
                n_images=len(sel),
                n_boxes=n_gt,
                failures=sum(r.prediction.failure is not None for r in sel),
                errors=sum(r.prediction.error is not None for r in sel),
                seconds_per_image=statistics.fmean(r.prediction.seconds for r in sel),
                k_exact=statistics.fmean(r.k_error == 0 for r in sel),
                k_mae=statistics.fmean(abs(r.k_error) for r in sel),
                orientation_accuracy=(sum(r.orientation.correct for r in sel)
                                      / max(sum(r.orientation.matched for r in sel), 1)),
                blob_cut=(sum(b.cuts for b in measured) / max(sum(b.crops for b in measured), 1)
                          if measured else None),
            )
        )
    return tuple(rows)


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
        except (ValueError, TypeError, RecursionError):  # JSONDecodeError, InvalidParameterError: ValueErrors
            if i == len(lines) - 1:  # interrupted while writing: recompute that image
                continue
            raise InvalidParameterError(f"{p}: line {i + 1} is not a result record") from None
    return out


def heal_torn_tail(path: str | Path) -> int:
    """Cut a torn last line (a run killed while writing it) off a JSON-lines file; the bytes removed.

    The torn record's image is simply predicted again; without this, the next
    record would be glued onto the torn line and both would be lost.
    Costs one seek and one byte read when the file is whole.
    """
    try:
        fh = open(path, "rb+")
    except FileNotFoundError:
        return 0
    with fh:
        end = fh.seek(0, os.SEEK_END)
        if end == 0:
            return 0
        fh.seek(end - 1)
        if fh.read(1) == b"\n":
            return 0
        pos = end
        while pos > 0:  # back to the last newline, 64 KB at a time
            start = max(0, pos - 65536)
            fh.seek(start)
            chunk = fh.read(pos - start)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                pos = start + cut + 1
                break
            pos = start
        fh.truncate(pos)
        fh.flush()
        os.fsync(fh.fileno())
        return end - pos


def append_result(path: Path, prediction: Prediction) -> None:
    """Append ``prediction`` to the ``results.jsonl`` at ``path`` on a line of its own, flushed to disk.

    A torn last line left by an interrupted run is cut off first
    (:func:`heal_torn_tail`), so the new record always starts a new line.
    """
    heal_torn_tail(path)
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
