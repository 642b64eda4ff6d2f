"""Ratio settings: :class:`RatioSpec`, the one table of named presets, platform sizes and the setting parser.

A setting is a preset name, one ratio, a comma list or a platform's pixel size
(:func:`parse_ratio_spec`); the package docstring of :mod:`multicrop.ratios`
says why a setting carries ``one_ratio``.  Re-exported by :mod:`multicrop.ratios`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..errors import InvalidParameterError
from .value import Ratio, parse_ratio

__all__ = ["parse_ratios", "RatioSpec", "PRESETS", "RATIO_PRESETS", "ONE_RATIO_PRESETS", "PLATFORM_SIZES",
           "DEFAULT_RATIOS", "parse_ratio_spec", "platform_height"]


def parse_ratios(text: str | Ratio | tuple | list) -> tuple[Ratio, ...]:
    """Parse a comma list of ratios or a preset name (:func:`parse_ratio_spec`).

    Examples
    --------
    >>> [str(r) for r in parse_ratios("2:3,3:2")]
    ['2:3', '3:2']
    >>> [str(r) for r in parse_ratios("instagram")]
    ['4:5', '1:1', '1.91:1']
    """
    return parse_ratio_spec(text).ratios


@dataclass(frozen=True, slots=True)
class RatioSpec:
    """A ratio setting: its name, the ratios crops may take, and whether they share one.

    Attributes
    ----------
    name : str
        The preset's name (``"instagram"``), or the ratios as written
        (``"4:5,1:1"``) for a setting that names no preset.
    ratios : tuple of Ratio
        The allowed ratios, in the preset's order.
    one_ratio : bool
        Every crop of a carousel takes the same one of ``ratios`` (the one
        that fits the photo best).
    label : str
        What a page shows for it (``"Instagram (4:5, 1:1 or 1.91:1)"``).
    sizes : tuple of (int, int)
        The platform's exact pixel size of each ratio, or empty.

    Examples
    --------
    >>> spec = parse_ratio_spec("instagram")
    >>> [str(r) for r in spec.ratios], spec.one_ratio
    (['4:5', '1:1', '1.91:1'], True)
    >>> parse_ratio_spec("2:3,3:2").one_ratio
    False
    """

    name: str
    ratios: tuple[Ratio, ...]
    one_ratio: bool = False
    label: str = ""
    sizes: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if not self.ratios:
            raise InvalidParameterError(f"ratios of {self.name!r}: the list is empty")
        if not isinstance(self.one_ratio, bool):
            raise InvalidParameterError(f"one_ratio must be true or false, got {self.one_ratio!r}")

    @property
    def text(self) -> str:
        """The ratios as a comma list (``"4:5,1:1,1.91:1"``)."""
        return ",".join(str(r) for r in self.ratios)

    def with_one_ratio(self, one_ratio: bool) -> RatioSpec:
        """This setting with ``one_ratio`` changed (a mixed Instagram carousel is asked for this way)."""
        return RatioSpec(self.name, self.ratios, bool(one_ratio), self.label, self.sizes)


#: Exact platform pixel sizes, by the ratio's text: Instagram's portrait, square and landscape slides.
PLATFORM_SIZES: MappingProxyType[str, tuple[int, int]] = MappingProxyType({
    "4:5": (1080, 1350),
    "1:1": (1080, 1080),
    "1.91:1": (1080, 566),
})


def _preset(name: str, ratios: tuple[Ratio, ...], label: str, *, one_ratio: bool = False,
            platform: bool = False) -> RatioSpec:
    sizes = tuple(PLATFORM_SIZES[str(r)] for r in ratios) if platform else ()
    return RatioSpec(name, ratios, one_ratio, label, sizes)


#: The named presets, in menu order.  The single-ratio presets keep ``one_ratio`` false:
#: with one ratio it changes nothing, and the settings (and their hashes) stay as they were.
PRESETS: MappingProxyType[str, RatioSpec] = MappingProxyType({s.name: s for s in (
    _preset("carousel", (Ratio(2, 3), Ratio(3, 2)), "Carousel dataset (2:3 or 3:2 per crop)"),
    _preset("instagram", (Ratio(4, 5), Ratio(1, 1), Ratio(1.91, 1)), "Instagram (4:5, 1:1 or 1.91:1)",
            one_ratio=True, platform=True),
    _preset("square", (Ratio(1, 1),), "1:1 square"),
    _preset("portrait", (Ratio(2, 3),), "2:3 portrait"),
    _preset("landscape", (Ratio(3, 2),), "3:2 landscape"),
    _preset("story", (Ratio(9, 16),), "9:16 story"),
    _preset("widescreen", (Ratio(16, 9),), "16:9 widescreen"),
)})

#: Named ratio sets (the presets' ratios), as :mod:`multicrop.geometry` has always offered them.
RATIO_PRESETS: MappingProxyType[str, tuple[Ratio, ...]] = MappingProxyType(
    {name: spec.ratios for name, spec in PRESETS.items()})

#: Presets whose platform shows every slide of a carousel at one ratio.
ONE_RATIO_PRESETS: frozenset[str] = frozenset(name for name, spec in PRESETS.items() if spec.one_ratio)

#: The ratio setting every face offers by default, as text: the carousel preset's ratios (``"2:3,3:2"``).
DEFAULT_RATIOS: str = PRESETS["carousel"].text


def _reduced(r: Ratio) -> Ratio:
    """A pixel size written as a ratio (``1080:1350``) in lowest terms (``4:5``); platform sizes by name."""
    for text, (w, h) in PLATFORM_SIZES.items():
        if (r.width, r.height) == (w, h):
            return parse_ratio(text)
    if isinstance(r.width, int) and isinstance(r.height, int) and max(r.width, r.height) > 100:
        g = math.gcd(r.width, r.height)
        return Ratio(r.width // g, r.height // g)
    return r


def parse_ratio_spec(text: Any) -> RatioSpec:
    """Parse a ratio setting: a preset name, a ratio, a comma list or a platform pixel size.

    Parameters
    ----------
    text : str, RatioSpec, Ratio, or sequence of Ratio/str
        ``"instagram"``, ``"2:3"``, ``"4:5,1:1"``, ``"1080x1350"`` (also
        written ``1080×1350``).  A sequence is a list of ratios.

    Returns
    -------
    RatioSpec
        ``one_ratio`` is the preset's rule; false for anything that names no preset.

    Raises
    ------
    InvalidParameterError
        An unknown name or a malformed ratio (the message lists the presets).

    Examples
    --------
    >>> parse_ratio_spec("Instagram").name
    'instagram'
    >>> [str(r) for r in parse_ratio_spec("1080×566, 1080x1350").ratios]
    ['1.91:1', '4:5']
    >>> parse_ratio_spec("wide")
    Traceback (most recent call last):
    ...
    multicrop.errors.InvalidParameterError: ratio setting 'wide' is neither a preset (carousel (2:3,3:2), instagram (4:5,1:1,1.91:1), square (1:1), portrait (2:3), landscape (3:2), story (9:16), widescreen (16:9)) nor ratios such as '2:3' or '4:5,1:1'
    """
    if isinstance(text, RatioSpec):
        return text
    if isinstance(text, Ratio):
        return RatioSpec(str(text), (text,))
    if isinstance(text, (tuple, list)):
        ratios = tuple(_reduced(parse_ratio(t)) for t in text)
        if not ratios:
            raise InvalidParameterError("ratio list is empty: []")
        return RatioSpec(",".join(map(str, ratios)), ratios)
    if not isinstance(text, str):
        raise InvalidParameterError(f"ratio setting must be a preset name or ratios such as '2:3', got {text!r}")
    key = text.strip().lower()
    if key in PRESETS:
        return PRESETS[key]
    parts = [t for t in key.replace("×", "x").split(",") if t.strip()]
    if not parts:
        raise InvalidParameterError(f"ratio list is empty: {text!r}")
    try:
        ratios = tuple(_reduced(parse_ratio(t)) for t in parts)
    except InvalidParameterError:
        raise InvalidParameterError(
            f"ratio setting {text!r} is neither a preset "
            f"({', '.join(f'{name} ({spec.text})' for name, spec in PRESETS.items())}) "
            "nor ratios such as '2:3' or '4:5,1:1'") from None
    return RatioSpec(",".join(map(str, ratios)), ratios)


def platform_height(ratio: Ratio | str, width: int) -> int:
    """The height of a ``width``-wide copy of a ``ratio`` crop, exact for platform sizes.

    Examples
    --------
    >>> platform_height("1.91:1", 1080), platform_height("4:5", 1080), platform_height("2:3", 1080)
    (566, 1350, 1620)
    """
    r = parse_ratio(ratio) if isinstance(ratio, str) else ratio
    size = PLATFORM_SIZES.get(str(r))
    if size is not None:
        return max(1, round(width * size[1] / size[0]))
    return max(1, round(width / r.value))
