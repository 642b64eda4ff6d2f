"""Fitted heads: ridge regressions from the shipped image embedding to human ratings.

A head turns the 1280-d EfficientNet-Lite0 embedding
(:mod:`multicrop.embeddings`) into a holistic score and, where the ratings
it was fitted on carry a matching attribute, a score for rubric dimensions
(technical quality <- quality, composition <- composition, colour and tone
<- colour; :data:`~multicrop.datasets.ratings_columns.DIMENSION_ATTRIBUTES`).
The ``embedding`` judge backend scores photos with one.

A head is a small JSON file (about 7 KB per target: the coefficients are
base64 float32), versioned by :data:`HEAD_FORMAT` / :data:`HEAD_VERSION`.
The SHA-256 of its bytes enters every call key of the backend, so refitting
re-scores and a renamed copy does not.  Each target records its penalty, its
training size and its out-of-fold Spearman rho (the number ``multicrop judge
fit`` prints): the fit is nested cross-validation, the penalty chosen on the
training folds only.

multicrop ships no head: the rated photo collections it was measured on
(PARA, AVA, EVA) are licensed for research only, so a head fitted on them is
not ours to redistribute.  ``docs/embedding-judge.md`` gives the recipe.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(120, 8)); y = 3 + X[:, 0] * 0.5
>>> head = fit_head(X, {"overall": y}, scales={"overall": (1.0, 5.0)}, embedding="toy@0", source="toy")
>>> [t.name for t in head.targets], head.targets[0].oof_spearman > 0.95
(['overall'], True)
>>> round(float(head.target("overall").predict(np.zeros(8))), 2)
3.0
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InvalidParameterError
from ..hashing import hash_bytes
from ..schema import DIMENSION_IDS, OVERALL

__all__ = ["HEAD_FORMAT", "HEAD_VERSION", "HeadTarget", "Head", "fit_head", "save_head", "load_head",
           "head_sha256", "rescale", "check_scale", "check_folds", "MIN_TARGET_ROWS", "MAX_FOLDS", "HEAD_LIMIT"]

HEAD_FORMAT = "multicrop-judge-head"
HEAD_VERSION = 1
#: Fewest rated photos a target is fitted on (below this its out-of-fold rho means little).
MIN_TARGET_ROWS = 20
#: Most cross-validation folds of a fit: the nested fit solves about ``folds**2`` ridge systems of the
#: embedding's size, so 1000 folds would run for hours; each fold also holds at least ``MIN_FOLD_ROWS`` photos.
MAX_FOLDS = 20
MIN_FOLD_ROWS = 2
#: Largest head file read (bytes): a head is about 7 KB per target.
HEAD_LIMIT = 1 << 20


def check_scale(scale, *, what: str = "scale") -> tuple[float, float]:
    """``scale`` as ``(low, high)``: two finite numbers with ``low < high``; else one clear error.

    A reversed scale is refused, never mirrored; a zero-width one would divide by zero.

    Examples
    --------
    >>> check_scale([1, 5])
    (1.0, 5.0)
    >>> check_scale([10, 1], what="targets[0].scale")
    Traceback (most recent call last):
    ...
    multicrop.errors.InvalidParameterError: targets[0].scale must be [low, high] with low < high, got [10.0, 1.0]
    """
    try:
        lo, hi = (float(v) for v in scale)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{what} must be two numbers [low, high], got {scale!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
        raise InvalidParameterError(f"{what} must be [low, high] with low < high, got [{lo!r}, {hi!r}]")
    return lo, hi


def most_folds(n_rows: int) -> int:
    """The most folds ``n_rows`` rated photos allow (:data:`MAX_FOLDS`, and :data:`MIN_FOLD_ROWS` photos a fold)."""
    return max(2, min(MAX_FOLDS, n_rows // MIN_FOLD_ROWS))


def check_folds(n_folds, n_rows: int, *, what: str = "n_folds") -> int:
    """``n_folds`` when it is an integer from 2 to :data:`MAX_FOLDS` and leaves ``MIN_FOLD_ROWS`` photos a fold.

    Examples
    --------
    >>> check_folds(5, 30)
    5
    >>> check_folds(1000, 30, what="--folds")
    Traceback (most recent call last):
    ...
    multicrop.errors.InvalidParameterError: --folds must be an integer from 2 to 15 for 30 rated photos (at most 20, and at least 2 photos a fold), got 1000
    """
    top = most_folds(n_rows)
    if isinstance(n_folds, bool) or not isinstance(n_folds, (int, np.integer)) or not 2 <= n_folds <= top:
        raise InvalidParameterError(f"{what} must be an integer from 2 to {top} for {n_rows} rated photos (at most "
                                    f"{MAX_FOLDS}, and at least {MIN_FOLD_ROWS} photos a fold), got {n_folds!r}")
    return int(n_folds)


def rescale(value: float, source: tuple[float, float], target: tuple[float, float]) -> float:
    """``value`` on the scale ``source`` mapped linearly onto ``target``, clipped to it.

    Examples
    --------
    >>> rescale(3.0, (1, 5), (1, 10)), rescale(9.0, (1, 5), (1, 10))
    (5.5, 10.0)
    """
    lo, hi = check_scale(source, what="the head's scale")
    a, b = check_scale(target, what="the prompt's scale")
    out = a + (float(value) - lo) / (hi - lo) * (b - a)
    return float(min(max(out, a), b))


@dataclass(frozen=True)
class HeadTarget:
    """One fitted score: ``predict(e) = e @ coef + intercept`` on the ratings' scale.

    Attributes
    ----------
    name : str
        ``"overall"`` or a rubric dimension id.
    attribute : str
        The ratings column it was fitted to (``"score"`` for overall).
    scale : (float, float)
        The ratings' scale (mapped onto a prompt's scale when scoring).
    coef : ndarray of float32, shape (d,)
    intercept : float
    alpha : float
        Ridge penalty (relative to the mean eigenvalue), chosen by inner CV.
    n : int
        Photos it was fitted on.
    oof_spearman : float
        Out-of-fold Spearman rho against the ratings (nested CV).
    """

    name: str
    attribute: str
    scale: tuple[float, float]
    coef: np.ndarray = field(repr=False)
    intercept: float
    alpha: float
    n: int
    oof_spearman: float

    def predict(self, embedding: np.ndarray) -> float | np.ndarray:
        """The score of one embedding (d,) or of a batch (n, d), on :attr:`scale`."""
        return np.asarray(embedding, np.float64) @ self.coef.astype(np.float64) + self.intercept


@dataclass(frozen=True)
class Head:
    """A set of fitted targets over one embedding.

    Attributes
    ----------
    embedding : str
        ``name@sha-prefix`` of the embedding it was fitted on (:attr:`EmbeddingModel.id`).
    targets : tuple of HeadTarget
    source : str
        The ratings it was fitted on (file name), as documentation.
    n_folds, seed : int
        The cross-validation of the fit.
    """

    embedding: str
    targets: tuple[HeadTarget, ...]
    source: str = ""
    n_folds: int = 5
    seed: int = 0

    def target(self, name: str) -> HeadTarget | None:
        """The target named ``name``, or None when the head has none."""
        return next((t for t in self.targets if t.name == name), None)

    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.targets)


def fit_head(features: np.ndarray, targets: Mapping[str, np.ndarray], *, scales: Mapping[str, tuple[float, float]],
             embedding: str, source: str = "", attributes: Mapping[str, str] | None = None, n_folds: int = 5,
             seed: int = 0, on_target: Callable[[HeadTarget], None] | None = None) -> Head:
    """Fit a ridge per target (penalty by inner CV) and measure it out of fold.

    Parameters
    ----------
    features : ndarray, shape (n, d)
        One embedding per rated photo.
    targets : mapping of str to ndarray of shape (n,)
        ``"overall"`` and/or rubric dimension ids -> human means; NaN where a
        photo has no rating of that target (those rows are left out of it).
    scales : mapping of str to (float, float)
        Each target's ratings scale.
    embedding : str
        The embedding's id, recorded in the head.
    attributes : mapping, optional
        Target name -> ratings column, recorded (default ``"score"`` for
        overall, the name otherwise).
    n_folds, seed : int
        Outer and inner folds of the nested cross-validation.
    on_target : callable(HeadTarget), optional
        Called as each target is done (the CLI prints its rho).

    Raises
    ------
    InvalidParameterError
        A target that is not ``"overall"`` or a rubric dimension, one with
        fewer than :data:`MIN_TARGET_ROWS` rated photos or with all ratings
        equal, a scale that is not ``low < high``, folds outside
        :func:`check_folds`, non-finite features, or no target at all.
    """
    from ..fusion.ridge import fold_ids, ridge_cv, ridge_out_of_fold
    from ..stats import spearman

    X = np.asarray(features, np.float64)
    if X.ndim != 2:
        raise InvalidParameterError(f"features must be (n, d), got shape {X.shape}")
    if not np.isfinite(X).all():
        raise InvalidParameterError("features hold NaN or infinite values")
    if not targets:
        raise InvalidParameterError("targets: nothing to fit (no overall score and no matching attribute)")
    attributes = dict(attributes or {})
    rows = max(int(np.isfinite(np.asarray(v, np.float64)).sum()) for v in targets.values())
    if rows >= MIN_TARGET_ROWS:  # fewer: the target itself is refused below, naming the 20-photo rule
        n_folds = check_folds(n_folds, rows)  # against the best-rated target; a sparser one uses what it allows
    out = []
    for name, values in targets.items():
        if name != OVERALL and name not in DIMENSION_IDS:
            raise InvalidParameterError(f"target must be {OVERALL!r} or a rubric dimension "
                                        f"({', '.join(DIMENSION_IDS)}), got {name!r}")
        y = np.asarray(values, np.float64)
        keep = np.isfinite(y)
        if keep.sum() < MIN_TARGET_ROWS:
            raise InvalidParameterError(f"target {name!r}: {int(keep.sum())} rated photos, need at least "
                                        f"{MIN_TARGET_ROWS}")
        Xk, yk = X[keep], y[keep]
        if np.ptp(yk) == 0:
            raise InvalidParameterError(f"target {name!r}: all {len(yk)} ratings are {yk[0]:g}; a head needs ratings "
                                        "that differ to learn from")
        scale = check_scale(scales[name], what=f"target {name!r}: scale")
        folds = fold_ids(len(yk), n_folds=min(n_folds, most_folds(len(yk))), seed=seed)
        oof = ridge_out_of_fold(Xk, yk, folds=folds)
        fit = ridge_cv(Xk, yk, folds=folds)
        t = HeadTarget(name=name, attribute=attributes.get(name, "score" if name == OVERALL else name),
                       scale=scale, coef=fit.coef.astype(np.float32),
                       intercept=float(fit.intercept), alpha=fit.alpha, n=int(len(yk)),
                       oof_spearman=float(spearman(oof, yk)))
        out.append(t)
        if on_target:
            on_target(t)
    return Head(embedding=embedding, targets=tuple(out), source=source, n_folds=n_folds, seed=seed)


def _encode(coef: np.ndarray) -> str:
    return base64.b64encode(np.asarray(coef, "<f4").tobytes()).decode("ascii")


def _decode(text: str, where: str) -> np.ndarray:
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise InvalidParameterError(f"{where}: coef is not base64") from None
    if len(raw) % 4:
        raise InvalidParameterError(f"{where}: coef has {len(raw)} bytes, not a whole number of float32")
    return np.frombuffer(raw, "<f4").copy()


def head_document(head: Head) -> dict:
    """The JSON document of ``head`` (what :func:`save_head` writes)."""
    return {
        "format": HEAD_FORMAT, "version": HEAD_VERSION, "embedding": head.embedding, "source": head.source,
        "n_folds": head.n_folds, "seed": head.seed,
        "targets": [{"name": t.name, "attribute": t.attribute, "scale": list(t.scale), "n": t.n,
                     "alpha": t.alpha, "oof_spearman": round(t.oof_spearman, 6), "intercept": t.intercept,
                     "dim": int(t.coef.shape[0]), "coef": _encode(t.coef)} for t in head.targets],
    }


def save_head(head: Head, path: str | Path) -> str:
    """Write ``head`` as JSON to ``path``; returns the file's SHA-256 (``sha256:...``)."""
    from ..io import atomic_write_bytes

    data = (json.dumps(head_document(head), indent=1, sort_keys=True) + "\n").encode("utf-8")
    atomic_write_bytes(Path(path), data)
    return hash_bytes(data)


