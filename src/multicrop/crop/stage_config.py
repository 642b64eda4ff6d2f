"""The settings of the ``partition`` and ``topk`` stages and of the composition scorer.

:class:`PartitionConfig` (Carousel §IV-A's multi-region partitioning),
:class:`CandidateConfig` (GAIC grid anchors, sliding windows, subject
framings) and :class:`CompositionWeights` (the embedded scorer) are nested in
:class:`multicrop.crop.config.CropConfig`, which re-exports them; their
fields enter every record's ``config``.

Examples
--------
>>> PartitionConfig().work_side, CandidateConfig().bins
(256, 12)
>>> CandidateConfig(bins=1)
Traceback (most recent call last):
...
multicrop.errors.InvalidParameterError: bins must be an integer >= 2, got 1
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..errors import InvalidParameterError
from ..measures import BORDER_BAND
from ..serialize import Serializable
from .checks import check_bool as _check_bool
from .checks import check_range as _check_range

__all__ = ["PartitionConfig", "CandidateConfig", "CompositionWeights"]


@dataclass(frozen=True)
class PartitionConfig(Serializable):
    """Multi-region saliency partitioning (Carousel §IV-A).

    A valid salient box covers at most the image's area divided by ``k``
    (the paper's rule).  Three of our adaptations have a value that turns
    them off, for ablations against the paper: ``absorb_share=1``,
    ``claim_margin=0``, ``orientation_fallback=False``.

    Attributes
    ----------
    threshold : float
        First saliency share a box must reach, as a fraction of the remaining
        saliency divided among the boxes still to find.
    threshold_step : float
        Amount the share is lowered each time no valid box reaches it.
    min_threshold : float
        Lowest share tried before the search gives up on that box.
    work_side : int
        Long side, in pixels, of the copy of the saliency map the search runs on.
    min_region_aspect : float
        A region whose short side over long side is below this is a failure
        (1/3: narrower than 1:3).
    bisect_tolerance : float
        A cut that leaves more than this fraction of a salient box on its far
        side "bisects" the box, which is a failure.
    blob_level : float
        Salient blobs are the connected components of the remaining saliency
        at or above this fraction of its maximum.
    absorb_share : float
        A found box also claims (and zeroes) every blob of which it holds at
        least this share of saliency, so one large subject is not split over
        two boxes (1 turns this off: only the box is zeroed, as in the paper).
    claim_margin : float
        The pixels a box claims are grown by this fraction of the long side
        before they are zeroed, so the soft edge of a subject does not draw a
        later box (0: no growth).
    subject_trim : float
        Each salient box is shrunk to its subject: along each axis, the
        smallest span holding all but this share of the box's saliency on
        either side.  Cuts are placed and checked against the subjects.
    cut_centre_weight : float
        A cut goes on the least salient line between two subjects; this
        weight (relative to the most salient line of that span) prefers the
        middle of the span, so that ties and near-ties fall midway.
    orientation_fallback : bool
        When the cuts of the paper's orientation bisect a subject or leave a
        too narrow region, try the other orientation (recorded in
        ``Partition.fallback``); a failure is reported only if both fail.
    """

    threshold: float = 0.9
    threshold_step: float = 0.1
    min_threshold: float = 0.1
    work_side: int = 256
    min_region_aspect: float = 1 / 3
    bisect_tolerance: float = 0.15
    blob_level: float = 0.3
    absorb_share: float = 0.25
    claim_margin: float = 0.015
    subject_trim: float = 0.02
    cut_centre_weight: float = 0.25
    orientation_fallback: bool = True

    def __post_init__(self) -> None:
        _check_range(self, "threshold", 0, 1, lo_open=True)
        _check_range(self, "threshold_step", 0, 1, lo_open=True)
        _check_range(self, "min_threshold", 0, 1, lo_open=True)
        _check_range(self, "min_region_aspect", 0, 1)
        _check_range(self, "bisect_tolerance", 0, 0.5)
        _check_range(self, "subject_trim", 0, 0.25)
        _check_range(self, "blob_level", 0, 1, lo_open=True)
        _check_range(self, "claim_margin", 0, 0.25)
        _check_range(self, "absorb_share", 0, 1, lo_open=True)
        _check_range(self, "cut_centre_weight", 0, 100)
        _check_bool(self, "orientation_fallback")
        if not isinstance(self.work_side, int) or self.work_side < 16:
            raise InvalidParameterError(f"work_side must be an integer >= 16, got {self.work_side!r}")


@dataclass(frozen=True)
class CandidateConfig(Serializable):
    """Candidate crops: GAIC grid anchors, fixed-ratio sliding windows, subject framings.

    Attributes
    ----------
    bins : int
        Grid bins per axis (GAIC: 12).
    corner_bins : int
        Top-left corners lie in the first, bottom-right corners in the last
        ``corner_bins`` bins of each axis (GAIC: 4).
    min_area : float
        Smallest anchor area as a fraction of the largest box of the target
        ratio that fits the region (GAIC: 0.5, of the region).
    ratio_tolerance : float
        An anchor is kept when its aspect is within this factor of the target
        (then shrunk to the exact target ratio).
    window_scales : tuple of float
        Sizes of sliding windows relative to the largest box of the ratio that
        fits the region (used when the grid yields no anchor, and for ``topk``).
    window_stride : float
        Stride of sliding windows as a fraction of the window size.
    subject_fills : tuple of float
        ``partition``: besides the region's anchors, crops framing the
        region's subject, centred on it, are offered, sized so the subject
        spans each of these fractions of the crop along its limiting side.
    """

    bins: int = 12
    corner_bins: int = 4
    min_area: float = 0.5
    ratio_tolerance: float = 1.25
    window_scales: tuple[float, ...] = (1.0, 0.85, 0.7, 0.55)
    window_stride: float = 0.125
    subject_fills: tuple[float, ...] = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)

    def __post_init__(self) -> None:
        if not isinstance(self.bins, int) or self.bins < 2:
            raise InvalidParameterError(f"bins must be an integer >= 2, got {self.bins!r}")
        if not isinstance(self.corner_bins, int) or not 1 <= self.corner_bins <= self.bins // 2:
            raise InvalidParameterError(
                f"corner_bins must be an integer in [1, bins/2], got {self.corner_bins!r}"
            )
        _check_range(self, "min_area", 0, 1)
        _check_range(self, "ratio_tolerance", 1, 100)
        _check_range(self, "window_stride", 0, 1, lo_open=True)
        scales = tuple(float(s) for s in self.window_scales)
        if not scales or any(not 0 < s <= 1 for s in scales):
            raise InvalidParameterError(f"window_scales must be numbers in (0, 1], got {self.window_scales!r}")
        object.__setattr__(self, "window_scales", scales)
        fills = tuple(float(s) for s in self.subject_fills)
        if any(not 0 < s <= 1 for s in fills):
            raise InvalidParameterError(f"subject_fills must be numbers in (0, 1], got {self.subject_fills!r}")
        object.__setattr__(self, "subject_fills", fills)


@dataclass(frozen=True)
class CompositionWeights(Serializable):
    """Weights and thresholds of the embedded composition scorer.

    The score is a weighted sum of parts, each in ``[0, 1]``; penalties carry
    negative sign.  When the crop frames a region's subject, ``density`` and
    ``thirds`` are reported but not weighted: ``framing`` sets the tightness,
    and a subject filling most of the frame is centred (the thirds rule is
    for small subjects in a scene).  See
    :mod:`multicrop.crop.scoring.composition`.
    """

    saliency_kept: float = 1.0       # share of the region's saliency inside the crop
    density: float = 0.35            # saliency per pixel relative to the region (tight framing)
    border_cut: float = 1.0          # penalty: saliency on the crop's border band
    border_band: float = BORDER_BAND  # border band width, fraction of the crop's short side
    thirds: float = 0.25             # saliency centroid near a rule-of-thirds point
    thirds_sigma: float = 0.17       # tolerance of the thirds term, fraction of the crop
    face_cut: float = 2.0            # penalty: share of faces the crop border cuts
    face_headroom: float = 0.3       # faces neither touching the top nor sunk low
    min_headroom: float = 0.05       # headroom below this fraction of the height is cramped
    sharpness: float = 0.1           # mean gradient in the crop relative to the image
    exposure: float = 0.1            # mean luminance near mid-grey
    framing: float = 0.5             # partition: subject spans about fill_target of the crop
    fill_target: float = 0.65        # subject extent / crop side (limiting side) a photographer aims at
    fill_sigma: float = 0.25         # tolerance of the framing term (composition-3; docs/cropping.md)
    foreign: float = 0.3             # partition: penalty for the share of saliency outside the subject

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            _check_range(self, f.name, 0, 1e6)
        _check_range(self, "border_band", 0, 0.5, lo_open=True)
        _check_range(self, "thirds_sigma", 0, 10, lo_open=True)
        _check_range(self, "fill_target", 0, 1, lo_open=True)
        _check_range(self, "fill_sigma", 0, 10, lo_open=True)
