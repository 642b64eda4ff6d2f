"""``rank_crops``: a judge panel chooses each crop among its shortlist.

The steps:

1. the composition scorer's shortlist of each crop
   (``crop_photo(..., shortlist=n)``; the ``direct`` strategy finds
   alternatives, the others list each crop alone), at most ``top`` per crop;
2. every alternative rendered from the full-resolution photo, long side at
   most 1024 px (:mod:`multicrop.ranking.render`);
3. the panel judges the renders (:func:`multicrop.judges.runner.judge_images`);
   every call goes through a checkpoint store, so a rerun over the same store
   makes no new call;
4. one panel score per alternative (:mod:`multicrop.ranking.combine`): a
   fitted combiner when one is given, else the z-scored panel mean over all
   alternatives of the photo;
5. per crop, the alternative with the highest panel score is kept (ties, and
   alternatives no judge scored, leave the composition scorer's choice);
   crops are chosen in order, and an alternative whose IoU with a crop
   already kept is above the crop config's ``nms_iou`` is passed over (if
   every scored one is, the crop keeps its own first alternative), so two
   crops never come out the same.

Examples
--------
>>> import numpy as np
>>> from multicrop.crop.config import CropConfig
>>> from multicrop.crop.pipeline import crop_photo
>>> from multicrop.judges.panel import parse_panel
>>> img = np.full((300, 900, 3), 40, np.uint8); img[100:200, 100:200] = 230; img[100:200, 700:800] = 230
>>> res = crop_photo(img, CropConfig(k=2, ratios="1:1", strategy="direct", saliency="spectral", faces=False),
...                  shortlist=3)
>>> panel = parse_panel({"holistic_repetitions": 1, "dimension_repetitions": 0,
...                      "families": [{"name": "measured", "backend": "measured", "model": "measured-v1"}]})
>>> ranked = rank_crops(res, panel)
>>> r = ranked.ranking
>>> r["calls_made"] == sum(len(c["alternatives"]) for c in r["crops"]), r["calls_reused"], r["spend_usd"]
(True, 0, 0.0)
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..crop.pipeline import CropResult
from ..errors import InvalidParameterError
from ..geometry import iou
from ..hashing import content_hash
from ..judges.panel import Panel, load_panel
from ..judges.store.store import CallStore
from .combine import PANEL_MEAN, combiner_info, combiner_scores, z_panel_mean
from .render import RENDER_MAX_SIDE, render_boxes

__all__ = ["RANKING_VERSION", "DEFAULT_SHORTLIST", "rank_crops", "summary_line", "load_ranking_panel"]

#: Part of every ranked record's ``versions`` (bump when a choice would change).
RANKING_VERSION = "1"
#: Alternatives per crop the command line asks for (``--shortlist``).
DEFAULT_SHORTLIST = 4


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidParameterError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def load_ranking_panel(panel: Panel | str | os.PathLike, *, combiner: Any = None) -> Panel:
    """``panel`` (a Panel or a TOML file) checked for ranking.

    Raises
    ------
    InvalidParameterError
        A missing or malformed panel file, or a panel without holistic
        prompts and no combiner (the panel mean is of holistic scores).
    """
    p = panel if isinstance(panel, Panel) else load_panel(panel)
    if combiner is None and p.holistic_repetitions < 1:
        where = "panel" if isinstance(panel, Panel) else f"panel file {panel}"
        raise InvalidParameterError(
            f"{where}: holistic_repetitions is 0, but ranking by the z-scored panel mean needs holistic "
            "scores; set holistic_repetitions >= 1 (or give a fitted combiner)")
    return p


@contextlib.contextmanager
def _open_store(store: CallStore | str | os.PathLike | None):
    """The given store, a store at the given path (closed after), or a temporary one (removed after)."""
    if isinstance(store, CallStore):
        yield store
        return
    with contextlib.ExitStack() as stack:
        if store is None:
            path = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="multicrop-rank-"))) / "calls.sqlite"
        else:
            path = Path(store)
        s = CallStore(path)
        stack.callback(s.close)
        yield s


def _holistic(table: Any, labels: list[str], families: list[str]):
    """Per label (rows, in order) and family (columns), the mean holistic score; NaN where none parsed."""
    import pandas as pd

    from ..judges.quick import score_summary

    summary = score_summary(table) if len(table) else None
    if summary is None or "holistic" not in summary.columns:
        return pd.DataFrame(index=labels, columns=[], dtype=float)
    wide = summary.pivot(index="image", columns="family", values="holistic")
    return wide.reindex(index=labels, columns=[f for f in families if f in wide.columns]).astype(float)


def _finite(x: float) -> float | None:
    return float(x) if x == x and math.isfinite(x) else None


def _choose(vals: np.ndarray, boxes: list, kept: list, max_iou: float) -> int:
    """Index of the best-scored alternative whose IoU with every kept crop is at most ``max_iou``.

    Ties keep the composition order; with no finite score, or no alternative
    clear of the kept crops, the crop's own first alternative.
    """
    for j in np.argsort(-np.where(np.isfinite(vals), vals, -np.inf), kind="stable"):
        if not np.isfinite(vals[j]):
            break
        if all(iou(boxes[j], k) <= max_iou for k in kept):
            return int(j)
    return 0


def rank_crops(
    result: CropResult,
    panel: Panel | str | os.PathLike,
    *,
    store: CallStore | str | os.PathLike | None = None,
    combiner: Any = None,
    top: int | None = None,
    max_side: int = RENDER_MAX_SIDE,
    config: Any = None,
    shortlist: int | None = None,
) -> CropResult:
    """Keep, for each crop of ``result``, the shortlist alternative the judge panel scores highest.

    Parameters
    ----------
    result : CropResult
        From ``crop_photo(..., shortlist=n)``; it must still hold its image.
    panel : Panel or path
        The judge panel, or its TOML file.
    store : CallStore or path, optional
        Checkpoint store of the calls: a path persists across runs (a rerun
        costs no call); default: a temporary store, removed afterwards.
    combiner : fitted estimator, optional
        Predicts the panel score from the panel's ``H`` or ``H+P`` features
        (see :mod:`multicrop.ranking.combine`); default: the z-scored panel
        mean.
    top : int, optional
        Judge at most this many alternatives per crop (the composition
        scorer's first); default: the whole shortlist.
    max_side : int
        Long side of the renders the judges see (default 1024).
    config : multicrop.judges.config.RunConfig, optional
        Concurrency, retries and timeouts of the calls.
    shortlist : int, optional
        The shortlist length ``result`` was made with (``crop_photo``'s
        ``shortlist``), for the record; default: its longest shortlist.

    Returns
    -------
    CropResult
        ``crops`` the chosen alternatives, ``shortlists`` reordered with each
        chosen alternative first, ``ranking`` the record: ``panel``,
        ``combiner``, ``shortlist``, ``top``, ``calls_made``, ``calls_reused``, ``calls_failed``,
        ``spend_usd`` (logged cost of the calls made now), ``cost_usd`` (of
        every call behind the scores, reused ones included) and per crop
        ``chosen`` (index into its ``alternatives``, composition order) and
        each alternative's ``box``, ``composition_score``, ``panel_score`` and
        per-family ``holistic`` means.

    Raises
    ------
    InvalidParameterError
        A bad panel file, a combiner that does not match the panel's
        features, ``top`` < 1, or a result without its image.
    JudgeError
        A backend became unusable (e.g. authentication failed).
    """
    from ..judges.runner import judge_images, scores_table
    from ..judges.store.runlog import redact
    from ..judges.types import ImageRef

    p = load_ranking_panel(panel, combiner=combiner)
    top = None if top is None else _positive("top", top)
    if result.image is None:
        raise InvalidParameterError("result: holds no image (crop_photo's result carries it); cannot render crops")
    families = [f.name for f in p.families]
    gives = {"has_dimensions": p.dimension_repetitions > 0, "has_holistic": p.holistic_repetitions > 0}
    comb = None if combiner is None else combiner_info(combiner, families, **gives)
    t0 = time.perf_counter()
    lists = [tuple(s) for s in result.shortlists] or [(c,) for c in result.crops]
    lists = [alts[:top] if top else alts for alts in lists]
    labels = [[f"crop{i + 1}-alt{j + 1}" for j in range(len(alts))] for i, alts in enumerate(lists)]
    flat = [lab for labs in labels for lab in labs]
    renders = render_boxes(result.image, [a.box for alts in lists for a in alts], max_side=max_side)
    refs = [ImageRef(arr, label=lab) for arr, lab in zip(renders, flat)]
    with _open_store(store) as s:
        summary, plan = judge_images(refs, p, s, config=config)
        table = scores_table(plan, s)
        # spend: the runner's sum over the calls it recorded now; cost: every call behind the scores,
        # looked up by key (no scan of a shared store)
        spend, cost = summary.cost_usd, sum(s.costs({c.key for c in plan}).values())
    holistic = _holistic(table, flat, families)
    if combiner is None:
        score = z_panel_mean(holistic)
    else:
        score = combiner_scores(combiner, table, flat, families, **gives)
    crops, shortlists, per_crop = [], [], []
    for alts, labs in zip(lists, labels):
        vals = np.array([score.get(lab, np.nan) for lab in labs], dtype=float)
        best = _choose(vals, [a.box for a in alts], [c.box for c in crops], result.config.nms_iou)
        crops.append(alts[best])
        shortlists.append((alts[best], *alts[:best], *alts[best + 1:]))
        per_crop.append({"chosen": best, "alternatives": [
            {"box": a.box, "composition_score": float(a.score), "panel_score": _finite(v),
             "holistic": {f: _finite(holistic.at[lab, f]) for f in holistic.columns}}
            for a, lab, v in zip(alts, labs, vals)]})
    ranking = {
        "version": RANKING_VERSION,
        "panel": {"families": [{"name": f.name, "backend": f.backend, "model": f.model} for f in p.families],
                  "holistic_repetitions": p.holistic_repetitions,
                  "dimension_repetitions": p.dimension_repetitions,
                  "sha256": content_hash(redact(p.to_dict()))},
        "combiner": comb or {"name": PANEL_MEAN},
        "render_max_side": max_side,
        "shortlist": _positive("shortlist", shortlist) if shortlist is not None
        else max((len(alts) for alts in result.shortlists), default=1),
        "top": top,
        "alternatives": len(flat),
        "calls_planned": summary.planned,
        "calls_made": summary.performed,
        "calls_reused": summary.already_done,
        "calls_failed": summary.failed + summary.skipped + summary.abandoned,
        "spend_usd": round(spend, 6),
        "cost_usd": round(cost, 6),
        "changed": sum(c["chosen"] != 0 for c in per_crop),
        "crops": per_crop,
    }
    timings = {**result.timings, "judge": time.perf_counter() - t0}
    versions = {**result.versions, "ranking": RANKING_VERSION}
    return replace(result, crops=tuple(crops), shortlists=tuple(shortlists), ranking=ranking, timings=timings,
                   versions=versions)


def summary_line(ranking: dict[str, Any], *, panel_name: str) -> str:
    """The one-line summary the command line prints, e.g.

    ``judged 12 alternatives of 3 crops with panel p.toml: 12 calls, 0 reused, $0.0000``.
    """
    n, k = ranking["alternatives"], len(ranking["crops"])
    line = (f"judged {n} alternative{'s' * (n != 1)} of {k} crop{'s' * (k != 1)} with panel {panel_name}: "
            f"{ranking['calls_made']} calls, {ranking['calls_reused']} reused, ${ranking['spend_usd']:.4f}")
    if ranking["changed"]:
        line += f"; the panel changed {ranking['changed']} of {k} crop{'s' * (k != 1)}"
    if ranking["calls_failed"]:
        line += f"; {ranking['calls_failed']} calls failed (run again with the same --judge-store to retry them)"
    return line
