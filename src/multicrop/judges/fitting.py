"""Fit a head from a ratings file and its photos: what ``multicrop judge fit`` runs.

1. the rated images are found among the photo files (by file name, else by
   name without extension: EVA ids and PARA names both work);
2. each photo is embedded once (:mod:`multicrop.embeddings`); an optional
   cache file keeps the embeddings by the photos' SHA-256, so a refit with
   other ratings or another seed embeds nothing again;
3. :func:`~multicrop.judges.heads.fit_head` fits the holistic target on the
   mean overall score and one target per rubric dimension whose human
   attribute the ratings carry (quality -> technical quality, composition ->
   composition, colour -> colour and tone), each measured out of fold.

Examples
--------
>>> match_images(["a.jpg", "b", "c.png"], ["/x/a.jpg", "/x/b.jpeg", "/y/d.jpg"])
{'a.jpg': '/x/a.jpg', 'b': '/x/b.jpeg'}
"""

from __future__ import annotations

import io
import os
import zipfile
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

import numpy as np

from ..datasets.ratings_columns import DIMENSION_ATTRIBUTES, infer_scale
from ..errors import InvalidParameterError
from ..schema import OVERALL
from .heads import MIN_TARGET_ROWS, Head, HeadTarget, check_folds, fit_head
from .types import ImageRef

__all__ = ["match_images", "FeatureCache", "FitResult", "embed_images", "head_targets", "fit_head_from_ratings"]


def match_images(rated: Iterable[str], files: Sequence[str | Path]) -> dict[str, str]:
    """Rated image ids -> the file that holds each (by name, else by stem; first file wins).

    Parameters
    ----------
    rated : iterable of str
        The ratings' image ids (a file name, a path or an id without extension).
    files : sequence of path
        Candidate photo files.
    """
    by_name: dict[str, str] = {}
    by_stem: dict[str, str] = {}
    for f in files:
        p = PurePath(str(f))
        by_name.setdefault(p.name, str(f))
        by_stem.setdefault(p.stem, str(f))
    out = {}
    for r in rated:
        name = PurePath(str(r)).name
        hit = by_name.get(name) or by_stem.get(name) or by_stem.get(PurePath(name).stem)
        if hit is not None:
            out[str(r)] = hit
    return out


#: Largest embedding cache read (bytes): 5 KB a photo, so about 800,000 photos.
CACHE_LIMIT = 4 << 30


class FeatureCache:
    """Embeddings kept by image SHA-256 in one ``.npz`` file (model id checked on open).

    The file is read bounded (a regular file, at most :data:`CACHE_LIMIT`
    bytes, never a FIFO) and checked whole: a corrupt or foreign file, keys
    and rows that do not pair up, or rows that are not finite vectors of one
    length end in one line naming it, never a traceback.
    """

    def __init__(self, path: str | Path | None, *, model_id: str) -> None:
        self.path = Path(path) if path is not None else None
        self.model_id = model_id
        self.rows: dict[str, np.ndarray] = {}
        self.dirty = False
        if self.path is not None and os.path.lexists(self.path):
            self.rows = self._read(self.path, model_id)

    @staticmethod
    def _read(path: Path, model_id: str) -> dict[str, np.ndarray]:
        from ..io import read_bytes_bounded
        from ..io.names import shown

        data = read_bytes_bounded(path, limit=CACHE_LIMIT, what="--cache")
        where = f"--cache {shown(path)}"
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                model, keys, feats = z["model"], z["keys"], z["features"]
        except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise InvalidParameterError(f"{where}: not an embedding cache written by `judge fit --cache` "
                                        f"({type(exc).__name__}: {str(exc)[:120]})") from None
        if model.shape != () or model.dtype.kind != "U":
            raise InvalidParameterError(f"{where}: not an embedding cache (no model id)")
        if str(model) != model_id:
            raise InvalidParameterError(f"{where}: holds embeddings of {shown(str(model))!r}, not {model_id!r}; "
                                        "give another cache file")
        if keys.size == 0:
            return {}
        if keys.ndim != 1 or keys.dtype.kind != "U" or feats.ndim != 2 or len(feats) != len(keys) \
                or feats.dtype.kind != "f" or not np.isfinite(feats).all():
            raise InvalidParameterError(f"{where}: damaged ({keys.shape} keys for features of shape "
                                        f"{feats.shape} {feats.dtype}); delete it to embed again")
        return dict(zip((str(k) for k in keys), feats.astype(np.float32)))

    def get(self, sha: str) -> np.ndarray | None:
        return self.rows.get(sha)

    def put(self, sha: str, vec: np.ndarray) -> None:
        self.rows[sha] = np.asarray(vec, np.float32)
        self.dirty = True

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        from ..io import atomic_path

        keys = np.array(list(self.rows), dtype=str)
        feats = np.stack(list(self.rows.values())) if self.rows else np.zeros((0, 0), np.float32)
        with atomic_path(self.path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, model=np.array(self.model_id), keys=keys, features=feats)
        self.dirty = False


