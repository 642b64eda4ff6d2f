"""The plan of a run: every call of a panel over images, each with its key.

Every call has a key: the prefix-named SHA-256 of the canonical JSON of the
backend (and its version and reply-changing options), model, prompt template
and version, dimension, rubric SHA-256, image SHA-256, temperature and
repetition index.  The family name and the image label are not part of it,
so renaming either reuses the recorded calls.

Two capability flags of a family's backend change its keys (generic code, no
names): a ``deterministic`` backend's repetitions of one prompt all have the
key of repetition 0, so the call is made once and every repetition's row of
the table shows its score; a backend that does not ``read_prompt`` has the
prompt kind and score scale in its keys instead of the template reference
and the rubric hash, so editing a prompt or the rubric text re-runs nothing.

Examples
--------
>>> import numpy as np
>>> from multicrop.judges.panel import default_panel
>>> from multicrop.judges.types import ImageRef
>>> panel = default_panel()
>>> backends = {f.name: f.create() for f in panel.families}
>>> plan = plan_calls([ImageRef(np.zeros((8, 8, 3), np.uint8))], panel, backends)
>>> len(plan), plan[0].prompt.kind, plan[5].prompt.dimension
(20, 'holistic', 'technical_quality')
>>> plan[0].key.startswith("sha256:"), len({c.key for c in plan})  # measured is deterministic
(True, 6)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..hashing import canonical_json, hash_text
from .backends import JUDGE_BACKENDS, JudgeBackend
from .keys import CALL_KEY_OPEN_FIELDS, KeyTemplate
from .panel import MAX_REPETITIONS, Family, Panel, check_distinct_families, check_repetitions
from .prompts import DIMENSION_TEMPLATE, HOLISTIC_TEMPLATE, Prompt, build_prompt
from .rubric import Rubric, load_rubric
from .types import ImageRef

__all__ = ["MAX_REPETITIONS", "PlannedCall", "Question", "check_repetitions", "plan_calls", "panel_questions"]



@dataclass(frozen=True)
class PlannedCall:
    """One call of the plan (``rubric_sha256`` is the one inside ``key_json``)."""

    key: str
    key_json: str
    family: Family
    image: ImageRef
    prompt: Prompt
    repetition: int
    rubric_sha256: str


@dataclass(frozen=True)
class Question:
    """One prompt put to one family, ``repetitions`` times per image.

    ``key`` is the template of its call keys, open in the image hash and the
    repetition index (:data:`~multicrop.judges.keys.CALL_KEY_OPEN_FIELDS`).
    """

    family: Family
    prompt: Prompt
    repetitions: int
    key: KeyTemplate
    collapse: bool = False  # deterministic backend: every repetition has the key of repetition 0


def panel_questions(panel: Panel, identities: dict[str, dict[str, Any]], rubric: Rubric,
                    backends: dict[str, Any] | None = None) -> list[Question]:
    """The questions of ``panel``: for each family, the holistic prompt, then each dimension prompt.

    ``identities`` maps family names to their backend identities
    (:meth:`JudgeBackend.identity`); a prompt asked zero times is left out.
    The capability flags (``deterministic``, ``reads_prompt``) are read from
    ``backends`` (family name -> backend or backend class) where given, else
    from the registered class of each identity's backend.
    """
    prompts = [build_prompt(HOLISTIC_TEMPLATE, rubric)] * (panel.holistic_repetitions > 0)
    if panel.dimension_repetitions > 0:
        prompts += [build_prompt(DIMENSION_TEMPLATE, rubric, d) for d in rubric.dimension_ids]
    questions = []
    for family in panel.families:
        ident = identities[family.name]
        cls = (backends or {}).get(family.name) or JUDGE_BACKENDS.get(ident["backend"])
        for prompt in prompts:
            if cls.reads_prompt:
                asked = {"template": prompt.template.ref, "rubric_sha256": rubric.sha256}
            else:
                asked = {"prompt_kind": prompt.kind, "scale": list(prompt.scale)}
            fixed = {**ident, **asked, "dimension": prompt.dimension, "temperature": panel.temperature}
            repetitions = (panel.holistic_repetitions if prompt.kind == HOLISTIC_TEMPLATE.id
                           else panel.dimension_repetitions)
            questions.append(Question(family, prompt, repetitions,
                                      KeyTemplate.build(fixed, open_fields=CALL_KEY_OPEN_FIELDS),
                                      collapse=cls.deterministic))
    return questions


def plan_calls(images: Sequence[ImageRef], panel: Panel, backends: dict[str, JudgeBackend],
               rubric: Rubric | None = None) -> list[PlannedCall]:
    """Every call of ``panel`` over ``images``, image-major, with its key.

    ``backends`` maps family names to created backends (their versions and
    reply-changing options enter the keys).

    Raises
    ------
    InvalidParameterError
        Two families would make the same calls (same backend, version, model
        and key options): their records would collide in the store; or the
        panel asks a prompt more than :data:`MAX_REPETITIONS` times.
    """
    for name in ("holistic_repetitions", "dimension_repetitions"):
        check_repetitions(getattr(panel, name), name=f"panel: {name}")
    rubric = rubric or load_rubric()
    identities = {f.name: backends[f.name].identity(backends[f.name].model_id, backends[f.name].options)
                  for f in panel.families}
    check_distinct_families(identities)
    return _calls(images, panel_questions(panel, identities, rubric, backends), rubric.sha256)


def _calls(images: Sequence[ImageRef], questions: list[Question], rubric_sha256: str) -> list[PlannedCall]:
    # A resume plans every call of a run (300,000 for a large one) before it
    # reads the store, so the keys are rendered inline from each question's
    # key pieces: before the image hash, before the repetition, the tail
    # (CALL_KEY_OPEN_FIELDS order) -- what KeyTemplate.render joins.
    longest = max((q.repetitions for q in questions), default=0)
    repetition_json = [canonical_json(r) for r in range(longest)]
    plan: list[PlannedCall] = []
    append = plan.append
    for image in images:
        image_json = canonical_json(image.sha256)
        for q in questions:
            before_image, before_repetition, tail = q.key.pieces
            head = before_image + image_json + before_repetition
            for r in range(q.repetitions):
                key_json = head + repetition_json[0 if q.collapse else r] + tail
                append(PlannedCall(hash_text(key_json), key_json, q.family, image, q.prompt, r, rubric_sha256))
    return plan
