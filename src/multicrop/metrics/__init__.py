"""Metrics for crops: kIoU (Carousel's multi-crop IoU)."""

from .kiou import (
    KIOU_THRESHOLDS,
    ImageKIoU,
    KIoUSummary,
    Match,
    image_kiou,
    kiou,
    kiou_range,
    match_boxes,
    summarize_kiou,
)

__all__ = [
    "KIOU_THRESHOLDS",
    "ImageKIoU",
    "KIoUSummary",
    "Match",
    "image_kiou",
    "kiou",
    "kiou_range",
    "match_boxes",
    "summarize_kiou",
]
