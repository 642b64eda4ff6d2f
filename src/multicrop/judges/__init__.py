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

# Names are imported on first use (PEP 562) so that the dependency-free
# :mod:`multicrop.judges.schema` can be imported by multicrop.fusion without
# loading backends, the store or image decoding.
_EXPORTS = {
    "backends": ("JUDGE_BACKENDS", "JudgeBackend", "create_backend", "register_backend"),
    "panel": ("Family", "Panel", "default_panel", "load_panel", "parse_panel"),
    "prompts": ("DIMENSION_TEMPLATE", "HOLISTIC_TEMPLATE", "build_prompt", "parse_reply"),
    "rubric": ("Rubric", "load_rubric"),
    "schema": ("DIMENSION_IDS", "OVERALL", "TABLE_COLUMNS"),
    "runner": ("RunConfig", "RunSummary", "judge_images", "plan_calls", "run_panel", "scores_table", "write_table"),
    "types": ("ImageRef", "JudgeReply", "JudgeRequest"),
}
_WHERE = {name: mod for mod, names in _EXPORTS.items() for name in names}

__all__ = [name for names in _EXPORTS.values() for name in names]


def __getattr__(name: str):
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
