"""Rubric scores of each crop of a carousel, from the offline ``measured`` judge.

The page's "Judge scores" toggle shows, per crop card, the five rubric
dimensions (1-5) and the holistic score (1-10) that
:mod:`multicrop.judges.measures` gives the crop cut from the full-resolution
photo.  Distinctiveness and emotional impact are proxies there (no pixel
statistic measures them) and are marked as such.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..geometry import Box
from ..judges import measures

__all__ = ["JUDGE", "crop_scores", "score_crops"]

#: The judge these scores come from (the measured backend's model name and the measures' version).
JUDGE = {"backend": "measured", "model": "measured-v1", "version": measures.VERSION}


def crop_scores(crop: np.ndarray) -> dict[str, Any]:
    """Rubric and holistic scores of one crop (an RGB array).

    Returns
    -------
    dict
        ``dimensions`` (name → 1-5), ``holistic`` (1-10) and ``proxies``
        (the dimensions that are proxies).
    """
    m = measures.measure(crop)
    return {"dimensions": measures.rubric_scores(m), "holistic": measures.holistic_score(m),
            "proxies": list(measures.PROXY_DIMENSIONS)}


def score_crops(full: Any, boxes: list[Box]) -> list[dict[str, Any]]:
    """Scores of each box cut from ``full`` (a PIL image in RGB), in order."""
    return [crop_scores(np.asarray(full.crop(b.corners()))) for b in boxes]
