"""The plain-words notes of a direct selection: why fewer crops, why a cut, which were left out."""

from __future__ import annotations

from ...geometry import Box
from .settings import PoolConfig

__all__ = ["plural", "short_note", "size_notes"]


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def short_note(n: int, k: int, *, force: bool, close: int = 0, why: str = "") -> str:
    """"this photo has 2 distinct subjects; wrote 2 crops, asked for 5" (or how close-ups and force_k filled up)."""
    head = f"this photo has {plural(n, 'distinct subject')}"
    head += f" and {plural(close, 'close-up')} worth a crop; " if close else "; "
    if force:
        return head + f"wrote {plural(k, 'crop')} as asked (force_k), {k - n - close} showing no new subject"
    return head + f"wrote {plural(n + close, 'crop')}, asked for {k}" + (f" ({why})" if why else "")


def size_notes(boxes: list[Box], scale: float, bounds: Box, pool: PoolConfig) -> list[str]:
    """Say how many crops are narrower than ``platform_side`` source pixels (shown upscaled)."""
    if not pool.platform_side or not boxes:
        return []
    small = sum(max(b.w, b.h) * scale < pool.platform_side - 0.5 for b in boxes)
    if not small:
        return []
    long = max(bounds.w, bounds.h) * scale
    why = (f"the photo is only {long:.0f} px on its long side") if long * pool.platform_share < pool.platform_side \
        else "a tighter framing of the subject"
    return [f"{small} of {len(boxes)} crops under {pool.platform_side} px on the long side ({why}); "
            "platforms show them upscaled"]
