"""Label transfer: combiners fitted on all of one dataset, applied to a second one.

Each fused ``H+P`` and ``P`` arm is refitted on every aligned image of the
main dataset and predicts the second dataset's images; the check is its
Spearman rho there minus that of the second dataset's best single judge,
with a bootstrap CI over the second dataset's images.  Images in both sets
are dropped from the second (a model fitted on them would predict them in
sample).  scikit-learn is imported only inside :func:`label_transfer`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...datasets.ratings import Ratings
from ...errors import DatasetError
from ...fusion.features import JudgeTable, validate_judge_table
from ...serialize import Serializable
from ...stats.bootstrap import delta_result
from ...stats.correlation import bootstrap_metric, correlation, resample_counts
from .align import MIN_IMAGES, AlignedData, align, match_images
from .config import JudgesReportConfig
from .metrics import finite_or_low
from .robustness import Check
from .streams import TRANSFER, stream_rng

__all__ = ["TRANSFER_BLOCKS", "TransferInfo", "label_transfer"]

#: blocks whose fused arms are transferred, in table order
TRANSFER_BLOCKS = ("H+P", "P")


@dataclass(frozen=True)
class TransferInfo(Serializable):
    """How many images of the second dataset were used, and how many were dropped as shared."""

    n_transfer_images: int
    n_transfer_overlap: int


def _transfer_data(transfer: tuple[JudgeTable | pd.DataFrame, Ratings], images: pd.Index, *,
                   families: Sequence[str], image_key: str) -> tuple[AlignedData, TransferInfo]:
    """The second dataset aligned on ``families``, less the images it shares with ``images``."""
    t_table, t_ratings = transfer
    if isinstance(t_table, pd.DataFrame):
        t_table = validate_judge_table(t_table, source="transfer judge table")
    t_table, t_ratings, _ = match_images(t_table, t_ratings, image_key)
    missing = sorted(set(families) - set(t_table.families))
    if missing:
        raise DatasetError(f"transfer judge table lacks families {missing}")
    t_data = align(t_table, t_ratings, families=families)
    shared = t_data.images.intersection(pd.Index(images))
    if len(shared):
        keep = t_data.images.difference(shared)
        if len(keep) < MIN_IMAGES:
            raise DatasetError(
                f"the transfer set shares {len(shared)} of its {t_data.n_images} images with the main set; "
                f"{len(keep)} would be left after dropping them (need at least {MIN_IMAGES})"
            )
        t_data = t_data.subset(keep)
    return t_data, TransferInfo(t_data.n_images, int(len(shared)))


def _check_columns(block: str, fitted: pd.DataFrame, other: pd.DataFrame) -> None:
    absent = [c for c in fitted.columns if c not in other.columns]
    if absent:
        more = f" and {len(absent) - 5} more" if len(absent) > 5 else ""
        raise DatasetError(f"transfer judge table lacks the {block} feature columns "
                           f"{', '.join(map(str, absent[:5]))}{more} that the combiner was fitted on")


def label_transfer(data: AlignedData, transfer: tuple[JudgeTable | pd.DataFrame, Ratings], *,
                   families: Sequence[str], config: JudgesReportConfig) -> tuple[list[Check], TransferInfo]:
    """Label-transfer checks of every combiner on :data:`TRANSFER_BLOCKS`.

    Parameters
    ----------
    data : AlignedData
        The main dataset.
    transfer : (JudgeTable or DataFrame, Ratings)
        The second dataset.
    families : sequence of str
        Families of the main analysis; the second judge table must have them all.
    config : JudgesReportConfig

    Returns
    -------
    (list of Check, TransferInfo)

    Raises
    ------
    DatasetError
        The second dataset lacks a family or a feature column, or too few
        of its images are left.
    """
    from ...fusion.combiners import COMBINERS

    t_data, info = _transfer_data(transfer, data.images, families=families, image_key=config.image_key)
    y, t_y = data.y, t_data.y
    members = {f: t_data.members[f"H:{f}"].to_numpy(dtype=float) for f in families}
    t_best = max(members, key=lambda f: finite_or_low(correlation(members[f], t_y)))
    counts = resample_counts(len(t_y), config.n_resamples, stream_rng(config.seed, TRANSFER))
    checks = []
    for b in TRANSFER_BLOCKS:
        if b not in data.blocks or b not in t_data.blocks:
            continue
        fitted = data.blocks[b]
        _check_columns(b, fitted, t_data.blocks[b])
        for c in config.combiners:
            model = COMBINERS.create(c, random_state=config.seed).fit(fitted.to_numpy(), y)
            pred = model.predict(t_data.blocks[b][list(fitted.columns)].to_numpy())
            bt = bootstrap_metric(t_y, np.vstack([pred, members[t_best]]), counts)
            r = delta_result(correlation(pred, t_y) - correlation(members[t_best], t_y), bt[:, 0] - bt[:, 1],
                             confidence=config.confidence)
            checks.append(Check(
                "label_transfer", f"{b}_{c}", r.estimate, sd=math.nan, ci_low=r.ci_low, ci_high=r.ci_high, p=r.p,
                detail=f"fitted here, applied to the transfer set: rho {correlation(pred, t_y):.3f} "
                       f"minus its best single member:{t_best}; {info.n_transfer_images} transfer "
                       f"images ({info.n_transfer_overlap} shared with this set dropped)"))
    return checks, info
