"""Fusion of judge scores: feature blocks and combiners (scikit-learn estimators)."""

from .combiners import COMBINERS, GradientBoostingCombiner, RidgeCombiner, make_combiner, out_of_fold_predict
from .features import (
    BLOCKS,
    DIMENSIONS,
    JudgeTable,
    build_features,
    calls_per_image,
    dimension_block,
    holistic_block,
    panel_mean,
    read_judge_table,
    split_holistic_block,
    validate_judge_table,
)

__all__ = [
    "BLOCKS",
    "COMBINERS",
    "DIMENSIONS",
    "GradientBoostingCombiner",
    "JudgeTable",
    "RidgeCombiner",
    "build_features",
    "calls_per_image",
    "dimension_block",
    "holistic_block",
    "make_combiner",
    "out_of_fold_predict",
    "panel_mean",
    "read_judge_table",
    "split_holistic_block",
    "validate_judge_table",
]
