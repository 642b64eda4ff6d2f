"""A photo in, a seamless carousel out: ``multicrop crop --layout seamless``'s whole job for one photo.

:func:`seamless_photo` opens and analyses the photo as :func:`~multicrop.crop.pipeline.crop_photo` does and lays
its ratios out with :func:`multicrop.crop.seamless.seamless_carousel`; slides under the smallest crop side are
refused, as k crops are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .seamless import seamless_carousel

__all__ = ["seamless_photo"]


def seamless_photo(source: Any, config: Any = None, *, slides: int | None = None,
                   min_slide_width: int | None = None, max_pixels: int | None = None) -> Any:
    """A seamless carousel of one photo as a CropResult: adjacent slides tiling one band.

    The photo is opened and analysed once (as :func:`~multicrop.crop.pipeline.crop_photo` does); the ratios
    of ``config`` (default: the defaults; its saliency and detectors too) are laid out by
    :func:`seamless_carousel`: ``slides`` exactly (default: from the photo's width), ``min_slide_width`` the
    narrowest slide preferred (px).  ``max_pixels`` refuses larger photos (default
    :data:`multicrop.io.DEFAULT_MAX_PIXELS`).  The slides carry no score (NaN); the layout's notes go into
    the record.

    Returns
    -------
    CropResult
        ``crops`` are the slides, left to right; ``image`` and ``saliency`` are kept for writing.

    Raises
    ------
    ImageTooSmallError
        Slides whose short side is under ``config.min_crop_side`` (source px, as for k crops).
    """
    import math

    from ..io import DEFAULT_MAX_PIXELS, LoadedImage, load_image
    from .analysis import analyse
    from .config import CropConfig
    from .pipeline import CropResult, pipeline_versions
    from .scoring import ScoredCrop
    from .subjects import SubjectRecord

    cfg = config if config is not None else CropConfig()
    loaded = source if isinstance(source, LoadedImage) else load_image(
        source, max_side=cfg.analysis_max_side, max_pixels=max_pixels or DEFAULT_MAX_PIXELS)
    analysis = analyse(loaded.analysis, cfg)
    h, w = loaded.analysis.shape[:2]
    sx, sy = loaded.size[0] / w, loaded.size[1] / h
    lay = seamless_carousel(analysis, size=loaded.size, ratios=cfg.ratios, slides=slides,
                            min_slide_width=min_slide_width, min_side=cfg.min_crop_side)
    band = lay.band
    notes = (f"seamless carousel: {len(lay.boxes)} slides of {lay.ratio} tiling the band x={band.x} y={band.y} "
             f"w={band.w} h={band.h} ({lay.kept:.0%} of the photo)", *lay.notes)
    return CropResult(
        crops=tuple(ScoredCrop(b, math.nan, {}, lay.ratio) for b in lay.boxes), partition=None, failure=None,
        size=loaded.size, analysis_size=(w, h), config=cfg, versions=pipeline_versions(cfg),
        faces=tuple(f.scale(sx, sy) for f in analysis.faces),
        subjects=tuple(SubjectRecord.of(s, sx, sy).to_dict() for s in analysis.subjects), analysis_key=analysis.key,
        source=str(loaded.path) if loaded.path is not None else None, k_requested=slides, notes=notes,
        image=loaded, saliency=np.asarray(analysis.saliency, dtype=np.float64))
