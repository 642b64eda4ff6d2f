"""Prompt templates (versioned) and lenient parsing of judges' replies.

Two templates: a holistic prompt asking for one overall score on 1-10, and a
dimension prompt that quotes one rubric dimension with its five tiers and
asks for a score on the rubric's 1-5 scale.  Both ask for a JSON object
``{"score": <number>, "reason": "<short>"}``.  The template id and version
are part of every call key; bump ``version`` whenever the text changes.

Examples
--------
>>> from multicrop.judges.rubric import load_rubric
>>> p = build_prompt(DIMENSION_TEMPLATE, load_rubric(), "composition")
>>> "Composition" in p.text and '"score"' in p.text, p.scale
(True, (1, 5))
>>> parse_reply('Sure! ```json\\n{"score": 4, "reason": "balanced"}\\n```', scale=(1, 5))
ParsedReply(score=4.0, reason='balanced', error=None)
>>> parse_reply('{"score": "high"}', scale=(1, 5)).error
"field 'score' is not a number: 'high'"
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from .rubric import Rubric
from ..schema import DIMENSION, HOLISTIC, OVERALL

__all__ = [
    "PromptTemplate", "Prompt", "ParsedReply", "HOLISTIC_TEMPLATE", "DIMENSION_TEMPLATE",
    "HOLISTIC_SCALE", "build_prompt", "parse_reply", "reply_schema", "typed_score",
]

HOLISTIC_SCALE = (1, 10)


@dataclass(frozen=True)
class PromptTemplate:
    """A versioned prompt text with ``{placeholders}``.

    Attributes
    ----------
    id : str
        ``"holistic"`` or ``"dimension"`` (also the ``prompt_kind`` of the rows).
    version : str
        Part of every call key; bump when ``text`` changes.
    text : str
    """

    id: str
    version: str
    text: str

    @property
    def ref(self) -> str:
        """``"id@version"`` as stored in call records."""
        return f"{self.id}@{self.version}"


@dataclass(frozen=True)
class Prompt:
    """A rendered prompt for one (image-independent) question."""

    template: PromptTemplate
    dimension: str
    text: str
    scale: tuple[int, int]

    @property
    def kind(self) -> str:
        return self.template.id


_JSON_INSTRUCTION = (
    'Answer with a JSON object only, exactly of the form {{"score": <number>, "reason": "<one short sentence>"}}, '
    "where score is a number from {lo} (lowest) to {hi} (highest)."
)

HOLISTIC_TEMPLATE = PromptTemplate(
    id=HOLISTIC,
    version="1",
    text=(
        "You are rating the aesthetic quality of the attached photograph as a whole, as an experienced "
        "photo editor would when choosing pictures for publication. Consider everything you can see.\n\n"
        + _JSON_INSTRUCTION
    ),
)

DIMENSION_TEMPLATE = PromptTemplate(
    id=DIMENSION,
    version="1",
    text=(
        "You are rating one aspect of the attached photograph: {name}.\n"
        "{question}\n\n"
        "Use this rubric. Pick the tier whose description best matches what you can see in the picture; "
        "judge only this aspect and ignore the others.\n"
        "{tiers}\n\n" + _JSON_INSTRUCTION
    ),
)


def build_prompt(template: PromptTemplate, rubric: Rubric, dimension: str = OVERALL) -> Prompt:
    """Render ``template`` for ``dimension`` (``"overall"`` for the holistic one).

    Raises
    ------
    UnknownNameError
        If ``dimension`` is not a rubric dimension (dimension template).
    """
    if template.id == HOLISTIC_TEMPLATE.id:
        lo, hi = HOLISTIC_SCALE
        return Prompt(template, OVERALL, template.text.format(lo=lo, hi=hi), (lo, hi))
    d = rubric.dimension(dimension)
    lo, hi = rubric.scale_min, rubric.scale_max
    tiers = "\n".join(f"{lo + i}: {t}" for i, t in enumerate(d.tiers))
    text = template.text.format(name=d.name, question=d.question, tiers=tiers, lo=lo, hi=hi)
    return Prompt(template, d.id, text, (lo, hi))


def reply_schema(scale: tuple[int, int]) -> dict:
    """JSON schema of a reply, for backends with structured output."""
    return {
        "type": "object",
        "properties": {
            "score": {"type": "number", "minimum": scale[0], "maximum": scale[1]},
            "reason": {"type": "string"},
        },
        "required": ["score", "reason"],
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class ParsedReply:
    """Result of parsing a reply: a score, or an error recorded as data.

    ``score`` is NaN exactly when ``error`` is not None.
    """

    score: float
    reason: str | None
    error: str | None


_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_SCORE_FALLBACK = re.compile(r'"?score"?\s*[:=]\s*"?(-?\d+(?:\.\d+)?)')


def _fail(msg: str) -> ParsedReply:
    return ParsedReply(math.nan, None, msg)


def parse_reply(text: str | None, *, scale: tuple[int, int]) -> ParsedReply:
    """Parse a judge's reply leniently; never raises.

    Accepts a bare JSON object, one wrapped in prose or a Markdown fence, and
    numeric strings (``"7"``).  As a last resort reads ``score: 7`` from
    malformed JSON.  Anything else, or a score outside ``scale``, gives a
    NaN score with the reason in ``error``.
    """
    if text is None or not str(text).strip():
        return _fail("empty reply")
    text = str(text)
    obj = None
    m = _OBJECT.search(text)
    if m:
        try:
            obj = json.loads(m.group(0))
        except (ValueError, RecursionError):  # RecursionError: JSON nested thousands deep
            obj = None
    if not isinstance(obj, dict):
        fb = _SCORE_FALLBACK.search(text)
        if not fb:
            return _fail(f"no JSON object with a score in reply: {text[:80]!r}")
        obj = {"score": fb.group(1)}
    if "score" not in obj:
        return _fail(f"reply has no field 'score': {sorted(obj)}")
    raw = obj["score"]
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        return _fail(f"field 'score' is not a number: {raw!r}")
    try:
        score = float(raw)
    except ValueError:
        return _fail(f"field 'score' is not a number: {raw!r}")
    if not math.isfinite(score) or not scale[0] <= score <= scale[1]:
        return _fail(f"score {score!r} outside the scale {scale[0]}..{scale[1]}")
    reason = obj.get("reason")
    return ParsedReply(score, reason if isinstance(reason, str) else None, None)


def typed_score(score: float, reason: str | None, *, scale: tuple[int, int]) -> ParsedReply:
    """A typed score from a backend that computes it (no text to parse); never raises.

    A non-finite score, or one outside ``scale``, is recorded as a parse
    error, like a chat model's reply out of range.
    """
    try:
        value = float(score)
    except (TypeError, ValueError):
        return _fail(f"typed score is not a number: {score!r}")
    if not math.isfinite(value) or not scale[0] <= value <= scale[1]:
        return _fail(f"score {value!r} outside the scale {scale[0]}..{scale[1]}")
    return ParsedReply(value, reason, None)
