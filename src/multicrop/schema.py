"""The judge-table schema: the one definition shared by the judges and fusion.

Dependency-free on purpose (standard library only), so that
:mod:`multicrop.fusion` and :mod:`multicrop.stats` can import it without
pulling in the backends, the store or image decoding.

The tidy judge table has one row per call:

=============  ==============================================================
column         meaning
=============  ==============================================================
image          image id (string)
family         model family that produced the score
prompt_kind    :data:`HOLISTIC` or :data:`DIMENSION`
dimension      one of :data:`DIMENSION_IDS`, or :data:`OVERALL` for holistic rows
repetition     integer index of the repeated call
score          float; NaN for a reply that could not be parsed
=============  ==============================================================

Examples
--------
>>> TABLE_COLUMNS[-1], CALL_KEY_COLUMNS[-1], PROMPT_KINDS
('score', 'repetition', ('holistic', 'dimension'))
"""

from __future__ import annotations

__all__ = ["TABLE_COLUMNS", "CALL_KEY_COLUMNS", "HOLISTIC", "DIMENSION", "PROMPT_KINDS", "OVERALL",
           "DIMENSION_IDS"]

#: Columns of the tidy judge table, in order.
TABLE_COLUMNS = ("image", "family", "prompt_kind", "dimension", "repetition", "score")
#: Columns that identify one call (a table has at most one row per combination).
CALL_KEY_COLUMNS = TABLE_COLUMNS[:-1]
#: ``prompt_kind`` of the one-overall-score prompt.
HOLISTIC = "holistic"
#: ``prompt_kind`` of the per-dimension prompts.
DIMENSION = "dimension"
PROMPT_KINDS = (HOLISTIC, DIMENSION)
#: The ``dimension`` value of holistic rows.
OVERALL = "overall"
#: The five rubric dimensions, in order.
DIMENSION_IDS = ("technical_quality", "composition", "colour_and_tone", "distinctiveness", "emotional_impact")
