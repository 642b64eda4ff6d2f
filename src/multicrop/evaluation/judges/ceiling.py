"""The human noise ceiling on the aligned images: how high can any judge get?"""

from __future__ import annotations

import pandas as pd

from ...datasets.ratings import Ratings
from ...errors import InvalidParameterError
from ...stats.ceiling import noise_ceiling
from ...stats.results import NoiseCeiling
from .streams import CEILING, stream_rng

__all__ = ["human_ceiling"]


def human_ceiling(ratings: Ratings, images: pd.Index, *, n_splits: int,
                  seed: int) -> tuple[NoiseCeiling | None, str | None]:
    """Split-half noise ceiling of the human mean on ``images``, and a note when it is missing or not positive.

    The rater splits come from ``stream_rng(seed, CEILING)``.

    Returns
    -------
    (NoiseCeiling or None, str or None)
        None without per-rater ratings or with too few raters; the note
        says why, or that a ceiling that is not positive leaves headroom
        undefined.
    """
    if ratings.raters is None:
        return None, None
    rr = ratings.raters[ratings.raters["image"].isin(images)]
    try:
        ceiling = noise_ceiling(rr["image"].to_numpy(), rr["score"].to_numpy(dtype=float), n_splits=n_splits,
                                rng=stream_rng(seed, CEILING))
    except InvalidParameterError as exc:
        return None, str(exc)
    if not ceiling.ceiling > 0:
        return ceiling, (f"noise ceiling is {ceiling.ceiling:.3f} (raters' split halves do not agree: "
                         f"split-half rho {ceiling.split_half:.3f}); headroom is undefined")
    return ceiling, None
