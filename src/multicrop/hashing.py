"""Canonical JSON and prefix-named content hashes: the one home of both.

Every hash multicrop writes (call keys, rubric and image hashes, row hashes,
config digests) is ``HASH_PREFIX + hexdigest`` made here, so the prefix that
names the hash algorithm is spelled once.

Examples
--------
>>> canonical_json({"b": 1, "a": [1.0, "x"]})
'{"a":[1.0,"x"],"b":1}'
>>> content_hash({"a": 1}) == content_hash({"a": 1}) != content_hash({"a": 2})
True
>>> content_hash({"a": 1})[:7]
'sha256:'
>>> hash_bytes(b"abc") == hash_text("abc")
True
>>> import io; hash_stream(io.BytesIO(b"abc")) == hash_bytes(b"abc")
True
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, BinaryIO

__all__ = ["HASH_PREFIX", "canonical_json", "content_hash", "hash_text", "hash_bytes", "hash_stream", "new_hasher",
           "prefixed"]

#: Names the algorithm of every hash multicrop writes.
HASH_PREFIX = "sha256:"

_CHUNK = 1 << 20


def canonical_json(obj: Any) -> str:
    """Deterministic JSON: sorted keys, no spaces, UTF-8 kept, NaN refused."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def new_hasher():
    """A fresh hashlib object of the algorithm :data:`HASH_PREFIX` names (for incremental hashing)."""
    return hashlib.sha256()


def prefixed(hasher) -> str:
    """``"sha256:<hex>"`` of a hasher from :func:`new_hasher`."""
    return HASH_PREFIX + hasher.hexdigest()


def hash_bytes(data: bytes) -> str:
    """``"sha256:<hex>"`` of ``data``."""
    return HASH_PREFIX + hashlib.sha256(data).hexdigest()


def hash_stream(stream: BinaryIO) -> str:
    """``"sha256:<hex>"`` of everything left in a binary stream, read in 1 MiB chunks."""
    h = new_hasher()
    for chunk in iter(lambda: stream.read(_CHUNK), b""):
        h.update(chunk)
    return prefixed(h)


def hash_text(text: str) -> str:
    """``"sha256:<hex>"`` of ``text`` encoded as UTF-8."""
    return hash_bytes(text.encode("utf-8"))


def content_hash(obj: Any) -> str:
    """``"sha256:<hex>"`` of the canonical JSON of ``obj``."""
    return hash_text(canonical_json(obj))
