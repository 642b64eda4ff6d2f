"""How a call is laid out in the compact store (schema version 4 on).

A call key is ``"sha256:" + hex``; the store keeps its 32 raw bytes.  A key's
canonical JSON is rebuilt from three fixed pieces of its question and the two
values that vary from call to call (``image_sha256``, ``repetition``)::

    pieces[0] + canonical_json(image_sha256) + pieces[1] + str(repetition) + pieces[2]

Examples
--------
>>> key = '{"backend":"m","image_sha256":"sha256:ab","repetition":2,"temperature":0.3}'
>>> pieces = split_key_json(key, "sha256:ab", 2)
>>> pieces
('{"backend":"m","image_sha256":', ',"repetition":', ',"temperature":0.3}')
>>> render_key_json(pieces, "sha256:ab", 2) == key
True
>>> digest_text(digest_bytes("sha256:" + "0f" * 32)) == "sha256:" + "0f" * 32
True
"""

from __future__ import annotations

from ...errors import StoreError
from ...hashing import HASH_PREFIX, canonical_json

__all__ = ["split_key_json", "render_key_json", "digest_bytes", "digest_text", "pack_pieces", "unpack_pieces"]

_IMAGE = '"image_sha256":'
_REPETITION = '"repetition":'


def split_key_json(key_json: str, image_sha256: str, repetition: int) -> tuple[str, str, str] | None:
    """The three fixed pieces of ``key_json``, or None when it does not have the usual shape."""
    image, rep = canonical_json(image_sha256), canonical_json(repetition)
    i = key_json.find(_IMAGE + image)
    if i < 0:
        return None
    head = key_json[:i + len(_IMAGE)]
    rest = key_json[i + len(_IMAGE) + len(image):]
    j = rest.find(_REPETITION + rep)
    if j < 0:
        return None
    pieces = (head, rest[:j + len(_REPETITION)], rest[j + len(_REPETITION) + len(rep):])
    return pieces if render_key_json(pieces, image_sha256, repetition) == key_json else None


def render_key_json(pieces: tuple[str, str, str], image_sha256: str, repetition: int) -> str:
    """The key's canonical JSON from its question's pieces and the two open values."""
    return pieces[0] + canonical_json(image_sha256) + pieces[1] + canonical_json(repetition) + pieces[2]


def pack_pieces(pieces: tuple[str, str, str]) -> str:
    """The pieces as one column value (NUL never occurs in canonical JSON)."""
    return "\x00".join(pieces)


def unpack_pieces(text: str | None) -> tuple[str, str, str] | None:
    if text is None:
        return None
    a, b, c = text.split("\x00")
    return a, b, c


def digest_bytes(prefixed: str) -> bytes:
    """The 32 raw bytes of a ``sha256:<hex>`` hash.

    Raises
    ------
    StoreError
        For a value that is not such a hash.
    """
    if not (isinstance(prefixed, str) and prefixed.startswith(HASH_PREFIX) and len(prefixed) == len(HASH_PREFIX) + 64):
        raise StoreError(f"not a {HASH_PREFIX}<64 hex digits> hash: {prefixed!r:.80}")
    try:
        return bytes.fromhex(prefixed[len(HASH_PREFIX):])
    except ValueError:
        raise StoreError(f"not a {HASH_PREFIX}<64 hex digits> hash: {prefixed!r:.80}") from None


def digest_text(raw: bytes) -> str:
    """``sha256:<hex>`` of 32 raw bytes."""
    return HASH_PREFIX + bytes(raw).hex()
