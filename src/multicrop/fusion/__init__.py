"""Fusion of judge scores: feature blocks and combiners (scikit-learn estimators).

Names are imported on first use (PEP 562): reading a judge table or building
feature blocks does not import scikit-learn; only the combiners do.
"""

_EXPORTS = {
    "combiners": ("COMBINERS", "GradientBoostingCombiner", "RidgeCombiner", "make_combiner", "out_of_fold_predict"),
    "features": ("BLOCKS", "DIMENSIONS", "JudgeTable", "build_features", "calls_per_image", "dimension_block",
                 "holistic_block", "panel_mean", "read_judge_table", "split_holistic_block", "validate_judge_table"),
}
_WHERE = {name: mod for mod, names in _EXPORTS.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
