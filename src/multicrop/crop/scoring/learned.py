"""A learned framing term: the embedding judge's head applied to each candidate crop.

Each candidate box is cut from the analysis image, stretched to the
embedding network's 224 x 224 input (:func:`multicrop.embeddings.preprocess`,
the same way the ``embedding`` judge sees a whole photo), embedded in
batches (:func:`multicrop.embeddings.embed_batch`), and the head's linear map
``e @ coef + intercept`` is taken onto ``[0, 1]`` by the head's ratings scale
(``(s - lo) / (hi - lo)``, clipped).

The crop wing may not import :mod:`multicrop.judges` (``.importlinter``), so
the head is anything with ``coef`` (d,), ``intercept`` and ``scale``
``(lo, hi)`` -- a :class:`multicrop.judges.heads.HeadTarget` is one -- or
anything with ``target(name)`` returning such a thing (a
:class:`~multicrop.judges.heads.Head`; its ``"overall"`` target is used).

Cost: one network pass per scored box (about 15-25 ms per box on 2 threads
at 224 px), which is why ``top`` exists: score only the ``top`` boxes by
another score (``prior``) and give the others NaN.

Examples
--------
>>> import numpy as np
>>> from multicrop.geometry import Box
>>> head = LinearHead(coef=np.zeros(1280, np.float32), intercept=3.0, scale=(1.0, 5.0))
>>> img = np.full((60, 80, 3), 128, np.uint8)
>>> framing_scores(img, [Box(0, 0, 40, 40), Box(40, 20, 40, 40)], head, threads=1).tolist()
[0.5, 0.5]
>>> framing_scores(img, [], head).shape
(0,)
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from ...embeddings import EMBEDDING, embed_batch
from ...errors import InvalidParameterError
from ...geometry import Box
from ...ratios import Ratio
from .base import ScoredCrop, Scorer, ScoringContext, int_corners

__all__ = ["LEARNED_VERSION", "LinearHead", "HeadLike", "as_linear_head", "crop_pixels", "framing_scores",
           "LearnedScorer"]

#: Version of the learned term (bump when the same head would give other scores).
LEARNED_VERSION = "1"


@runtime_checkable
class HeadLike(Protocol):
    """A linear score over the embedding: ``e @ coef + intercept`` on ``scale``."""

    coef: np.ndarray
    intercept: float
    scale: tuple[float, float]


@dataclass(frozen=True)
class LinearHead:
    """A plain linear head (what :func:`as_linear_head` turns any head into).

    Attributes
    ----------
    coef : ndarray of float, shape (d,)
    intercept : float
    scale : (float, float)
        The ratings scale ``(lo, hi)``; scores are mapped from it onto [0, 1].
    """

    coef: np.ndarray = field(repr=False)
    intercept: float = 0.0
    scale: tuple[float, float] = (0.0, 1.0)


def as_linear_head(head, *, target: str = "overall") -> LinearHead:
    """``head`` as a :class:`LinearHead`, checked against the shipped embedding's size.

    Raises
    ------
    InvalidParameterError
        A head without a ``target`` of that name, without ``coef`` /
        ``intercept`` / ``scale``, with ``dim`` other than the embedding's,
        or with an empty scale.
    """
    if hasattr(head, "target") and callable(head.target):
        found = head.target(target)
        if found is None:
            names = ", ".join(getattr(head, "names", lambda: ())()) or "none"
            raise InvalidParameterError(f"head has no target {target!r} (it has: {names})")
        head = found
    if not all(hasattr(head, a) for a in ("coef", "intercept", "scale")):
        raise InvalidParameterError(f"head must have coef, intercept and scale (a fitted head target), "
                                    f"got {type(head).__name__}")
    coef = np.asarray(head.coef, np.float64).reshape(-1)
    if coef.shape != (EMBEDDING.dim,):
        raise InvalidParameterError(f"head coef must have {EMBEDDING.dim} values (the embedding's size), "
                                    f"got {coef.shape[0]}")
    lo, hi = (float(v) for v in head.scale)
    if not hi > lo:
        raise InvalidParameterError(f"head scale must be (lo, hi) with hi > lo, got {tuple(head.scale)}")
    return LinearHead(coef=coef, intercept=float(head.intercept), scale=(lo, hi))


def crop_pixels(image: np.ndarray, box: Box) -> np.ndarray:
    """The pixels of ``box`` in ``image``, the box rounded outward and clipped to the frame (at least 1 px)."""
    x1, y1, x2, y2 = (int(v[0]) for v in int_corners([box], image.shape[1], image.shape[0]))
    return np.ascontiguousarray(image[y1:y2, x1:x2])


def framing_scores(image: np.ndarray, boxes: Sequence[Box], head, *, threads: int | None = None, batch: int = 32,
                   top: int | None = None, prior: np.ndarray | None = None) -> np.ndarray:
    """The head's score of each candidate framing, in [0, 1].

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
        The analysis image the boxes are in.
    boxes : sequence of Box
        Candidate crops in ``image`` pixels (clipped to the frame).
    head : HeadLike or Head
        See :func:`as_linear_head`.
    threads : int, optional
        onnxruntime threads (default: the package's thread count).
    batch : int
        Crops per network pass (memory: about 0.6 MB of input per crop).
    top : int, optional
        Score only the ``top`` boxes with the highest ``prior``; the others
        get NaN.  Default: every box.
    prior : ndarray of float, shape (n,), optional
        The other score that chooses the ``top`` boxes (required with ``top``).

    Returns
    -------
    ndarray of float64, shape (n,)
        ``(e @ coef + intercept - lo) / (hi - lo)`` clipped to [0, 1]; NaN
        for the boxes ``top`` left out.

    Raises
    ------
    InvalidParameterError
        A bad image, ``batch`` or ``top`` below 1, ``top`` without a
        ``prior`` of one value per box, or a head that does not fit (see
        :func:`as_linear_head`).
    """
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise InvalidParameterError(f"image must be an (H, W, 3) uint8 array, got shape "
                                    f"{getattr(image, 'shape', None)} dtype {getattr(image, 'dtype', None)}")
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
        raise InvalidParameterError(f"batch must be a positive integer, got {batch!r}")
    lin = as_linear_head(head)
    boxes = list(boxes)
    n = len(boxes)
    out = np.full(n, np.nan)
    if top is None:
        chosen = np.arange(n)
    else:
        if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1:
            raise InvalidParameterError(f"top must be a positive integer or None, got {top!r}")
        if prior is None or np.shape(prior) != (n,):
            raise InvalidParameterError(f"top needs prior, one score per box ({n}), got shape {np.shape(prior)}")
        chosen = np.sort(np.argsort(-np.asarray(prior, np.float64), kind="stable")[:top])
    lo, hi = lin.scale
    for i in range(0, len(chosen), batch):
        idx = chosen[i:i + batch]
        emb = embed_batch([crop_pixels(image, boxes[j]) for j in idx], threads=threads)
        raw = emb.astype(np.float64) @ lin.coef + lin.intercept
        out[idx] = np.clip((raw - lo) / (hi - lo), 0.0, 1.0)
    return out


class LearnedScorer:
    """A scorer plus one soft term: the head's score of each framing, among the base scorer's best.

    Each call scores ``boxes`` with ``base``; the ``top`` boxes of that call
    by the base score are embedded and rated by ``head`` (in [0, 1], see
    :func:`framing_scores`), and each of them moves by ``weight`` times its
    rating minus their mean rating.  The other boxes keep the base score: the
    term re-ranks the framings the base scorer already likes and never lifts
    one it ranks low.  Embeddings are kept per photo (a box scored again, by
    another stage or another k, costs nothing).

    Parameters
    ----------
    head : HeadLike or Head
        A fitted head (:func:`as_linear_head`).  No head ships with multicrop:
        fit one on your own ratings (docs/embedding-judge.md).
    base : Scorer
        The scorer whose scores are re-ranked (the composition scorer of the
        crop settings, :func:`multicrop.crop.scoring.get_scorer`).
    weight : float
        The term's weight, in the base scorer's units.
    top : int
        Boxes rated per call (at least 2: the term ranks them against each other).
    threads : int, optional
        onnxruntime threads for the embedding.

    Examples
    --------
    The two boxes the base scorer likes best are rated and move around their
    mean; the third keeps its score:

    >>> from multicrop.embeddings import EMBEDDING
    >>> class Flat:
    ...     name, version = "flat", "1"
    ...     def score(self, context, boxes, *, ratio, region=None, subject=None):
    ...         return [ScoredCrop(b, s, {}, ratio) for b, s in zip(boxes, (1.0, 1.0, 0.0))]
    >>> img = np.zeros((60, 120, 3), np.uint8); img[:, 60:] = 255
    >>> head = LinearHead(coef=np.random.default_rng(0).normal(size=EMBEDDING.dim), scale=(-50.0, 50.0))
    >>> s = LearnedScorer(head, Flat(), weight=1.0, top=2, threads=1)
    >>> ctx = ScoringContext(img, np.zeros((60, 120), np.float32), ())
    >>> got = s.score(ctx, [Box(0, 0, 60, 60), Box(60, 0, 60, 60), Box(30, 0, 60, 60)], ratio=Ratio(1, 1))
    >>> round(got[0].score + got[1].score, 6), got[2].score, got[0].score != got[1].score
    (2.0, 0.0, True)
    >>> s.name, s.version.split("+")[1]
    ('learned', 'flat/1')
    """

    name = "learned"
    description = "the base scorer plus the embedding head's rating of its best framings"
    uses_subject = True

    def __init__(self, head, base: Scorer, *, weight: float = 0.5, top: int = 8, threads: int | None = None) -> None:
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not np.isfinite(weight) or weight < 0:
            raise InvalidParameterError(f"weight must be a finite number >= 0, got {weight!r}")
        if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 2:
            raise InvalidParameterError(f"top must be an integer >= 2 (one rated box has none to be ranked "
                                        f"against), got {top!r}")
        self.head = as_linear_head(head)
        self.base = base
        self.weight = float(weight)
        self.top = int(top)
        self.threads = threads
        digest = hashlib.sha256(self.head.coef.astype(np.float64).tobytes()
                                + np.array([self.head.intercept, *self.head.scale]).tobytes()).hexdigest()[:12]
        self.version = f"{LEARNED_VERSION}+{getattr(base, 'name', 'base')}/{getattr(base, 'version', '?')}" \
                       f"+head-{digest}+w{self.weight:g}+top{self.top}"
        self._image: np.ndarray | None = None
        self._seen: dict[tuple[int, int, int, int], float] = {}

    def ratings(self, image: np.ndarray, boxes: Sequence[Box]) -> np.ndarray:
        """The head's rating of each box (cached per image)."""
        if image is not self._image:
            self._image, self._seen = image, {}
        keys = list(zip(*(v.tolist() for v in int_corners(boxes, image.shape[1], image.shape[0]))))
        todo = sorted({k for k in keys if k not in self._seen})
        if todo:
            got = framing_scores(image, [Box(x1, y1, x2 - x1, y2 - y1) for x1, y1, x2, y2 in todo], self.head,
                                 threads=self.threads)
            self._seen.update(zip(todo, got.tolist()))
        return np.array([self._seen[k] for k in keys], np.float64)

    def score(self, context: ScoringContext, boxes: list[Box], *, ratio: Ratio, region: Box | None = None,
              subject: Box | None = None) -> list[ScoredCrop]:
        base = self.base.score(context, boxes, ratio=ratio, region=region, subject=subject)
        if not base or self.weight == 0:
            return base
        prior = np.array([c.score for c in base], np.float64)
        idx = np.sort(np.argsort(-prior, kind="stable")[:self.top])
        rated = self.ratings(context.image, [boxes[i] for i in idx])
        delta = self.weight * (rated - rated.mean())
        out = list(base)
        for i, r, d in zip(idx, rated, delta):
            c = base[i]
            out[i] = dataclasses.replace(c, score=float(c.score + d), parts={**c.parts, "learned": float(r)})
        return out

