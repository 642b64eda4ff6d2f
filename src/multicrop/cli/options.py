"""Option values shared by several commands."""

from __future__ import annotations

from ..errors import InvalidParameterError
from ..ratios import DEFAULT_RATIOS
from ..ratios import PRESETS as RATIO_SPECS

__all__ = ["HELP_DEFAULTS", "PRESET_LIST", "count_or_auto"]

# Help-text copies of defaults whose home is crop.config / datasets.examples (checked by tests;
# importing those here would import numpy and Pillow on `multicrop --help`).  Ratios and presets come
# from their one table, multicrop.ratios, which imports nothing heavy.
HELP_DEFAULTS = {"k": 2, "ratios": DEFAULT_RATIOS, "strategy": "direct", "strategies": ("partition", "topk", "direct"),
                 "saliency": "u2netp", "faces": True, "quality": 92, "max_pixels": 300_000_000, "preview": True,
                 "example_width": 3600, "example_height": 1400,
                 "presets": {name: spec.text for name, spec in RATIO_SPECS.items()}}
#: The presets as ``--help`` and the errors list them: ``carousel (2:3,3:2), instagram (...), ...``.
PRESET_LIST = ", ".join(f"{k} ({v})" for k, v in HELP_DEFAULTS["presets"].items())


def count_or_auto(value: str, option: str) -> int | str:
    """A command-line count: ``auto`` (any case, spaces around ignored) or a positive integer.

    Examples
    --------
    >>> count_or_auto(" Auto ", "--k"), count_or_auto("3", "--k")
    ('auto', 3)
    >>> count_or_auto("0", "--slides")
    Traceback (most recent call last):
    ...
    multicrop.errors.InvalidParameterError: --slides must be a positive integer or auto, got '0'
    """
    if value.strip().lower() == "auto":
        return "auto"
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise InvalidParameterError(f"{option} must be a positive integer or auto, got {value!r}")
    return n
