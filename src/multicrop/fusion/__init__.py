"""Fusion of judge scores: feature blocks and combiners (scikit-learn estimators).

Names are imported on first use (PEP 562): reading a judge table or building
feature blocks does not import scikit-learn; only the combiners do.
"""

import lazy_loader

_EXPORTS = {
    "combiners": ("COMBINERS", "GradientBoostingCombiner", "RidgeCombiner", "out_of_fold_predict"),
    "features": ("BLOCKS", "DIMENSIONS", "JudgeTable", "build_features", "calls_per_image", "dimension_block",
                 "holistic_block", "panel_mean", "read_judge_table", "split_holistic_block", "validate_judge_table"),
}
# lazy_loader (Scientific Python SPEC 1, as scikit-image does): names are
# imported from their submodule on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={m: list(n) for m, n in _EXPORTS.items()})
