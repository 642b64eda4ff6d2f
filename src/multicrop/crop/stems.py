"""Output base names for a batch of photos, so that no two photos write the same files.

:func:`unique_stems` keeps the first photo's stem and renames later ones that
share it (case-insensitively) to ``<stem>-2``, ``<stem>-3``, ...; re-exported
by :mod:`multicrop.crop.outputs`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Stem", "unique_stems"]


@dataclass(frozen=True)
class Stem:
    """The base name of one photo's files in a batch.

    Attributes
    ----------
    name : str
        ``<name>_1.jpg``, ``<name>.json``, ...
    renamed_from : int or None
        When the photo's own stem was taken by an earlier photo of the batch,
        that photo's index; else None.
    """

    name: str
    renamed_from: int | None = None


def unique_stems(sources: list[str | os.PathLike]) -> list[Stem]:
    """Output base names for a batch, so that no two photos write the same files.

    The first photo with a given stem keeps it; later ones get ``<stem>-2``,
    ``<stem>-3``, ... (a name no photo of the batch has).  Stems are compared
    case-insensitively, as some file systems do.

    Returns
    -------
    list of Stem
        Per source, its stem and, when it was renamed, the index of the
        earlier source that kept the name.

    Examples
    --------
    >>> [(s.name, s.renamed_from) for s in unique_stems(["a/x.jpg", "b/x.png", "x-2.jpg", "y.jpg"])]
    [('x', None), ('x-3', 0), ('x-2', None), ('y', None)]
    """
    stems = [Path(s).stem for s in sources]
    taken = {s.casefold() for s in stems}
    first: dict[str, int] = {}
    out: list[Stem] = []
    for i, stem in enumerate(stems):
        key = stem.casefold()
        if key not in first:
            first[key] = i
            out.append(Stem(stem))
            continue
        n = 2
        while f"{stem}-{n}".casefold() in taken:
            n += 1
        new = f"{stem}-{n}"
        taken.add(new.casefold())
        first[new.casefold()] = i
        out.append(Stem(new, first[key]))
    return out
