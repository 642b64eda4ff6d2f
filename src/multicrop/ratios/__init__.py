"""Ratios: the :class:`Ratio` value, the one table of named presets and the one parser every face uses.

A ratio setting is what a user types after ``--preset``/``--ratio`` or picks in
the page's ratio menu: a preset name (``instagram``), one ratio (``2:3``), a
comma list (``4:5,1:1``) or a platform's pixel size (``1080x566``).
:func:`parse_ratio_spec` turns any of them into a :class:`RatioSpec`, which
carries the ratios *and* whether the carousel must keep one ratio for all its
slides, so that rule travels with the setting instead of being guessed again
from a name in every face (command line, web page, batch).

Instagram shows every slide of a carousel at the first slide's shape, so the
``instagram`` preset is one-ratio: the carousel takes 4:5, 1:1 or 1.91:1 for
all its slides.  A plain list of ratios (``"4:5,1:1,1.91:1"``) lets each crop
take its own; that is asked for explicitly.

Platform sizes are exact: Instagram's 1.91:1 slide is 1080×566 px (1080 / 1.91
is 565.4), which :func:`platform_height` returns for that ratio at 1080 px.

Three modules, one job each: :mod:`.value` (the :class:`Ratio` value and
:func:`parse_ratio`), :mod:`.presets` (:class:`RatioSpec`, the presets,
the platform sizes and :func:`parse_ratio_spec`) and :mod:`.counts` (the other
half of the setting, how many slides: :func:`count_or_auto`, the one ``k``
grammar of the command line and the web page); every name is imported from
here, ``multicrop.ratios``, as before the split.
"""

from __future__ import annotations

from .presets import (DEFAULT_RATIOS, ONE_RATIO_PRESETS, PLATFORM_SIZES, PRESETS, RATIO_PRESETS, RatioSpec,
                      parse_ratio_spec, parse_ratios, platform_height)
from .value import Ratio, parse_ratio
from .counts import count_or_auto

__all__ = [
    "Ratio",
    "parse_ratio",
    "parse_ratios",
    "RatioSpec",
    "PRESETS",
    "RATIO_PRESETS",
    "ONE_RATIO_PRESETS",
    "PLATFORM_SIZES",
    "DEFAULT_RATIOS",
    "parse_ratio_spec",
    "platform_height",
    "count_or_auto",
]
