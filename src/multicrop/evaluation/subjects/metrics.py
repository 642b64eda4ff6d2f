"""Do crops of a real photo slice its people, miss its subjects or hold nothing?

Measured against human instance outlines (:mod:`multicrop.datasets.outlines`),
all shares of pixels, so the same rules hold at any photo size:

* an object is *held* by a crop in the share of its pixels inside the crop;
* **subjects** are outlined objects of the subject classes (COCO ids 1-25:
  people, vehicles, street objects, animals) covering 1-40 % of the frame
  (smaller ones are background detail, larger ones are the whole scene);
  **prominent** subjects cover 3-40 %;
* a crop **slices** an object when it holds 15-85 % of it (a sliver under
  15 % at the edge is not counted here, nor a crop holding nearly all);
* a crop cuts a person **at a portrait line** when, of the person's pixels
  outside it, at most 3 % lie anywhere but below its bottom edge: the head
  and both sides are held and only the bottom edge crosses the body (a waist-
  or chest-up portrait; the crop-model issue's rule "never slice a person,
  but at a portrait line"). Such a cut is a **portrait**, not a slice;
* **person-cut**: a crop slicing at least one person subject other than at a
  portrait line;
  **subject-cut**: a crop slicing at least one subject of the *cut classes*,
  people, vehicles and animals (COCO 1-9 and 16-25).  Street objects
  (traffic light, fire hydrant, stop sign, parking meter, bench: 10-15) are
  subjects but not cut classes: a crop through a bench or the pole of a
  traffic light is how such things are framed, and nobody calls it a
  sliced subject;
* **portrait**: a crop cutting a person at a portrait line, and slicing no
  subject otherwise (counted beside person-cut, never in it);
* **empty**: a crop that holds at least half of no outlined object larger
  than 0.5 % of the frame, of any class (a range hood, a sliver of crowd),
  and no person at a portrait line;
* **covered**: a prominent subject of the cut classes that some crop holds
  whole, i.e. >= 90 % of its pixels (outlines are drawn generously and a
  crop may lose a fingertip);
* **featured**: a prominent subject of the cut classes that a crop covering
  at most 60 % of the frame holds >= 90 % of: a real zoom, not the whole
  photo again.

Every threshold is a field of :class:`SubjectRules`, whose canonical JSON
goes into every report.  Version 1 of these metrics (until 2026-12-05) had
no portrait lines: every person held 15-85 % was a cut.

Examples
--------
A 20x20 frame with a 10x10 person (25 % of the frame, prominent); a crop
holding its left half slices it, a crop holding it whole covers and
features it (the crop is 14x14, 49 % of the frame):

>>> masks = np.zeros((1, 20, 20), bool); masks[0, 5:15, 5:15] = True
>>> m = measure_photo(masks, (1,), [Box(0, 0, 10, 20), Box(3, 3, 14, 14)])
>>> m.person_cut, m.subject_cut, m.empty, m.covered, m.featured, m.n_prominent
(1, 1, 0, 1, 1, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...errors import InvalidParameterError
from ...geometry import Box
from .rules import SubjectRules
from .summary import SubjectsSummary, Tally, summarise

__all__ = [
    "SUBJECTS_METRIC_VERSION",
    "SubjectRules",
    "ObjectVerdict",
    "CropVerdict",
    "PhotoMeasures",
    "Tally",
    "SubjectsSummary",
    "held_shares",
    "measure_photo",
    "summarise",
]

#: Bump when a rule or its default changes what is counted (2: portrait lines).
SUBJECTS_METRIC_VERSION = "2"

@dataclass(frozen=True)
class ObjectVerdict:
    """What the crops did to one outlined object.

    Attributes
    ----------
    index : int
        Position in the photo's objects.
    category : int
    share : float
        Share of the frame it covers.
    subject, prominent : bool
        Its role (prominent implies subject).
    counted : bool
        A prominent subject of the cut classes: counted by covered and featured.
    held : tuple of float
        Share of its pixels each crop holds.
    covered, featured : bool
    """

    index: int
    category: int
    share: float
    subject: bool
    prominent: bool
    counted: bool
    held: tuple[float, ...]
    covered: bool
    featured: bool


@dataclass(frozen=True)
class CropVerdict:
    """What one crop did.

    Attributes
    ----------
    box : Box
        In the outlines' pixels.
    share : float
        Share of the frame it covers.
    sliced : tuple of int
        Indices of the subjects of the cut classes it slices (people cut at a
        portrait line not among them).
    portraits : tuple of int
        Indices of the people it cuts at a portrait line (any person over
        ``object_min`` of the frame, not only subjects).
    person_cut, subject_cut, empty : bool
    portrait : bool
        Cuts a person at a portrait line and slices no subject otherwise.
    """

    box: Box
    share: float
    sliced: tuple[int, ...]
    person_cut: bool
    subject_cut: bool
    empty: bool
    portraits: tuple[int, ...] = ()
    #: Holds 15-85 % of a person subject, at a portrait line or not (version 1's person-cut).
    person_cut_v1: bool = False

    @property
    def portrait(self) -> bool:
        return bool(self.portraits) and not (self.person_cut or self.subject_cut)

    @property
    def bad(self) -> bool:
        """Slices a subject or holds nothing."""
        return self.subject_cut or self.person_cut or self.empty


@dataclass(frozen=True)
class PhotoMeasures:
    """One photo's counts.

    Attributes
    ----------
    size : (int, int)
        ``(width, height)`` of the outlines' pixels.
    n_objects_large : int
        Objects of any class covering at least ``photo_object_min`` (the photo filter).
    qualifies : bool
        ``n_objects_large >= photo_min_objects``.
    crops : tuple of CropVerdict
    objects : tuple of ObjectVerdict
    """

    size: tuple[int, int]
    n_objects_large: int
    qualifies: bool
    crops: tuple[CropVerdict, ...]
    objects: tuple[ObjectVerdict, ...]

    @property
    def n_crops(self) -> int:
        return len(self.crops)

    @property
    def person_cut(self) -> int:
        return sum(c.person_cut for c in self.crops)

    @property
    def subject_cut(self) -> int:
        return sum(c.subject_cut for c in self.crops)

    @property
    def empty(self) -> int:
        return sum(c.empty for c in self.crops)

    @property
    def portrait(self) -> int:
        return sum(c.portrait for c in self.crops)

    @property
    def person_cut_v1(self) -> int:
        """Crops holding 15-85 % of a person subject, at a portrait line or not (version 1's person-cut)."""
        return sum(c.person_cut_v1 for c in self.crops)

    @property
    def n_prominent(self) -> int:
        """Prominent subjects of the cut classes (the denominator of covered and featured)."""
        return sum(o.counted for o in self.objects)

    @property
    def covered(self) -> int:
        return sum(o.covered for o in self.objects)

    @property
    def featured(self) -> int:
        return sum(o.featured for o in self.objects)

    @property
    def bad(self) -> int:
        """Crops that slice a subject or hold nothing (how worst photos are ranked)."""
        return sum(c.bad for c in self.crops)


def _pixel_span(box: Box, width: int, height: int) -> tuple[int, int, int, int]:
    x0 = min(max(int(round(box.x)), 0), width)
    y0 = min(max(int(round(box.y)), 0), height)
    x1 = min(max(int(round(box.x + box.w)), x0), width)
    y1 = min(max(int(round(box.y + box.h)), y0), height)
    return x0, y0, x1, y1


def held_shares(masks: np.ndarray, boxes: Sequence[Box]) -> np.ndarray:
    """Share of each object's pixels inside each box.

    Parameters
    ----------
    masks : ndarray of bool, shape (n_objects, H, W)
    boxes : sequence of Box
        In the masks' pixels; rounded to whole pixels and clipped to the frame.

    Returns
    -------
    ndarray of float, shape (n_objects, n_boxes)
        0 for an object with no pixels.

    Examples
    --------
    >>> m = np.zeros((1, 10, 10), bool); m[0, :, :4] = True
    >>> held_shares(m, [Box(0, 0, 2, 10), Box(0, 0, 10, 10)]).tolist()
    [[0.5, 1.0]]
    """
    masks = np.asarray(masks, dtype=bool)
    if masks.ndim != 3:
        raise InvalidParameterError(f"masks must have shape (n_objects, H, W), got {masks.shape}")
    n, H, W = masks.shape
    out = np.zeros((n, len(boxes)))
    if n == 0:
        return out
    totals = masks.reshape(n, -1).sum(axis=1)
    for j, b in enumerate(boxes):
        x0, y0, x1, y1 = _pixel_span(b, W, H)
        inside = masks[:, y0:y1, x0:x1].reshape(n, -1).sum(axis=1)
        out[:, j] = np.divide(inside, totals, out=np.zeros(n), where=totals > 0)
    return out


def measure_photo(
    masks: np.ndarray,
    categories: Sequence[int],
    boxes: Sequence[Box],
    *,
    rules: SubjectRules | None = None,
    crowd: Sequence[bool] | None = None,
) -> PhotoMeasures:
    """Count the cut, empty, covering and featuring crops of one photo.

    Parameters
    ----------
    masks : ndarray of bool, shape (n_objects, H, W)
        The outlined objects.
    categories : sequence of int
        Class id of each object.
    boxes : sequence of Box
        The crops, in the masks' pixels.
    rules : SubjectRules, optional
    crowd : sequence of bool, optional
        Objects that outline a crowd (COCO ``iscrowd``): never subjects, but
        they keep a crop from being empty.

    Returns
    -------
    PhotoMeasures

    Raises
    ------
    InvalidParameterError
        If ``categories`` (or ``crowd``) does not give one value per mask.
    """
    rules = rules or SubjectRules()
    masks = np.asarray(masks, dtype=bool)
    if masks.ndim != 3:
        raise InvalidParameterError(f"masks must have shape (n_objects, H, W), got {masks.shape}")
    n, H, W = masks.shape
    cats = tuple(int(c) for c in categories)
    if len(cats) != n:
        raise InvalidParameterError(f"categories must give one class per mask: {len(cats)} for {n} masks")
    crowd = tuple(bool(c) for c in crowd) if crowd is not None else (False,) * n
    if len(crowd) != n:
        raise InvalidParameterError(f"crowd must give one flag per mask: {len(crowd)} for {n} masks")
    frame = float(H * W)
    totals = masks.reshape(n, -1).sum(axis=1) if n else np.zeros(0)
    shares = totals / frame
    held = held_shares(masks, boxes)
    person, subject_ids, cut_ids = set(rules.person_ids), set(rules.subject_ids), set(rules.cut_ids)

    subject = [bool(not crowd[i] and cats[i] in subject_ids and rules.subject_min <= shares[i] <= rules.subject_max)
               for i in range(n)]
    prominent = [bool(subject[i] and shares[i] >= rules.prominent_min) for i in range(n)]
    counted = [prominent[i] and cats[i] in cut_ids for i in range(n)]
    crop_share = []
    crops = []
    for j, b in enumerate(boxes):
        x0, y0, x1, y1 = _pixel_span(b, W, H)
        share = (x1 - x0) * (y1 - y0) / frame
        crop_share.append(share)
        # a person cut only by the bottom edge (what is outside lies below it, but for portrait_side); a
        # person filling the frame, too large to be a subject, is held by a portrait all the same
        portraits = tuple(i for i in range(n) if cats[i] in person and not crowd[i] and shares[i] > rules.object_min
                          and rules.slice_min <= held[i, j] <= rules.slice_max
                          and masks[i, :y1].sum() - held[i, j] * totals[i] <= rules.portrait_side * totals[i])
        slices = [i for i in range(n) if subject[i] and rules.slice_min <= held[i, j] <= rules.slice_max
                  and i not in portraits]
        empty = not portraits and not any(bool(shares[i] > rules.object_min and held[i, j] >= rules.hold_min)
                                          for i in range(n))
        crops.append(CropVerdict(
            box=b, share=float(share),
            sliced=tuple(i for i in slices if cats[i] in cut_ids),
            person_cut=any(cats[i] in person for i in slices),
            subject_cut=any(cats[i] in cut_ids for i in slices),
            empty=empty, portraits=portraits,
            person_cut_v1=any(cats[i] in person and subject[i] and rules.slice_min <= held[i, j] <= rules.slice_max
                              for i in range(n)),
        ))
    objects = []
    for i in range(n):
        whole = [bool(held[i, j] >= rules.whole) for j in range(len(boxes))]
        objects.append(ObjectVerdict(
            index=i, category=cats[i], share=float(shares[i]), subject=subject[i], prominent=prominent[i],
            counted=counted[i], held=tuple(float(v) for v in held[i]),
            covered=counted[i] and any(whole),
            featured=counted[i] and any(w and crop_share[j] <= rules.zoom_max for j, w in enumerate(whole)),
        ))
    large = int(sum(bool(s >= rules.photo_object_min) for s in shares))
    return PhotoMeasures(size=(W, H), n_objects_large=large, qualifies=large >= rules.photo_min_objects,
                         crops=tuple(crops), objects=tuple(objects))
