"""The plain-words notes of a direct selection: why fewer crops, why a cut, which were left out."""

from __future__ import annotations

from ...geometry import Box
from .settings import PoolConfig

__all__ = ["counted", "fill_cut", "named", "one_slide", "one_slide_notes", "plural", "short_note", "size_notes", "unframed",
           "why_short", "zoom_notes"]


def fill_cut(at: int, n: int, who: str = "") -> str:
    """The note of a ``force_k`` fill (crop ``at``, 1-based) that slices ``n`` bodies (``who``: them counted by
    name, :func:`counted`)."""
    who = who or ("1 person, animal or vehicle" if n == 1 else f"{n} people, animals or vehicles")
    return f"crop {at} cuts through {who}: a fill asked for by force_k"


#: Plurals of the body labels that do not take an ``s``.
_PLURALS = {"person": "people", "sheep": "sheep", "bus": "buses"}


def counted(labels) -> str:
    """Bodies counted by name, in the order first named: what a crop cuts through.

    A crowd is named "crowd" whatever its size.

    >>> counted(["elephant"]), counted(["person", "dog", "person", "crowd of 12"])
    ('1 elephant', '2 people, 1 dog and 1 crowd')
    """
    names = ["crowd" if str(x).startswith("crowd") else str(x) for x in labels]
    counts = {x: names.count(x) for x in dict.fromkeys(names)}
    parts = [f"{n} {_PLURALS[x]}" if n > 1 and x in _PLURALS else plural(n, x) for x, n in counts.items()]
    return parts[0] if len(parts) < 2 else ", ".join(parts[:-1]) + " and " + parts[-1]


def named(subject) -> str:
    """What the notes call a subject: "salient thing" for a salient one, else its label or kind."""
    return "salient thing" if subject.kind == "salient" else subject.label or subject.kind


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def short_note(n: int, k: int, *, force: bool, close: int = 0, zooms: int = 0, why: str = "",
               portraits: int = 0, wider: int = 0, parts: int = 0) -> str:
    """"this photo has 2 distinct subjects; wrote 2 crops, asked for 5" (or how close-ups, ``portraits`` of
    them, zooms, ``wider`` views that show a body whole (``every_body``), ``parts`` more of a subject wider
    than every crop and force_k filled up)."""
    extra = [plural(c, w) for c, w in ((close - portraits, "close-up"), (portraits, "portrait"),
                                       (wider, "wider view"), (zooms, "zoom")) if c]
    head = f"this photo has {plural(n, 'distinct subject')}" + (f" ({parts + 1} parts of it)" if parts else "")
    head += f" and {' and '.join(extra)} worth a crop; " if extra else "; "
    made = n + parts + close + zooms + wider
    if force:
        return head + f"wrote {plural(k, 'crop')} as asked (force_k), {k - made} showing no new subject"
    return head + f"wrote {plural(made, 'crop')}, asked for {k}" + (f" ({why})" if why else "")


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


def why_short(subs: list, mains: list[int]) -> str:
    """Which subject left no further framing: the largest one the crops show."""
    shown = [subs[j] for j in set(mains) if j >= 0]
    if not shown:
        return ""
    s = max(shown, key=lambda x: x.box.area)
    return f"no other framing of the {named(s)} holds it whole without a cut and differs enough from the crops chosen"


def unframed(subject, ratios, held: bool, at: int | list[int] = 1, across: bool = True) -> str:
    """The note of a photo where no crop meets the hard rules, named by its most important subject: none of
    ``ratios`` holds it whole (``held`` False), or each crop that does breaks one (slices a body, cuts a face,
    halves a salient thing); crop ``at`` (1-based) frames the largest part of it, or crops ``at`` (several) show
    it in parts, left to right (``across``) or top to bottom."""
    what = f"the {named(subject)}"
    names = ", ".join(str(r) for r in ratios)
    why = (f"no crop of ratio {names} holds {what} whole (it is wider or taller than any)" if not held else
           f"every crop of ratio {names} that holds {what} whole cuts through a person, animal or vehicle, a face "
           "or half of another salient thing")
    at = [at] if isinstance(at, int) else list(at)
    if len(at) == 1:
        return why + f": crop {at[0]} frames the largest part of it"
    places = (f"{at[0]}–{at[-1]}" if at == list(range(at[0], at[-1] + 1)) else
              ", ".join(map(str, at[:-1])) + f" and {at[-1]}")
    return why + f": crops {places} show it in parts, {'left to right' if across else 'top to bottom'}"


def one_slide(group) -> str:
    """Why a group got one slide at k auto: none of its members is framed alone without a neighbour cut."""
    return (f"the {group.label or 'group'} is one slide: no crop of fewer of them holds each whole without "
            "cutting another")


def one_slide_notes(boxes: list[Box], mains: list[int], subs: list, frame: float, rule) -> list[str]:
    """Why a group is one slide at k auto: its only slide is wide (over ``rule.share``, the close-ups' rule, of
    the photo's ``frame`` area), with members a close-up would frame (``rule.min_area``); a group followed
    by a close-up, portrait or zoom of its own has more than one slide and no such note."""
    out = []
    for j in dict.fromkeys(j for j in mains if j >= 0):
        s = subs[j]
        mine = [b for b, mm in zip(boxes, mains) if mm == j]
        if (len(mine) == 1 and len(s.members) > 1 and mine[0].area > rule.share * frame
                and any(b.box.area >= rule.min_area * frame for b in s.bodies)):
            out.append(one_slide(s))
    return out


def zoom_notes(portraits: int, closer: int, zooms: int, views: int = 0, wide: int | None = None) -> list[str]:
    """What the slides beside the subjects' own are: ``closer`` close-ups (``portraits`` of them cut at a
    portrait line), ``zooms`` in or out of a subject shown, ``views`` closer inside the first crop (k auto, where
    no close-up, portrait or zoom made the carousel two slides) and crop ``wide`` (1-based), a wide view of
    subjects the others show one by one (a fixed k).

    >>> zoom_notes(1, 2, 0)
    ['1 close-up of a subject another crop shows whole', '1 portrait of a person another crop shows whole, cut at the chest or waist']
    """
    out = [f"crop {wide} is a wide view of subjects the other crops show one by one"] if wide else []
    if closer > portraits:
        out.append(f"{plural(closer - portraits, 'close-up')} of a subject another crop shows whole")
    if portraits:
        out.append(f"{plural(portraits, 'portrait')} of a person another crop shows whole, cut at the chest or waist")
    if zooms:
        out.append(f"{plural(zooms, 'zoom')} in or out of a subject another crop shows")
    if views:
        out.append(f"{plural(views, 'closer view')} inside the first crop")
    return out
