"""Aesthetic judges: the frozen rubric, versioned prompts, backends, panels, runner.

Every image is scored holistically and on five rubric dimensions by each
family of a panel; every call is recorded in :mod:`multicrop.judges.store`, and a
rerun performs only the missing calls.  See ``docs/judges.md``.

References
----------
Rubric-decomposed fusion of VLM aesthetic judges, arXiv:2609.27110 (protocol:
temperature 0.3, 3 repetitions per dimension prompt, 5 or 25 of the holistic
prompt, rubric SHA-256 logged with every call).
"""

import lazy_loader

_EXPORTS = {
    "backends": ("JUDGE_BACKENDS", "JudgeBackend"),
    "panel": ("Family", "Panel", "default_panel", "load_panel", "parse_panel"),
    "prompts": ("DIMENSION_TEMPLATE", "HOLISTIC_TEMPLATE", "build_prompt", "parse_reply"),
    "rubric": ("Rubric", "load_rubric"),
    "config": ("RunConfig",),
    "runner": ("RunSummary", "judge_images", "plan_calls", "run_panel", "scores_table"),
    "types": ("ImageRef", "JudgeReply", "JudgeRequest"),
}
# Names are imported from their submodule on first use (lazy_loader, Scientific
# Python SPEC 1): importing one submodule does not load backends, the store or
# image decoding.
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={m: list(n) for m, n in _EXPORTS.items()})
