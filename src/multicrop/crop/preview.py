"""The preview of a crop result: the analysed photo, dimmed where the saliency model does not look, with the
partition and the numbered crops drawn on it.

:func:`render_preview` draws it; :func:`multicrop.crop.outputs.write_outputs`
writes it as ``<stem>_preview.jpg`` (re-exported there).
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from ..errors import InvalidParameterError
from .pipeline import CropResult

__all__ = ["render_preview", "DIM"]

#: Brightness kept where the saliency map is 0.
DIM = 0.5

_COLOURS = [(46, 204, 113), (52, 152, 219), (241, 196, 15), (231, 76, 60), (155, 89, 182), (26, 188, 156)]


def render_preview(result: CropResult, *, max_side: int = 1024) -> Image.Image:
    """The analysed photo with the partition and numbered crops drawn on it.

    The photo keeps its own colours: where the saliency map is 1 it is as shot, where it is 0 it is
    dimmed to :data:`DIM` of its brightness (a colour wash would hide how the crops will look).
    """
    if result.image is None:
        raise InvalidParameterError("the result carries no image to draw a preview on")
    img = result.image.analysis.astype(np.float32)
    if result.saliency is not None:
        s = np.clip(result.saliency, 0, 1)[..., None].astype(np.float32)
        img = img * (DIM + (1 - DIM) * s)
    im = Image.fromarray(np.clip(img + 0.5, 0, 255).astype(np.uint8))
    f = min(1.0, max_side / max(im.size))
    if f < 1:
        im = im.resize((round(im.width * f), round(im.height * f)), Image.Resampling.BILINEAR)
    draw = ImageDraw.Draw(im)
    pw, ph = im.size
    sx, sy = pw / result.size[0], ph / result.size[1]
    lw = max(2, round(max(pw, ph) / 400))
    p = result.partition_source
    if p is not None:
        for region in p.regions[1:]:
            r = region.scale(sx, sy)
            line = [(r.x, 0), (r.x, ph)] if p.orientation == "vertical" else [(0, r.y), (pw, r.y)]
            draw.line(line, fill=(255, 255, 0), width=lw)
        for b in p.boxes:
            draw.rectangle(b.scale(sx, sy).corners(), outline=(0, 255, 255), width=max(1, lw // 2))
    for i, crop in enumerate(result.crops, start=1):
        b = crop.box.scale(sx, sy)
        colour = _COLOURS[(i - 1) % len(_COLOURS)]
        draw.rectangle(b.corners(), outline=colour, width=lw + 1)
        label = str(i)
        tb = draw.textbbox((0, 0), label, font_size=max(12, 8 * lw))
        draw.rectangle((b.x, b.y, b.x + tb[2] + 2 * lw, b.y + tb[3] + 2 * lw), fill=colour)
        draw.text((b.x + lw, b.y + lw), label, fill=(0, 0, 0), font_size=max(12, 8 * lw))
    return im
