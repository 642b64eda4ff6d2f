"""Per-photo counts of :mod:`multicrop.evaluation.subjects.metrics` added up into shares.

:func:`summarise` turns the :class:`~multicrop.evaluation.subjects.metrics.PhotoMeasures`
of one method over a set of photos into a :class:`SubjectsSummary` of
:class:`Tally` values (``n`` of ``of``).  Re-exported by ``metrics``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...serialize import Serializable, computed

if TYPE_CHECKING:
    from .metrics import PhotoMeasures

__all__ = ["Tally", "SubjectsSummary", "summarise"]


@dataclass(frozen=True)
class Tally(Serializable):
    """``n`` of ``of``, and the share (NaN when ``of`` is 0).

    Examples
    --------
    >>> str(Tally(3, 12))
    '25.0 % (3 / 12)'
    """

    n: int
    of: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", int(self.n))
        object.__setattr__(self, "of", int(self.of))

    @computed(round=4)
    def share(self) -> float:
        """``n / of`` (NaN, written as null, when ``of`` is 0)."""
        return self.n / self.of if self.of else float("nan")

    def __str__(self) -> str:
        return f"{100 * self.share:.1f} % ({self.n} / {self.of})" if self.of else "- (0 / 0)"


@dataclass(frozen=True)
class SubjectsSummary(Serializable):
    """The shares of one method over a set of photos.

    :meth:`to_dict` writes each tally as ``{"n", "of", "share"}`` and the
    shares rounded to 4 decimals.

    Attributes
    ----------
    photos : int
    crops : int
    person_cut, subject_cut, empty : Tally
        Of all crops.
    portrait : Tally
        Of all crops: those cutting a person at a portrait line, slicing nothing.
    covered, featured : Tally
        Of all prominent subjects of the cut classes.
    failed : int
        Photos the method could not crop (not in the counts).
    """

    photos: int
    crops: int
    person_cut: Tally
    subject_cut: Tally
    empty: Tally
    covered: Tally
    featured: Tally
    failed: int = 0
    portrait: Tally = Tally(0, 0)

    @computed(round=4)
    def crops_per_photo(self) -> float:
        """Crops over photos (NaN, written as null, for no photos)."""
        return self.crops / self.photos if self.photos else float("nan")


def summarise(measures: Iterable[PhotoMeasures], *, failed: int = 0) -> SubjectsSummary:
    """Add up per-photo counts into shares.

    Examples
    --------
    >>> import numpy as np
    >>> from multicrop.geometry import Box
    >>> from multicrop.evaluation.subjects.metrics import measure_photo
    >>> masks = np.zeros((1, 20, 20), bool); masks[0, 5:15, 5:15] = True
    >>> a = measure_photo(masks, (1,), [Box(0, 0, 10, 20)])
    >>> b = measure_photo(masks, (1,), [Box(0, 0, 20, 20), Box(16, 0, 4, 4)])
    >>> s = summarise([a, b])
    >>> str(s.person_cut), str(s.empty), str(s.covered), s.crops_per_photo
    ('33.3 % (1 / 3)', '33.3 % (1 / 3)', '50.0 % (1 / 2)', 1.5)
    """
    ms = list(measures)
    crops = sum(m.n_crops for m in ms)
    prominent = sum(m.n_prominent for m in ms)
    return SubjectsSummary(
        photos=len(ms), crops=crops,
        person_cut=Tally(sum(m.person_cut for m in ms), crops),
        subject_cut=Tally(sum(m.subject_cut for m in ms), crops),
        empty=Tally(sum(m.empty for m in ms), crops),
        covered=Tally(sum(m.covered for m in ms), prominent),
        featured=Tally(sum(m.featured for m in ms), prominent),
        failed=failed, portrait=Tally(sum(m.portrait for m in ms), crops),
    )
