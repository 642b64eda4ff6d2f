"""Rubric scores of each crop of a carousel, from the offline ``measured`` judge.

The page's "Judge scores" toggle shows, per crop card, the five rubric
dimensions (1-5) and the holistic score (1-10) that
:mod:`multicrop.judges.measures` gives the crop cut from the full-resolution
photo.  Distinctiveness and emotional impact are proxies there (no pixel
statistic measures them) and are marked as such.  With a panel, every family's
scores are returned, and with more than one family their plain mean as well.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..geometry import Box
from ..judges import measures
from ..judges.rubric import DIMENSION_IDS

__all__ = ["JUDGE", "crop_scores", "score_crops", "panel_scores", "panel_mean"]

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


def panel_scores(crops: list[np.ndarray], panel: Any) -> list[dict[str, Any]]:
    """Scores of each crop from every family of ``panel`` (a :class:`multicrop.judges.panel.Panel`).

    The crops are judged through :func:`multicrop.judges.runner.judge_images`
    with a temporary call store, and summarised with
    :func:`multicrop.judges.quick.score_summary`: per crop, a list of
    ``{"family", "dimensions", "holistic", "proxies"}``, one per family in the
    panel's order; a family that gave no score has ``None`` values.
    """
    import math
    import tempfile
    from pathlib import Path

    from ..judges.backends import JUDGE_BACKENDS
    from ..judges.quick import score_summary
    from ..judges.runner import judge_images, scores_table
    from ..judges.store.store import CallStore
    from ..judges.types import ImageRef

    refs = [ImageRef(np.ascontiguousarray(c), label=f"crop{i + 1}") for i, c in enumerate(crops)]
    with tempfile.TemporaryDirectory(prefix="multicrop-judge-") as tmp:
        store = CallStore(Path(tmp) / "calls.sqlite")
        try:
            _, plan = judge_images(refs, panel, store)
            summary = score_summary(scores_table(plan, store))
        finally:
            store.close()
    proxies = {f.name: list(getattr(JUDGE_BACKENDS.get(f.backend), "proxy_dimensions", ()) or ())
               for f in panel.families}
    got: dict[tuple[int, str], dict[str, Any]] = {}
    for row in summary.to_dict("records"):
        i = int(str(row.pop("image"))[4:]) - 1
        fam = row.pop("family")
        hol = row.pop("holistic", float("nan"))
        dims = {k: (None if v != v else float(v)) for k, v in row.items()}
        got[i, fam] = {"family": fam, "dimensions": dims,
                       "holistic": None if hol != hol or math.isnan(hol) else float(hol),
                       "proxies": proxies.get(fam, [])}
    # every family, in the panel's order; one whose calls all failed has no row: its values are None
    missing = {d: None for d in DIMENSION_IDS}
    return [{"families": [got.get((i, f.name)) or {"family": f.name, "dimensions": dict(missing), "holistic": None,
                                                   "proxies": proxies.get(f.name, [])} for f in panel.families]}
            for i in range(len(crops))]


def panel_mean(families: list[dict[str, Any]]) -> dict[str, Any]:
    """The plain mean over families of each dimension and of the holistic score.

    A family without a value (its calls failed) is left out of that mean; a
    value no family has is ``None``; ``families`` counts the families with any
    value.  This is the arithmetic mean of the raw scores, shown on the page;
    the ranking's panel objective (z-scored per family across alternatives)
    is a different number.

    Examples
    --------
    >>> fams = [{"dimensions": {"composition": 2.0}, "holistic": 5.0},
    ...         {"dimensions": {"composition": 4.0}, "holistic": None},
    ...         {"dimensions": {"composition": None}, "holistic": None}]
    >>> panel_mean(fams)
    {'dimensions': {'composition': 3.0}, 'holistic': 5.0, 'families': 2}
    """
    def mean(values: list[Any]) -> float | None:
        got = [float(v) for v in values if v is not None]
        return sum(got) / len(got) if got else None

    names = list(dict.fromkeys(d for f in families for d in f["dimensions"]))
    scored = [f for f in families if f["holistic"] is not None or any(v is not None for v in f["dimensions"].values())]
    return {"dimensions": {d: mean([f["dimensions"].get(d) for f in families]) for d in names},
            "holistic": mean([f["holistic"] for f in families]), "families": len(scored)}
