"""How a judge batch is cut into tasks: images hashed and packed into chunks by hash.

Identical images (same bytes, hence the same call keys) land in one chunk,
so no two tasks of one batch ever share a call key.  :class:`_chunk_error`
is the result of a chunk whose worker died: every image failed, no records.
:mod:`multicrop.batch.judge_job` re-exports these names.
"""

from __future__ import annotations

import collections

from ..hashing import hash_stream
from .sources import Photo

__all__ = ["chunk_by_hash"]


def _hash(photo: Photo) -> str:
    import fsspec

    with fsspec.open(photo.path, "rb") as fh:
        return hash_stream(fh)


def chunk_by_hash(hashes: dict[str, str], size: int) -> list[list[str]]:
    """Paths in chunks of about ``size``, every path of one hash in the same chunk.

    Examples
    --------
    >>> chunk_by_hash({"a": "h1", "b": "h2", "c": "h1", "d": "h3"}, 2)
    [['a', 'c'], ['b', 'd']]
    """
    groups: dict[str, list[str]] = collections.defaultdict(list)
    for path, h in hashes.items():
        groups[h].append(path)
    chunks: list[list[str]] = [[]]
    for paths in groups.values():
        if chunks[-1] and len(chunks[-1]) + len(paths) > size:
            chunks.append([])
        chunks[-1].extend(paths)
    return [c for c in chunks if c]


class _chunk_error:  # noqa: N801 - a callable used like a function
    """The result of a chunk whose worker died: every image failed, no records."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths

    def __call__(self, exc: BaseException) -> dict:
        why = f"the worker judging this chunk stopped ({type(exc).__name__}: {exc})"[:500]
        return {"summary": {"planned": 0, "already_done": 0, "performed": 0, "failed": 0, "cost_usd": 0.0},
                "records": [], "images": [{"path": p, "status": "failed", "error_kind": "WorkerDied", "error": why,
                                           "calls": 0, "completed": 0} for p in self.paths]}
