"""The library's notes and errors in plain words, for the page.

The crop wing writes its notes for the record and the command line
("cut 2 at x=433 bisects a salient box (x 244..636)"): exact, but written in
the partitioner's terms.  The page shows the same facts as a photographer
would say them; :func:`plain_notes` maps each known note to a sentence and
keeps any other note as it is (never dropped, so nothing is hidden).
:func:`plain_error` does the same for the one-line errors of an upload.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

__all__ = ["plain_notes", "note_items", "NOTE_KINDS", "plain_error", "plain_message", "ratio_note"]


def _or(listed: str) -> str:
    """``"4:5, 1:1, 1.91:1"`` -> ``"4:5, 1:1 or 1.91:1"``."""
    parts = [p.strip() for p in listed.split(",") if p.strip()]
    return parts[0] if len(parts) < 2 else ", ".join(parts[:-1]) + " or " + parts[-1]


def _some(n: int, of: int) -> str:
    """``"The crop is"``, ``"Both crops are"``, ``"All 3 crops are"``, ``"1 of the 3 crops is"``."""
    if n == of:
        return "The crop is" if n == 1 else "Both crops are" if n == 2 else f"All {n} crops are"
    return f"{n} of the {of} crops {'is' if n == 1 else 'are'}"


def _cut(who: str) -> str:
    """What a cut crop cuts through, as the library counts it (``crop.direct.notes.counted``) with "a" or "an" for
    one: ``"an elephant"``, ``"2 people and a dog"``, ``"a person, animal or vehicle"``."""
    return re.sub(r"(?:^|(?<=, )|(?<= and ))1 (\w)", lambda m: ("an " if m[1] in "aeiou" else "a ") + m[1], who)


def _n(word: str, n: int) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _scene(how: str) -> str:
    """The note of a photo with no subject, from how its views were chosen (``crop.direct.views``)."""
    head = "No person, animal or thing stands out in this photo, so "
    short = re.fullmatch(r"(\d+) views? of the scene, asked for (\d+) .*", how)
    if short:
        return head + f"its crops are views of the scene: only {short[1]} of the {short[2]} asked for differ enough."
    if how == "one view of the scene":
        return head + "its crop is a view of the scene."
    return head + "its crops are views of the scene" + (": the widest first, then closer inside it." if "closer" in how
                                                         else ".")


#: What each known note is about, so the page can keep the ones still true after the person edits the
#: crops: "crops" (named crops of the suggestion: stale once they are moved), "count" (why the
#: suggestion has fewer crops than asked, or why there can be no more), "ratio" (the ratio the
#: suggestion picked), "photo" (the photo itself: true whatever the crops).
NOTE_KINDS = ("crops", "count", "ratio", "photo")

#: Each known note: its pattern, what it is about (one of :data:`NOTE_KINDS`) and its plain sentence.
_NOTES: list[tuple[re.Pattern[str], str, Callable[[re.Match[str]], str]]] = [
    (re.compile(r"cut (\d+) at [xy]=\d+ bisects a salient box.*"), "crops",
     lambda m: f"Crops {m[1]} and {int(m[1]) + 1} meet in the middle of something that stands out, "
               "so each may show only part of it; try one crop fewer, or move them."),
    (re.compile(r"region (\d+) is \d+x\d+, narrower than 1:[\d.]+"), "crops",
     lambda m: f"The part of the photo left for crop {m[1]} is very narrow, so crop {m[1]} "
               "reaches into its neighbours' parts."),
    (re.compile(r"region (\d+) \(.*\) is too small for a crop of (\d+) px.*"), "crops",
     lambda m: f"The part of the photo left for crop {m[1]} is smaller than {m[2]} px, so crop {m[1]} "
               "reaches into its neighbours' parts."),
    (re.compile(r"crop (\d+) overlaps crop (\d+), IoU ([\d.]+)"), "crops",
     lambda m: f"Crops {m[2]} and {m[1]} show much of the same ({float(m[3]):.0%} of their area together): "
               "this photo may not have that many distinct subjects."),
    (re.compile(r"only (\d+) of k=(\d+) crops remain after non-maximum suppression"), "count",
     lambda m: f"Only {m[1]} of the {m[2]} crops asked for are different enough from each other to keep."),
    (re.compile(r"this photo has (\d+) distinct subjects?(?: \(\d+ parts of it\))?; wrote (\d+) crops? as asked "
                r"\(force_k\), (\d+) .*"), "count",
     lambda m: f"This photo has {_n('distinct subject', int(m[1]))}; the carousel is filled up to "
               f"{m[2]} crops, {m[3]} of them showing nothing new."),
    (re.compile(r"this photo has (\d+) distinct subjects?(?: \((\d+) parts of it\))?(?: and (.+?) worth a crop)?; "
                r"wrote (\d+) crops?, asked for (\d+)(?: \((.+)\))?"), "count",
     lambda m: f"This photo has {_n('distinct subject', int(m[1]))}" + (f", in {m[2]} parts" if m[2] else "")
               + (f" and {m[3]}" if m[3] else "")
               + f", so it gets {_n('crop', int(m[4]))} instead of {m[5]}" + (f": {m[6]}." if m[6] else ".")),
    (re.compile(r"(\d+) of (\d+) crops under (\d+) px on the long side.*"), "crops",
     lambda m: (f"{_some(int(m[1]), int(m[2]))} smaller than {m[3]} px: the platform will enlarge "
                f"{'it' if m[1] == '1' else 'them'} and {'it' if m[1] == '1' else 'they'} may look soft.")),
    (re.compile(r"one ratio for every crop: (\S+) \(best of (.*)\)"), "ratio",
     lambda m: f"All slides are {m[1]}, the ratio of {_or(m[2])} that gave this photo the best crops "
               "(a platform such as Instagram shows every slide at one shape)."),
    (re.compile(r"no crop of at least (\d+) px fits partition \d+; use a smaller k"), "count",
     lambda m: f"The photo is too small for that many crops of at least {m[1]} px: choose fewer crops."),
    (re.compile(r"a \d+x\d+ image cannot hold k=(\d+) crops of at least (\d+) px \(at most (\d+)\)"), "count",
     lambda m: f"The photo is too small for {m[1]} crops of at least {m[2]} px: "
               + ("choose 1 crop." if m[3] == "1" else f"choose {m[3]} or fewer.")),
    (re.compile(r"no subject found \(no person, animal or thing detected, nothing salient\): (.+)"), "count",
     lambda m: _scene(m[1])),
    (re.compile(r"the focus given is held by the first crop"), "crops",
     lambda m: "Crop 1 holds the point you chose."),
    (re.compile(r"(\d+) close-ups? of a subject another crop shows whole"), "crops",
     lambda m: f"{_n('crop', int(m[1]))} {'zooms' if m[1] == '1' else 'zoom'} in on someone another crop shows whole."),
    (re.compile(r"(\d+) portraits? of a person another crop shows whole, cut at the chest or waist"), "crops",
     lambda m: f"{_n('crop', int(m[1]))} {'zooms' if m[1] == '1' else 'zoom'} in on someone another crop shows whole, "
               "ending at the chest or waist."),
    (re.compile(r"(\d+) closer views? inside the first crop"), "crops",
     lambda m: f"{_n('crop', int(m[1]))} {'looks' if m[1] == '1' else 'look'} closer inside the first."),
    (re.compile(r"crop (\d+) is a wide view of subjects the other crops show one by one"), "crops",
     lambda m: f"Crop {m[1]} shows together, wider, the subjects the other crops show one by one."),
    (re.compile(r"no crop of ratio (.+) holds the (.+) whole \(it is wider or taller than any\): "
                r"crop (\d+) frames the largest part of it"), "crops",
     lambda m: f"The {m[2]} is wider or taller than any crop of {_or(m[1])}: crop {m[3]} shows as much of it as "
               "fits."),
    (re.compile(r"no crop of ratio (.+) holds the (.+) whole \(it is wider or taller than any\): "
                r"crops (.+) show it in parts, (left to right|top to bottom)"), "crops",
     lambda m: f"The {m[2]} is wider or taller than any crop of {_or(m[1])}: crops {m[3]} show it in parts, "
               f"{m[4]}. For slides that join edge to edge, choose Seamless panorama at the top."),
    (re.compile(r"every crop of ratio (.+) that holds the (.+) whole cuts through a person, animal or vehicle, "
                r"a face or half of another salient thing: crop (\d+) frames the largest part of it"), "crops",
     lambda m: f"Every crop of {_or(m[1])} that holds the {m[2]} whole would cut through someone, a face or "
               f"another subject: crop {m[3]} shows the largest part of it."),
    (re.compile(r"(\d+) zooms? in or out of a subject another crop shows"), "crops",
     lambda m: f"{_n('crop', int(m[1]))} {'shows' if m[1] == '1' else 'show'} a subject of another crop closer or "
               "wider."),
    (re.compile(r"crop (\d+) cuts through (.+?): no candidate of the allowed ratios frames the (.+) without a cut"),
     "crops", lambda m: f"Crop {m[1]} cuts through {_cut(m[2])}: no crop of these ratios frames the {m[3]} without a "
                        "cut."),
    (re.compile(r"crop (\d+) cuts a person at a portrait line: no candidate of the allowed ratios frames the (.+) "
                r"without a cut"), "crops",
     lambda m: f"Crop {m[1]} is a portrait, ending at the chest, waist or thighs: no crop of these ratios holds the "
               f"{m[2]} whole."),
    (re.compile(r"crop (\d+) cuts (\d+) people at portrait lines \(a group portrait\): no candidate of the allowed "
                r"ratios frames the (.+) without a cut"), "crops",
     lambda m: f"Crop {m[1]} is a group portrait of {m[2]} people, ending at their chests, waists or thighs: no "
               f"crop of these ratios holds the {m[3]} whole."),
    (re.compile(r"crop (\d+) cuts through (.+?): a fill asked for by force_k"), "crops",
     lambda m: f"Crop {m[1]} cuts through {_cut(m[2])}: it only fills the carousel up to the number of crops asked."),
]

_ERRORS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (re.compile(r".*metadata chunk.*expands beyond the limit.*", re.I | re.S),
     lambda m: "this photo's embedded text or colour profile is far larger than any photo needs; it is refused "
               "as a decompression bomb."),
    (re.compile(r".*(?:not an image|cannot identify|not a supported|unsupported).*", re.I | re.S),
     lambda m: "this file is not a photo the page can open (JPEG, PNG, WebP, TIFF or HEIC)."),
    (re.compile(r".*(?:truncated|ends before|corrupt).*", re.I | re.S),
     lambda m: "this photo's file is damaged or incomplete."),
    (re.compile(r".*(?:decompression bomb|too many pixels|more pixels).*", re.I | re.S),
     lambda m: "this photo has more pixels than the server accepts."),
]


def _split(text: str) -> list[str]:
    return [p.strip() for p in text.split("; ") if p.strip()]


def note_items(failure: str | None, notes: Iterable[str] = ()) -> list[dict[str, str]]:
    """:func:`plain_notes` with what each is about: ``[{"text": ..., "kind": one of NOTE_KINDS}]``.

    A note of no known pattern is about the photo.

    Examples
    --------
    >>> note_items(None, ["only 2 of k=4 crops remain after non-maximum suppression"])[0]["kind"]
    'count'
    """
    out: dict[str, str] = {}
    for text in (_split(failure) if failure else []) + [n.strip() for n in notes if n.strip()]:
        for pattern, kind, say in _NOTES:
            m = pattern.fullmatch(text)
            if m:
                out.setdefault(say(m), kind)
                break
        else:
            kind = "count" if re.search(r"\bwrote \d+ crops?\b|\bk=\d+|fewer|distinct", text) else "photo"
            out.setdefault(text[:1].upper() + text[1:] + ("" if text.endswith(".") else "."), kind)
    return [{"text": t, "kind": k} for t, k in out.items()]


def plain_notes(failure: str | None, notes: Iterable[str] = ()) -> list[str]:
    """Plain sentences for a result's ``failure`` and ``notes`` (each kept, in order).

    Examples
    --------
    >>> plain_notes("cut 2 at x=433 bisects a salient box (x 244..636)")[0][:44]
    'Crops 2 and 3 meet in the middle of somethin'
    >>> plain_notes(None, ["this photo has 2 distinct subjects; wrote 2 crops, asked for 4"])
    ['This photo has 2 distinct subjects, so it gets 2 crops instead of 4.']
    >>> plain_notes(None, ["this photo has 1 distinct subject and 1 zoom worth a crop; wrote 2 crops, asked for 3 "
    ...                    "(no other framing of the dog holds it whole without a cut and differs enough from the "
    ...                    "crops chosen)"])[0]
    'This photo has 1 distinct subject and 1 zoom, so it gets 2 crops instead of 3: no other framing of the dog holds it whole without a cut and differs enough from the crops chosen.'
    >>> plain_notes(None, ["2 zooms in or out of a subject another crop shows"])
    ['2 crops show a subject of another crop closer or wider.']
    """
    return [n["text"] for n in note_items(failure, notes)]


def plain_message(message: str) -> str:
    """A library error's one line for the page: ``"<name>: "`` kept, the rest in plain words when known.

    Examples
    --------
    >>> plain_message("pano.jpg: no crop of at least 64 px fits partition 2; use a smaller k")
    'pano.jpg: The photo is too small for that many crops of at least 64 px: choose fewer crops.'
    >>> plain_message("s.png: a 64x64 image cannot hold k=2 crops of at least 64 px (at most 1)")
    's.png: The photo is too small for 2 crops of at least 64 px: choose 1 crop.'
    """
    head, sep, body = message.partition(": ")
    if not sep or " " in head.strip():
        head, body = "", message
    for pattern, _, say in _NOTES:
        m = pattern.fullmatch(body.strip())
        if m:
            return (f"{head}: " if head else "") + say(m)
    return message


def plain_error(name: str, message: str) -> str:
    """An upload's error for the page: ``"<name>: <plain sentence>"``.

    Examples
    --------
    >>> plain_error("z.png", "z.png: a compressed metadata chunk (text, ICC profile or XMP) expands beyond the "
    ...             "limit (Decompressed data too large); refused as a decompression bomb")[:48]
    "z.png: this photo's embedded text or colour prof"
    >>> plain_error("notes.jpg", "notes.jpg: not an image Pillow can read")
    'notes.jpg: this file is not a photo the page can open (JPEG, PNG, WebP, TIFF or HEIC).'
    """
    body = message[len(name) + 2:] if message.startswith(name + ": ") else message
    for pattern, say in _ERRORS:
        if pattern.fullmatch(body):
            return f"{name}: {say(pattern.fullmatch(body))}"
    return f"{name}: {body}"


def ratio_note(spec_label: str, ratios: list[str], chosen: list[str], *, one_ratio: bool,
               platform: bool) -> str | None:
    """What the page says about the carousel's ratios (which one was picked, or a mixed warning)."""
    kinds = list(dict.fromkeys(chosen))
    if one_ratio and len(ratios) > 1 and kinds:
        others = [r for r in ratios if r != kinds[0]]
        return (f"All slides are {kinds[0]} ({spec_label}): of {', '.join(ratios[:-1])} and {ratios[-1]}, "
                f"{kinds[0]} gave this photo the best crops; {' or '.join(others)} for every slide "
                "is one click away in the ratio menu.")
    if len(kinds) > 1:
        return ("Mixed shapes (" + ", ".join(kinds) + "): "
                + ("Instagram shows every slide at the first slide's shape and would re-crop the others."
                   if platform else "a platform that shows one shape per carousel would re-crop some slides."))
    return None
