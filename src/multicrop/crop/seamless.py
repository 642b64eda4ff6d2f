"""Seamless panorama carousels: n adjacent slides of one ratio that tile a band of the photo.

Swiped one after the other, the slides line up edge to edge and show one wide
picture.  :func:`seamless_layout` chooses

- **the number of slides** ``n`` from the photo's width: the ``n`` (between ``min_slides`` and
  ``max_slides``, the platform's maximum) whose band keeps the most of the photo, fewer on a tie;
- **the slide size**: the largest whole-pixel slide of the ratio for that ``n``, or up to
  ``max_shrink`` smaller when that lets the seams miss a subject;
- **the band's place**: where it holds the most saliency and its subjects whole, and where no
  seam (the line between two slides) runs through a subject.

Every slide is a whole-pixel box ``(x0 + i * w, y0, w, h)``: slide ``i + 1``
starts at the column after slide ``i`` ends, so the slides together are the
band ``(x0, y0, n * w, h)`` exactly, pixel for pixel.

It works on an analysis (saliency and subjects in analysis pixels), returns source pixels and opens no
file; :func:`seamless_carousel` keeps the best ratio of a setting (the web page's choice); the CLI's whole job
for one photo is :mod:`multicrop.crop.seamless_photo`'s, a band the person placed :mod:`multicrop.crop.seamless_band`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ImageTooSmallError, InvalidParameterError
from ..geometry import Box
from ..ratios import Ratio, parse_ratio
from ..serialize import Serializable, computed, serialized

__all__ = ["SeamlessLayout", "seamless_layout", "seamless_carousel", "MAX_SLIDES"]

#: Instagram's carousel limit when this was written was 20 slides; 10 keeps each slide a
#: useful width on the panoramas people post (the caller gives the platform's own maximum).
MAX_SLIDES = 10

#: A seam this close to a subject's edge (share of the subject's width) does not slice it.
_EDGE_SHARE = 0.03
_FULL_DEPTH = 0.1  # a seam this far into a subject costs its whole importance

_SLICE_COST = 1.0  # per subject of importance 1 that a seam runs through
_OUTSIDE_COST = 1.0  # per subject of importance 1 wholly outside the band (pro rata)
_KEPT_GAIN = 0.35  # share of the photo kept (more of the panorama is better)
_SHRINK_STEPS = 5
_PLACES = 41  # band positions tried along each free axis


@dataclass(frozen=True)
class SeamlessLayout(Serializable):
    """The slides of a seamless carousel.

    Attributes
    ----------
    boxes : tuple of Box
        The slides in swipe order (left to right), whole source pixels, all
        ``slide_size``; each starts where the one before ends.
    band : Box
        The part of the photo the slides tile (their union).
    ratio : Ratio
        The slides' ratio.
    kept : float
        The band's share of the photo's area.
    sliced : tuple of int
        Indices (into the ``subjects`` given) of the subjects a seam runs
        through (empty when every seam misses them).
    cut : tuple of int
        Indices of the subjects partly outside the band.
    notes : tuple of str
        Plain sentences on what could not be avoided.
    """

    boxes: tuple[Box, ...]
    band: Box
    ratio: Ratio
    kept: float = field(metadata=serialized(round=4))
    sliced: tuple[int, ...] = ()
    cut: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()

    @computed()
    def slides(self) -> int:
        return len(self.boxes)

    @computed()
    def slide_size(self) -> tuple[int, int]:
        return (int(self.boxes[0].w), int(self.boxes[0].h))


def _subject_parts(subjects: Sequence[Any]) -> tuple[list[Box], np.ndarray, list[str]]:
    """Boxes, importances and names of ``subjects`` (Boxes, or objects with ``box`` [``importance``])."""
    boxes, weights, names = [], [], []
    for s in subjects:
        box = s if isinstance(s, Box) else getattr(s, "box", None)
        if not isinstance(box, Box):
            raise InvalidParameterError(f"subjects: each must be a Box or have a .box Box, got {s!r}")
        boxes.append(box)
        weights.append(float(getattr(s, "importance", 1.0)))
        describe = getattr(s, "describe", None)
        names.append(describe() if callable(describe) else "subject")
    return boxes, np.asarray(weights, float), names


def _integral(s: np.ndarray) -> np.ndarray:
    out = np.zeros((s.shape[0] + 1, s.shape[1] + 1))
    out[1:, 1:] = s.cumsum(0).cumsum(1)
    return out


def _slide(n: int, ratio: float, W: int, H: int, shrink: float) -> tuple[int, int] | None:
    """The whole-pixel slide (w, h) of ``ratio`` for ``n`` slides across a ``W x H`` photo."""
    w = int(np.floor(min(W / n, H * ratio) * shrink))
    h = int(round(w / ratio))
    while h > H and w > 1:
        w -= 1
        h = int(round(w / ratio))
    if w < 1 or h < 1:
        return None
    return w, h


def _places(free: int) -> np.ndarray:
    """Integer offsets ``0 .. free`` tried for the band (both ends included)."""
    if free <= 0:
        return np.zeros(1, int)
    return np.unique(np.round(np.linspace(0, free, min(_PLACES, free + 1))).astype(int))


def _too_small(r: Ratio, size: tuple[int, int], least: float, slides: int) -> None:
    """Refuse ``slides`` slides whose short side would be under ``least`` px (the smallest crop side, as for k
    crops): the error says how many fit."""
    fit = [n for n in range(1, max(MAX_SLIDES, slides) + 1) if min(_slide(n, r.value, *size, 1.0) or (0,)) >= least]
    w, h = _slide(slides, r.value, *size, 1.0) or (0, 0)
    raise ImageTooSmallError(f"{slides} slides of {r} would be at most {w}x{h} px, under the smallest crop side of "
                             f"{least:.0f} px; " + (f"at most {max(fit)} fit" if fit else "not even one fits"))


def seamless_layout(
    saliency: np.ndarray,
    *,
    size: tuple[int, int],
    ratio: Ratio | str = "4:5",
    subjects: Sequence[Any] = (),
    slides: int | None = None,
    min_slides: int = 2,
    max_slides: int = MAX_SLIDES,
    max_shrink: float = 0.85,
    min_slide_width: int | None = None,
    min_side: float = 0.0,
) -> SeamlessLayout:
    """The seamless carousel of a photo: adjacent slides of ``ratio`` over one band.

    Parameters
    ----------
    saliency : ndarray of float, shape (h, w)
        The analysis' saliency map (any non-negative scale).
    size : (int, int)
        The source photo's width and height; boxes are returned in its pixels.
    ratio : Ratio or str
        The slides' ratio (``"4:5"``).
    subjects : sequence of Box, or of objects with ``box`` and ``importance``
        The subjects, boxes in analysis pixels (the saliency map's).  A seam
        through one costs its importance; so does leaving it out of the band.
    slides : int, optional
        Exactly this many slides (default: chosen from the photo's width).
    min_slides, max_slides : int
        The range ``n`` is chosen in; ``max_slides`` is the platform's limit.
    max_shrink : float
        Slides may be this much narrower than the largest that fits (``0.85``:
        down to 85 %) when that lets every seam miss the subjects.
    min_slide_width : int, optional
        Prefer no more slides than keep each at least this wide (the platform
        width, e.g. 1080); a note says when even the fewest slides are narrower.
    min_side : float
        No slide's short side under this (px): an error says how many slides fit.

    Returns
    -------
    SeamlessLayout

    Raises
    ------
    InvalidParameterError
        A bad size, ratio, slide count or shrink.

    Examples
    --------
    >>> sal = np.zeros((100, 300)); sal[30:70, 40:80] = 1; sal[30:70, 220:260] = 1
    >>> lay = seamless_layout(sal, size=(3000, 1000), ratio="1:1")
    >>> [(b.x, b.w) for b in lay.boxes], lay.band.h
    ([(0, 1000), (1000, 1000), (2000, 1000)], 1000)
    """
    W, H = (int(v) for v in size)
    if W < 2 or H < 1:
        raise InvalidParameterError(f"size must be a photo's (width, height), got {size!r}")
    r = parse_ratio(ratio) if not isinstance(ratio, Ratio) else ratio
    for name, v in (("min_slides", min_slides), ("max_slides", max_slides)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InvalidParameterError(f"{name} must be an integer >= 1, got {v!r}")
    if min_slides > max_slides:
        raise InvalidParameterError(f"min_slides ({min_slides}) must be <= max_slides ({max_slides})")
    if slides is not None and (isinstance(slides, bool) or not isinstance(slides, int) or slides < 1):
        raise InvalidParameterError(f"slides must be an integer >= 1, got {slides!r}")
    if not 0 < max_shrink <= 1:
        raise InvalidParameterError(f"max_shrink must be in (0, 1], got {max_shrink!r}")
    sal = np.asarray(saliency, float)
    if sal.ndim != 2 or min(sal.shape) < 1:
        raise InvalidParameterError(f"saliency must be a 2-D map, got shape {sal.shape}")
    sal = np.clip(np.nan_to_num(sal), 0, None)
    sh, sw = sal.shape
    sx, sy = W / sw, H / sh
    sat = _integral(sal)
    total = float(sat[-1, -1]) or 1.0
    boxes, importance, names = _subject_parts(subjects)
    src = [b.scale(sx, sy) for b in boxes]
    x1 = np.array([b.x for b in src]).reshape(-1, 1)
    x2 = np.array([b.x2 for b in src]).reshape(-1, 1)
    y1 = np.array([b.y for b in src]).reshape(-1, 1)
    y2 = np.array([b.y2 for b in src]).reshape(-1, 1)
    sub_area = np.maximum((x2 - x1) * (y2 - y1), 1e-9).ravel()
    width = np.maximum(x2 - x1, 1e-9)

    counts = [slides] if slides is not None else list(range(min_slides, max_slides + 1))
    if slides is None and min_slide_width:
        # as wide as asked, or (a photo too low for that) as wide as the photo allows
        reach = min(min_slide_width, W / counts[0], H * r.value)
        counts = [n for n in counts if min(W / n, H * r.value) >= reach - 1e-9]
    shrinks = np.linspace(1.0, max_shrink, _SHRINK_STEPS) if max_shrink < 1 else np.ones(1)
    best: tuple[float, Any] | None = None
    for n in counts:
        for shrink in shrinks:
            size_wh = _slide(n, r.value, W, H, float(shrink))
            if size_wh is None or min(size_wh) < min_side - 1e-9:
                continue
            w, h = size_wh
            xs, ys = _places(W - n * w), _places(H - h)
            # saliency inside the band for every (y0, x0): a summed-area lookup
            X0, Y0 = np.meshgrid(xs, ys)
            ax0 = np.clip(np.round(X0 / sx).astype(int), 0, sw)
            ax1 = np.clip(np.round((X0 + n * w) / sx).astype(int), 0, sw)
            ay0 = np.clip(np.round(Y0 / sy).astype(int), 0, sh)
            ay1 = np.clip(np.round((Y0 + h) / sy).astype(int), 0, sh)
            held = (sat[ay1, ax1] - sat[ay0, ax1] - sat[ay1, ax0] + sat[ay0, ax0]) / total
            kept = n * w * h / (W * H)
            # a hair of preference for the centre: equal layouts (even saliency) sit in the middle
            off = np.abs(X0 + n * w / 2 - W / 2) / W + np.abs(Y0 + h / 2 - H / 2) / H
            score = held + _KEPT_GAIN * kept - 1e-4 * off
            sliced_x = np.zeros((len(src), len(xs)), bool)
            outside = np.zeros((len(src), len(ys), len(xs)))
            if src:
                seams = xs[None, :, None] + w * np.arange(1, n)[None, None, :]  # (1, X, n-1)
                # how deep a seam runs into each subject (share of its width from the nearer edge):
                # a graze of a loose box costs a little, a seam 10 % in or more the full importance
                depth = np.minimum(seams - x1[:, :, None], x2[:, :, None] - seams) / width[:, :, None]
                depth = np.clip(depth, 0, None).max(axis=2) if n > 1 else np.zeros((len(src), len(xs)))
                sliced_x = depth > _EDGE_SHARE  # (S, X)
                slice_cost = np.minimum(depth / _FULL_DEPTH, 1.0)
                ix = np.clip(np.minimum(x2, xs[None, :] + n * w) - np.maximum(x1, xs[None, :]), 0, None)  # (S, X)
                iy = np.clip(np.minimum(y2, ys[None, :] + h) - np.maximum(y1, ys[None, :]), 0, None)  # (S, Y)
                inside = iy[:, :, None] * ix[:, None, :] / sub_area[:, None, None]
                outside = 1 - np.clip(inside, 0, 1)
                score = score - _SLICE_COST * (importance[:, None] * slice_cost).sum(0)[None, :]
                score = score - _OUTSIDE_COST * (importance[:, None, None] * outside).sum(0)
            j = np.unravel_index(int(np.argmax(score)), score.shape)
            value = float(score[j]) - 1e-6 * n  # fewer slides on a tie
            if best is None or value > best[0] + 1e-9:
                sl = tuple(int(i) for i in np.flatnonzero(sliced_x[:, j[1]])) if src else ()
                cut = tuple(int(i) for i in np.flatnonzero(outside[:, j[0], j[1]] > 0.02)) if src else ()
                best = (value, (n, w, h, int(xs[j[1]]), int(ys[j[0]]), kept, sl, cut))
    if best is None and min_side > 0:
        _too_small(r, (W, H), min_side, slides or min_slides)
    if best is None:
        raise InvalidParameterError(f"no slide of ratio {r} fits a {W}x{H} photo")
    n, w, h, x0, y0, kept, sl, cut = best[1]
    out = tuple(Box(x0 + i * w, y0, w, h) for i in range(n))
    return SeamlessLayout(out, Box(x0, y0, n * w, h), r, kept, sl, cut,
                          _notes(r, out, kept, sl, cut, names, min_slide_width, chosen=True))


def _notes(r: Ratio, boxes: Sequence[Box], kept: float, sliced: Sequence[int], cut: Sequence[int],
           names: Sequence[str], min_slide_width: int | None, *, chosen: bool) -> tuple[str, ...]:
    """Plain sentences on what a layout could not avoid (``chosen``: laid out here, not placed by a person)."""
    n, w = len(boxes), int(boxes[0].w)
    notes = []
    if sliced:
        what = ", ".join(dict.fromkeys(names[i] for i in sliced))
        notes.append(f"a slide edge runs through the {what}: no layout of {n} slides of {r} kept it "
                     "whole without losing more of the photo" if chosen
                     else f"a slide edge runs through the {what}")
    if cut:
        what = ", ".join(dict.fromkeys(names[i] for i in cut))
        notes.append(f"the {what} reaches past the band the slides cover and is partly left out")
    if min_slide_width and w < min_slide_width:
        notes.append(f"each slide is only {w} px wide, narrower than {min_slide_width} px: "
                     "the slides will look soft on the platform")
    if kept < 0.5 and chosen:
        notes.append(f"this photo is not wide enough for a panorama of {r} slides: "
                     f"they keep only {kept:.0%} of it")
    return tuple(notes)


def seamless_carousel(
    analysis: Any,
    *,
    size: tuple[int, int],
    ratios: Any,
    slides: int | None = None,
    max_slides: int = MAX_SLIDES,
    min_slide_width: int | None = None,
    min_side: float = 0.0,
) -> SeamlessLayout:
    """The seamless carousel of an analysed photo: each ratio of the setting laid out, the best kept.

    The best slices the fewest subjects, then leaves the fewest partly
    outside the band, then keeps the most of the photo.

    Parameters
    ----------
    analysis : Analysis
        :func:`multicrop.crop.analysis.analyse`'s result: its saliency map and
        subjects (its faces when it found no subject), in analysis pixels.
    size : (int, int)
        The source photo's width and height; boxes are returned in its pixels.
    ratios : ratio setting
        A preset name, ratios (``"4:5,1:1"``) or a sequence of Ratio: each is tried.
    slides, max_slides, min_slide_width, min_side
        As :func:`seamless_layout` takes them.

    Returns
    -------
    SeamlessLayout

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> sal = np.zeros((100, 300)); sal[30:70, 40:80] = 1; sal[30:70, 220:260] = 1
    >>> lay = seamless_carousel(SimpleNamespace(saliency=sal, subjects=(), faces=()), size=(3000, 1000),
    ...                         ratios="1:1,4:5")
    >>> str(lay.ratio), lay.slides
    ('1:1', 3)
    """
    from ..ratios import parse_ratio_spec

    sal = np.asarray(analysis.saliency, dtype=np.float64)
    subjects = list(analysis.subjects) or list(analysis.faces)
    lays, small = [], []
    for r in parse_ratio_spec(ratios).ratios:  # a ratio whose slides would be too small leaves it to the others
        try:
            lays.append(seamless_layout(sal, size=size, ratio=r, subjects=subjects, slides=slides,
                                        max_slides=max_slides, min_slide_width=min_slide_width, min_side=min_side))
        except ImageTooSmallError as exc:
            small.append(exc)
    if not lays:
        raise small[0]
    return min(lays, key=lambda lay: (len(lay.sliced), len(lay.cut), -lay.kept))


def __getattr__(name: str) -> Any:
    """``seamless_photo`` lives in :mod:`multicrop.crop.seamless_photo` (it imports this module); still found here."""
    if name == "seamless_photo":
        from .seamless_photo import seamless_photo

        return seamless_photo
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
