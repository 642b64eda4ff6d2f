"""The frozen aesthetic rubric: five dimensions, five observable tiers each.

The rubric is a data file shipped in the package (``data/rubric.toml``).  Its
SHA-256 is computed from the file's bytes when it is loaded, written into
every judge call record, and is part of every call key: editing the file
changes every key, so a changed rubric can never be mixed silently with
scores made under the old one.

References
----------
Rubric-decomposed fusion of VLM aesthetic judges (arXiv:2609.27110), §3.2 and
appendix L: five dimensions after Leder et al.'s model of aesthetic
appreciation, five tiers of observable criteria, frozen before use and
hashed into every checkpoint.

Examples
--------
>>> r = load_rubric()
>>> r.dimension_ids
('technical_quality', 'composition', 'colour_and_tone', 'distinctiveness', 'emotional_impact')
>>> r.sha256.startswith("sha256:") and len(r.sha256) == 71
True
>>> len(r.dimension("composition").tiers)
5
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ..errors import InvalidParameterError, UnknownNameError
from ..hashing import hash_bytes
from ..schema import DIMENSION_IDS, OVERALL
from ..serialize import Serializable

__all__ = ["DIMENSION_IDS", "OVERALL", "Dimension", "Rubric", "load_rubric", "parse_rubric"]

_N_TIERS = 5


@dataclass(frozen=True)
class Dimension(Serializable):
    """One rubric dimension.

    Attributes
    ----------
    id : str
        One of :data:`DIMENSION_IDS`.
    name : str
        Human name ("Colour and tone").
    question : str
        What the dimension asks about the picture.
    tiers : tuple of str
        Observable criteria for scores ``scale_min`` .. ``scale_max``, lowest first.
    """

    id: str
    name: str
    question: str
    tiers: tuple[str, ...]


@dataclass(frozen=True)
class Rubric(Serializable):
    """A loaded, hashed rubric.

    Attributes
    ----------
    id, version : str
        Identity of the rubric text.
    scale_min, scale_max : int
        Score range of a dimension prompt (one tier per integer).
    dimensions : tuple of Dimension
    sha256 : str
        ``"sha256:<hex>"`` of the file's bytes.
    """

    id: str
    version: str
    scale_min: int
    scale_max: int
    dimensions: tuple[Dimension, ...]
    sha256: str

    @property
    def dimension_ids(self) -> tuple[str, ...]:
        return tuple(d.id for d in self.dimensions)

    def dimension(self, dimension_id: str) -> Dimension:
        """The dimension called ``dimension_id``.

        Raises
        ------
        UnknownNameError
            If there is no such dimension.
        """
        for d in self.dimensions:
            if d.id == dimension_id:
                return d
        raise UnknownNameError(
            f"unknown rubric dimension {dimension_id!r}; available: {', '.join(self.dimension_ids)}"
        )


def parse_rubric(data: bytes, *, source: str = "<bytes>") -> Rubric:
    """Parse and validate rubric TOML ``data``; the hash is of these bytes.

    Raises
    ------
    InvalidParameterError
        If the TOML is malformed or the rubric does not have exactly the five
        dimensions of :data:`DIMENSION_IDS`, each with five non-empty tiers.
    """
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidParameterError(f"rubric {source}: not valid UTF-8 TOML ({exc})") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise InvalidParameterError(f"rubric {source}: not a rubric (arrays or tables nested too deep)") from None
    try:
        dims = tuple(
            Dimension(id=str(d["id"]), name=str(d["name"]), question=str(d["question"]),
                      tiers=tuple(str(t) for t in d["tiers"]))
            for d in doc["dimensions"]
        )
        rubric = Rubric(
            id=str(doc["id"]), version=str(doc["version"]), scale_min=int(doc["scale_min"]),
            scale_max=int(doc["scale_max"]), dimensions=dims,
            sha256=hash_bytes(data),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidParameterError(f"rubric {source}: missing or malformed field ({exc!r})") from None
    if rubric.dimension_ids != DIMENSION_IDS:
        raise InvalidParameterError(
            f"rubric {source}: dimensions must be {list(DIMENSION_IDS)} in this order, got {list(rubric.dimension_ids)}"
        )
    if rubric.scale_max - rubric.scale_min + 1 != _N_TIERS:
        raise InvalidParameterError(f"rubric {source}: scale must span {_N_TIERS} integers")
    for d in dims:
        if len(d.tiers) != _N_TIERS or not all(t.strip() for t in d.tiers):
            raise InvalidParameterError(f"rubric {source}: dimension {d.id!r} needs {_N_TIERS} non-empty tiers")
    return rubric


@lru_cache(maxsize=8)
def _load_cached(path: str | None) -> Rubric:
    if path is None:
        data = resources.files("multicrop").joinpath("data/rubric.toml").read_bytes()
        return parse_rubric(data, source="multicrop/data/rubric.toml")
    from ..io import CONFIG_LIMIT, read_bytes_bounded  # regular files only, size-bounded

    return parse_rubric(read_bytes_bounded(path, limit=CONFIG_LIMIT, what="rubric"), source=path)


def load_rubric(path: str | Path | None = None) -> Rubric:
    """Load the packaged rubric (or the rubric file at ``path``) and hash it.

    Parameters
    ----------
    path : str or Path, optional
        A rubric TOML file; the packaged frozen rubric when omitted.

    Returns
    -------
    Rubric
    """
    return _load_cached(None if path is None else str(path))
