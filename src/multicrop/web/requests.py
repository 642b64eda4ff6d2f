"""What the page sends and offers: the request bodies of the web API and the ratio menu.

The models are pydantic's (FastAPI validates each request against them, so a
wrong type is a 422 naming the field); :data:`PRESETS` is generated from
:data:`multicrop.ratios.PRESETS` and :data:`multicrop.ratios.PLATFORM_SIZES`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

from ..ratios import PLATFORM_SIZES, PRESETS as RATIO_SPECS

__all__ = ["PRESETS", "CropRequest", "SeamlessRequest", "BandIn", "BoxIn", "DownloadRequest", "LabelMeta", "LabelSave"]


def _ratio_menu() -> dict[str, str]:
    """The page's ratio menu, label -> ratio setting, generated from :data:`multicrop.ratios.PRESETS`.

    The Instagram preset (one ratio for all slides), then each of its ratios alone with its
    platform size (:data:`~multicrop.ratios.PLATFORM_SIZES`), the carousel preset, and every
    other one-ratio preset whose ratio is not offered yet.
    """
    insta, menu = RATIO_SPECS["instagram"], {}
    menu[insta.label + " · one for all slides"] = insta.name
    for r in insta.ratios:
        w, h = PLATFORM_SIZES[str(r)]
        shape = "portrait" if r.value < 1 else "square" if r.value == 1 else "landscape"
        menu[f"{r} {shape} (Instagram {w}×{h})"] = str(r)
    menu[RATIO_SPECS["carousel"].label] = "carousel"
    for spec in RATIO_SPECS.values():
        if len(spec.ratios) == 1 and str(spec.ratios[0]) not in menu.values():
            menu[spec.label] = str(spec.ratios[0])
    return menu


#: What the page offers in its ratio menu: label -> ratio setting (a preset name or ratios).
PRESETS: dict[str, str] = _ratio_menu()

class CropRequest(BaseModel):
    """Settings for a carousel: k (a number or ``auto``), ratios (a preset such as ``instagram``, or
    ``"2:3,3:2"``), strategy, and ``mixed`` (let each crop of a one-ratio preset take its own ratio)."""

    k: int | str | None = None
    ratios: str | None = None
    strategy: str | None = None
    mixed: bool = False
    focus: list[float] | None = Field(default=None, min_length=2, max_length=2,
                                      description="a point [x, y] in source px that one crop must hold (direct)")

    @field_validator("k", mode="before")
    @classmethod
    def _k_not_bool(cls, v: Any) -> Any:
        # JSON true is not a number of crops (pydantic would take it as 1)
        if isinstance(v, bool):
            raise ValueError("must be a whole number of crops (1, 2, ...) or 'auto', not true/false")
        return v


class BandIn(BaseModel):
    """A seamless panorama's band in source pixels: ``slides`` slides of ``ratio`` side by side."""

    x: float
    y: float
    w: float
    h: float
    ratio: str


class SeamlessRequest(BaseModel):
    """A seamless panorama: the ratio setting (its ratios are tried, the best kept) and the slide count;
    or, with ``band`` (and ``slides``), the slides cut from the band the person placed."""

    ratios: str | None = None
    slides: int | None = Field(default=None, ge=1, le=20)
    max_slides: int = Field(default=10, ge=2, le=20)
    band: BandIn | None = None


class BoxIn(BaseModel):
    """A crop in source pixels and its ratio (``"2:3"``)."""

    x: float
    y: float
    w: float
    h: float
    ratio: str


class DownloadRequest(CropRequest):
    """The carousel to download: the page's boxes (in order) and, optionally, the platform width."""

    boxes: list[BoxIn] = Field(default_factory=list)
    width: int | None = Field(default=None, ge=16, le=20000)
    seamless: bool = False


class LabelMeta(BaseModel):
    k: int | None = None
    title: str = ""
    creator: str = ""
    licence: str = ""
    url: str = ""


class LabelSave(BaseModel):
    boxes: list[BoxIn] = Field(default_factory=list)
    metadata: LabelMeta = Field(default_factory=LabelMeta)
