"""Aesthetic judges: the frozen rubric, versioned prompts, backends, panels, runner.

Every image is scored holistically and on five rubric dimensions by each
family of a panel; every call is recorded in :mod:`multicrop.store`, and a
rerun performs only the missing calls.  See ``docs/judges.md``.

References
----------
Rubric-decomposed fusion of VLM aesthetic judges, arXiv:2609.27110 (protocol:
temperature 0.3, 3 repetitions per dimension prompt, 5 or 25 of the holistic
prompt, rubric SHA-256 logged with every call).
"""

from .backends import JUDGE_BACKENDS, JudgeBackend, create_backend, register_backend
from .panel import Family, Panel, default_panel, load_panel, parse_panel
from .prompts import DIMENSION_TEMPLATE, HOLISTIC_TEMPLATE, build_prompt, parse_reply
from .rubric import DIMENSION_IDS, OVERALL, Rubric, load_rubric
from .runner import TABLE_COLUMNS, RunConfig, RunSummary, judge_images, plan_calls, run_panel, scores_table, write_table
from .types import ImageRef, JudgeReply, JudgeRequest

__all__ = [
    "JUDGE_BACKENDS", "JudgeBackend", "create_backend", "register_backend",
    "Family", "Panel", "default_panel", "load_panel", "parse_panel",
    "DIMENSION_TEMPLATE", "HOLISTIC_TEMPLATE", "build_prompt", "parse_reply",
    "DIMENSION_IDS", "OVERALL", "Rubric", "load_rubric",
    "TABLE_COLUMNS", "RunConfig", "RunSummary", "judge_images", "plan_calls", "run_panel", "scores_table",
    "write_table", "ImageRef", "JudgeReply", "JudgeRequest",
]
