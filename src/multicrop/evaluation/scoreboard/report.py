"""The scoreboard's table and its JSON (the committed baseline is one such file).

Examples
--------
>>> from multicrop.evaluation.scoreboard.figures import compare
>>> rows = {"synth k=given": {"a": {"kiou_50": 1.0, "kiou_50_95": 0.5, "gt": 2, "photos": 1}}}
>>> print(render(compare(rows, n_resamples=10)).splitlines()[2])
| carousel-synth seed 0, direct, the labelled k (1) | kIoU@0.5 | 0.500 | 0.500–0.500 | - | - |  | ≥ 0.450 met |
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...errors import InvalidParameterError
from ...io.files import LABEL_LIMIT, read_json_bounded
from .figures import N_RESAMPLES, Verdict

__all__ = ["SCOREBOARD_VERSION", "render", "to_json", "read_photos", "read_scoreboard", "verdicts_dict"]

#: Bump when a row, a figure or the JSON layout changes meaning.
SCOREBOARD_VERSION = "scoreboard-1"

HEADER = ("row", "figure", "value", "95 % interval", "baseline", "diff", "flag", "target")


def _value(v: Verdict) -> str:
    s = v.figure.show(v.new.value)
    if v.figure.percent and v.new.den:
        s += f" ({v.new.num:g}/{v.new.den:g})"
    return s


def render(verdicts: Sequence[Verdict], *, seed: int = 0, coco: str = "coco-subjects") -> str:
    """The table (Markdown) of ``verdicts``: one line per figure, the row named on its first line (with its
    number of photos), a carousel-synth row with the ``seed`` its scenes were made with, a photo row with
    the name of the ``coco`` folder its photos came from."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    last = None
    for v in verdicts:
        title = f"{v.row.title.format(seed=int(seed), coco=coco)} ({v.new.n})" if v.row.key != last else ""
        last = v.row.key
        interval = "-" if v.new.n == 0 else f"{v.figure.show(v.new.low)}–{v.figure.show(v.new.high)}"
        base = "-" if v.base is None else v.figure.show(v.base.value)
        target = v.figure.show_target()
        if target:
            target += " met" if v.met else " missed"
        lines.append("| " + " | ".join((title, v.figure.name, _value(v), interval, base, v.figure.show_diff(v.diff),
                                          v.flag, target)) + " |")
    return "\n".join(lines)


def _num(x: float | None) -> float | None:
    """A finite number, or None (JSON has no NaN)."""
    return None if x is None or not math.isfinite(x) else float(x)


def verdicts_dict(verdicts: Sequence[Verdict]) -> list[dict]:
    """JSON-ready figures: value, interval, baseline, diff, flag, target and met (None where undefined)."""
    out = []
    for v in verdicts:
        b = v.base
        out.append({"row": v.row.key, "figure": v.figure.name, "value": _num(v.new.value), "low": _num(v.new.low),
                    "high": _num(v.new.high), "photos": v.new.n, "num": v.new.num, "den": v.new.den,
                    "baseline": None if b is None else _num(b.value),
                    "baseline_low": None if b is None else _num(b.low),
                    "baseline_high": None if b is None else _num(b.high),
                    "diff": None if b is None else _num(v.diff), "flag": v.flag,
                    "target": v.figure.show_target() or None, "met": v.met})
    return out


def to_json(verdicts: Sequence[Verdict], photos: Mapping, *, boxes: Mapping | None = None,
            failures: Mapping | None = None, meta: Mapping | None = None) -> str:
    """The scoreboard as JSON: figures, the per-photo counts the intervals come from, crops and failures."""
    doc = {"scoreboard": SCOREBOARD_VERSION, "n_resamples": N_RESAMPLES, **dict(meta or {}),
           "figures": verdicts_dict(verdicts), "photos": photos, "failures": failures or {}, "boxes": boxes or {}}
    return json.dumps(doc, indent=1, sort_keys=True, allow_nan=False) + "\n"


def read_scoreboard(path: str | Path) -> dict:
    """A scoreboard JSON (a baseline) whole: its ``photos``, ``versions``, ``commit`` ...

    Raises
    ------
    InvalidParameterError
        If the file is not a scoreboard of this version.
    InputFileError
        If it is not a regular file of at most ``LABEL_LIMIT`` bytes of JSON.
    """
    doc = read_json_bounded(path, limit=LABEL_LIMIT, what="scoreboard baseline")
    if not isinstance(doc, dict) or doc.get("scoreboard") != SCOREBOARD_VERSION or "photos" not in doc:
        raise InvalidParameterError(f"{path}: not a {SCOREBOARD_VERSION} file (got "
                                    f"{doc.get('scoreboard') if isinstance(doc, dict) else type(doc).__name__!r})")
    return doc


def read_photos(path: str | Path) -> dict:
    """The per-photo counts of a scoreboard JSON (a baseline): ``photos[row][photo] -> counts``
    (:func:`read_scoreboard`)."""
    return read_scoreboard(path)["photos"]
