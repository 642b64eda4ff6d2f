"""Canonical JSON and prefix-named content hashes (the call key).

Examples
--------
>>> canonical_json({"b": 1, "a": [1.0, "x"]})
'{"a":[1.0,"x"],"b":1}'
>>> content_hash({"a": 1}) == content_hash({"a": 1}) != content_hash({"a": 2})
True
>>> content_hash({"a": 1})[:7]
'sha256:'
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["HASH_PREFIX", "canonical_json", "content_hash", "hash_text"]

HASH_PREFIX = "sha256:"


def canonical_json(obj: Any) -> str:
    """Deterministic JSON: sorted keys, no spaces, UTF-8 kept, NaN refused."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def hash_text(text: str) -> str:
    """``"sha256:<hex>"`` of ``text`` encoded as UTF-8."""
    return HASH_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(obj: Any) -> str:
    """``"sha256:<hex>"`` of the canonical JSON of ``obj``."""
    return hash_text(canonical_json(obj))
