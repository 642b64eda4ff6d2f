"""Call keys: canonical JSON of a call's identity, written from fixed pieces.

A call key is ``content_hash`` of the canonical JSON of everything that
decides a reply (:func:`multicrop.hashing.canonical_json`: sorted keys, no
spaces).  Of those fields, only the image hash and the repetition index
change from call to call of one family and prompt.  Canonical JSON writes an
object as its members ``"name":value`` in sorted name order, so the text
between two such *open* members is the same for every call: a
:class:`KeyTemplate` writes those pieces once, and :meth:`KeyTemplate.render`
joins them with the open values.  The result is byte for byte
``canonical_json`` of the whole mapping, at a fraction of the cost (a resume
plans every call of a run before it looks at the store).

Examples
--------
>>> fields = {"model": "m", "temperature": 0.3, "backend": "measured"}
>>> t = KeyTemplate.build(fields, open_fields=("image_sha256", "repetition"))
>>> t.open_fields
('image_sha256', 'repetition')
>>> text = t.render('"sha256:ab"', "2")
>>> text
'{"backend":"measured","image_sha256":"sha256:ab","model":"m","repetition":2,"temperature":0.3}'
>>> text == canonical_json({**fields, "image_sha256": "sha256:ab", "repetition": 2})
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParameterError
from ..hashing import canonical_json

__all__ = ["KeyTemplate", "CALL_KEY_OPEN_FIELDS"]

#: The fields of a call key that vary within one family and prompt, in sorted order.
CALL_KEY_OPEN_FIELDS = ("image_sha256", "repetition")


@dataclass(frozen=True)
class KeyTemplate:
    """Canonical JSON of a mapping, with the values of some fields left open.

    Attributes
    ----------
    open_fields : tuple of str
        Names of the open fields, in sorted order.
    pieces : tuple of str
        ``len(open_fields) + 1`` fixed texts: ``pieces[i]`` comes right before
        the value of ``open_fields[i]``, and ``pieces[-1]`` ends the object.
    """

    open_fields: tuple[str, ...]
    pieces: tuple[str, ...]

    @classmethod
    def build(cls, fields: Mapping[str, Any], *, open_fields: Sequence[str]) -> KeyTemplate:
        """The template of ``fields`` plus the ``open_fields`` (values given later).

        Parameters
        ----------
        fields : mapping of str to JSON-ready values
            The fixed fields.
        open_fields : sequence of str
            Names of the open fields, in sorted order, none of them in ``fields``.

        Raises
        ------
        InvalidParameterError
            If ``open_fields`` is not sorted, repeats a name or names a fixed field.
        """
        names = tuple(open_fields)
        if list(names) != sorted(set(names)):
            raise InvalidParameterError(f"open_fields must be distinct and sorted, got {names!r}")
        shared = sorted(set(names) & set(fields))
        if shared:
            raise InvalidParameterError(f"open fields {shared!r} also have fixed values")
        pieces, current = [], "{"
        for i, name in enumerate(sorted([*fields, *names])):
            current += ("," if i else "") + canonical_json(name) + ":"
            if name in names:
                pieces.append(current)
                current = ""
            else:
                current += canonical_json(fields[name])
        pieces.append(current + "}")
        return cls(names, tuple(pieces))

    def render(self, *values: str) -> str:
        """The canonical JSON with the open fields set to ``values``.

        Parameters
        ----------
        *values : str
            The canonical JSON of each open field's value, in :attr:`open_fields`
            order (e.g. ``canonical_json(image_sha256)``, ``str(repetition)``).
        """
        if len(values) != len(self.open_fields):
            raise InvalidParameterError(f"expected {len(self.open_fields)} values for {self.open_fields}, got {len(values)}")
        text = self.pieces[0]
        for value, piece in zip(values, self.pieces[1:]):
            text += value + piece
        return text