def embed_images(refs: Sequence[ImageRef], *, max_side: int = 448, threads: int | None = None,
                 cache: FeatureCache | None = None,
                 on_progress: Callable[[int], None] | None = None) -> np.ndarray:
    """Embeddings of ``refs`` (N, 1280), taken from ``cache`` where it has them.

    Raises
    ------
    ImageLoadError
        If a photo cannot be read.
    """
    from ..embeddings import EMBEDDING, embed_batch

    out = np.zeros((len(refs), EMBEDDING.dim), np.float32)
    todo = []
    for i, ref in enumerate(refs):
        hit = cache.get(ref.sha256) if cache is not None else None
        if hit is not None:
            out[i] = hit
        else:
            todo.append(i)
    if on_progress and len(refs) > len(todo):
        on_progress(len(refs) - len(todo))
    for start in range(0, len(todo), 16):
        chunk = todo[start:start + 16]
        arrays = [refs[i].array(max_side) for i in chunk]
        vecs = embed_batch(arrays, threads=threads)
        for i, v in zip(chunk, vecs):
            out[i] = v
            refs[i].release()
            if cache is not None:
                cache.put(refs[i].sha256, v)
        if on_progress:
            on_progress(len(chunk))
        if cache is not None and start % 2048 == 0:
            cache.save()
    if cache is not None:
        cache.save()
    return out


def head_targets(means, attributes: Sequence[str], *, overall_column: str = "score"
                 ) -> tuple[dict[str, np.ndarray], dict[str, str], dict[str, tuple[float, float]]]:
    """The targets a ratings table supports: overall, and each dimension whose attribute it has.

    Returns
    -------
    (targets, attribute_of, scales)
        Target name -> values (NaN where unrated), -> ratings column, -> scale.
    """
    cols = {OVERALL: overall_column}
    for dim, attr in DIMENSION_ATTRIBUTES.items():
        if attr in attributes and attr in means.columns and means[attr].notna().sum() > 0:
            cols[dim] = attr
    targets, scales = {}, {}
    for name, col in cols.items():
        values = means[col].to_numpy(np.float64)
        targets[name] = values
        finite = values[np.isfinite(values)]
        scale = infer_scale(finite) if len(finite) else None
        scales[name] = tuple(scale) if scale else (float(finite.min()), float(finite.max()))
    return targets, cols, scales


@dataclass(frozen=True)
class FitResult:
    """A fitted head and how its photos were found."""

    head: Head
    n_rated: int
    n_matched: int
    unmatched: tuple[str, ...]


def fit_head_from_ratings(ratings, files: Sequence[str | Path], *, n_folds: int = 5, seed: int = 0,
                          max_side: int = 448, threads: int | None = None, cache: FeatureCache | None = None,
                          on_embedding: Callable[[int], None] | None = None,
                          on_start: Callable[[int], None] | None = None,
                          on_target: Callable[[HeadTarget], None] | None = None) -> FitResult:
    """Fit a head on the photos of ``files`` that ``ratings`` rates.

    Parameters
    ----------
    ratings : Ratings
        As the ratings loaders return them (:func:`multicrop.datasets.ratings.load_ratings`).
    files : sequence of path
        Photo files (the rated ones among them are used).
    on_start : callable(n_photos), optional
        Called once the photos are matched, before embedding.

    Raises
    ------
    InvalidParameterError
        If fewer than :data:`~multicrop.judges.heads.MIN_TARGET_ROWS` rated
        photos are found, or ``n_folds`` is outside
        :func:`~multicrop.judges.heads.check_folds` for them (both said
        before any photo is embedded).
    """
    from ..embeddings import EMBEDDING

    means = ratings.means
    matched = match_images(means.index.astype(str), files)
    unmatched = tuple(r for r in means.index.astype(str) if r not in matched)
    need = f"a head needs at least {MIN_TARGET_ROWS} rated photos"
    if len(means) < MIN_TARGET_ROWS:
        raise InvalidParameterError(f"the ratings rate {len(means)} photos; {need}")
    if len(matched) < MIN_TARGET_ROWS:
        raise InvalidParameterError(
            f"only {len(matched)} of the {len(means)} rated images were found among {len(files)} photo files, and "
            f"{need} (matched by file name, then by name without extension); check --images (and -R for sub-folders)")
    ids = [r for r in means.index.astype(str) if r in matched]
    check_folds(n_folds, len(ids), what="--folds")
    if on_start:
        on_start(len(ids))
    refs = [ImageRef(matched[r], label=r) for r in ids]
    X = embed_images(refs, max_side=max_side, threads=threads, cache=cache, on_progress=on_embedding)
    sub = means.loc[means.index.astype(str).isin(set(ids))]
    sub = sub.set_axis(sub.index.astype(str)).loc[ids]
    targets, cols, scales = head_targets(sub, ratings.attributes)
    head = fit_head(X, targets, scales=scales, embedding=EMBEDDING.id, source=Path(str(ratings.source)).name,
                    attributes=cols, n_folds=n_folds, seed=seed, on_target=on_target)
    return FitResult(head, len(means), len(ids), unmatched)
