"""Crops chosen by a judge panel: the join of the crop wing and the judge wing.

The crop wing shortlists alternatives for each crop
(``crop_photo(..., shortlist=n)``); a judge panel scores the rendered
alternatives and the best of each shortlist is kept
(:func:`~multicrop.ranking.shortlists.rank_crops`; docs/cropping.md, "Crops
judged by a panel").

Names are imported on first use (PEP 562), as in :mod:`multicrop.fusion`.
"""

import lazy_loader

_EXPORTS = {
    "shortlists": ("RANKING_VERSION", "DEFAULT_SHORTLIST", "rank_crops", "summary_line", "load_ranking_panel"),
    "combine": ("PANEL_MEAN", "z_panel_mean"),
    "render": ("RENDER_MAX_SIDE", "render_boxes"),
    "settings": ("JudgeSettings", "measured_panel_path"),
}
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={m: list(n) for m, n in _EXPORTS.items()})