def head_sha256(path: str | Path) -> str:
    """SHA-256 (``sha256:...``) of a head file's bytes: what enters the call keys (a bounded read)."""
    from ..io import read_bytes_bounded

    return hash_bytes(read_bytes_bounded(path, limit=HEAD_LIMIT, what="head file"))


def _number(value, what: str, *, finite: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidParameterError(f"{what} must be a number, got {value!r}")
    out = float(value)
    if finite and not math.isfinite(out):
        raise InvalidParameterError(f"{what} must be finite, got {out!r}")
    return out


def _integer(value, what: str, *, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InvalidParameterError(f"{what} must be an integer >= {low}, got {value!r}")
    return value


def _target(t, w: str, dim: int | None) -> HeadTarget:
    if not isinstance(t, dict):
        raise InvalidParameterError(f"{w}: must be an object, got {type(t).__name__}")
    try:
        coef = _decode(t["coef"], w) if isinstance(t["coef"], str) else None
        if coef is None:
            raise InvalidParameterError(f"{w}: coef is not base64")
        d = _integer(t["dim"], f"{w}: dim", low=1)
        if coef.shape != (d,):
            raise InvalidParameterError(f"{w}: coef has {coef.shape[0]} values, dim says {d}")
        if dim is not None and d != dim:
            raise InvalidParameterError(f"{w}: {d} weights, but the embedding has {dim} dimensions; "
                                        "refit it with `multicrop judge fit`")
        if not np.isfinite(coef).all():
            raise InvalidParameterError(f"{w}: coef holds {int((~np.isfinite(coef)).sum())} NaN or infinite weights")
        return HeadTarget(name=str(t["name"]), attribute=str(t["attribute"]),
                          scale=check_scale(t["scale"], what=f"{w}: scale"), coef=coef,
                          intercept=_number(t["intercept"], f"{w}: intercept"),
                          alpha=_number(t["alpha"], f"{w}: alpha"), n=_integer(t["n"], f"{w}: n", low=1),
                          oof_spearman=_number(t["oof_spearman"], f"{w}: oof_spearman", finite=False))
    except KeyError as exc:
        raise InvalidParameterError(f"{w}: malformed (no {exc.args[0]!r})") from None


def load_head(path: str | Path, *, embedding: str | None = None, dim: int | None = None) -> Head:
    """Read a head file, checking its format, version, values and (if given) its embedding and dimension.

    The file is read bounded (regular files only, at most :data:`HEAD_LIMIT`
    bytes) and parsed with a depth limit; every value is checked: scales
    ``low < high``, finite weights and intercepts, ``dim`` weights a target.

    Raises
    ------
    InputFileError
        Not a regular file, too large, not UTF-8 or not JSON (nested too deep).
    InvalidParameterError
        Not a head file, another format version, a malformed target, or a
        head fitted on another embedding than ``embedding`` or with another
        number of weights than ``dim``.
    """
    from ..io import read_json_bounded
    from ..io.names import shown

    where = f"head file {shown(path)}"
    doc = read_json_bounded(path, limit=HEAD_LIMIT, what="head file")
    if not isinstance(doc, dict) or doc.get("format") != HEAD_FORMAT:
        raise InvalidParameterError(f"{where}: not a multicrop judge head (format {HEAD_FORMAT!r}; a head is "
                                    "written by `multicrop judge fit`)")
    if doc.get("version") != HEAD_VERSION:
        raise InvalidParameterError(f"{where}: head format version {doc.get('version')!r}; this multicrop reads "
                                    f"version {HEAD_VERSION} (refit it with `multicrop judge fit`)")
    if embedding is not None and doc.get("embedding") != embedding:
        raise InvalidParameterError(f"{where}: fitted on embedding {doc.get('embedding')!r}, this multicrop "
                                    f"embeds with {embedding!r}; refit it with `multicrop judge fit`")
    raw = doc.get("targets") or []
    if not isinstance(raw, list):
        raise InvalidParameterError(f"{where}: targets must be a list")
    targets = tuple(_target(t, f"{where}: targets[{i}]", dim) for i, t in enumerate(raw))
    if not targets:
        raise InvalidParameterError(f"{where}: has no targets")
    return Head(embedding=str(doc.get("embedding")), targets=targets, source=str(doc.get("source", "")),
                n_folds=_integer(doc.get("n_folds", 5), f"{where}: n_folds", low=2),
                seed=_integer(doc.get("seed", 0), f"{where}: seed", low=0))
