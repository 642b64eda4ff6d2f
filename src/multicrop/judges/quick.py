"""Quick runs: a one-family panel from a model name, and a short table of scores.

``multicrop judge photos/ -m MODEL [--base-url URL] [--api-key-env NAME]``
needs no panel file: :func:`model_panel` builds a panel of one
``openai-compatible`` family named after the model, with the protocol's
defaults.  :func:`score_summary` turns the tidy score table into one row per
image and family: the mean holistic score and the mean of each dimension.

Examples
--------
>>> p = model_panel("gpt-4o-mini", base_url="http://localhost:8000/v1", api_key_env="")
>>> [(f.name, f.backend, f.options["base_url"]) for f in p.families]
[('gpt-4o-mini', 'openai-compatible', 'http://localhost:8000/v1')]
"""

from __future__ import annotations

from .panel import Panel, parse_panel

__all__ = ["model_panel", "head_panel", "score_summary", "format_summary"]


def model_panel(model: str, *, base_url: str | None = None, api_key_env: str | None = None) -> Panel:
    """A panel of one ``openai-compatible`` family for ``model`` (the protocol's default repetitions).

    Raises
    ------
    InvalidParameterError
        For an empty model name or a bad option.
    """
    from ..errors import InvalidParameterError

    if not model.strip():
        raise InvalidParameterError("--model must name a model, got an empty string")
    options = {}
    if base_url is not None:
        options["base_url"] = base_url
    if api_key_env is not None:
        options["api_key_env"] = api_key_env
    return parse_panel({"families": [{"name": model, "backend": "openai-compatible", "model": model,
                                      "options": options}]}, source="--model")


def head_panel(head) -> Panel:
    """A panel of one ``embedding`` family scoring with the head file ``head`` (``multicrop judge --head``).

    The protocol's default repetitions (the judge is deterministic, so each
    prompt is one call); no dimension prompt when the head has no dimension
    target.

    Raises
    ------
    InvalidParameterError
        If ``head`` is not a readable head file.
    """
    from ..embeddings import EMBEDDING
    from ..schema import OVERALL
    from .heads import load_head

    h = load_head(head, embedding=EMBEDDING.id, dim=EMBEDDING.dim)  # checked whole before the first call
    doc = {"families": [{"name": "embedding", "backend": "embedding", "model": "efficientnet_lite0",
                         "options": {"head": str(head)}}]}
    if all(t.name == OVERALL for t in h.targets):
        doc["dimension_repetitions"] = 0
    return parse_panel(doc, source="--head")


def score_summary(table):
    """One row per image and family: ``holistic`` mean and the mean of each dimension.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy judge table (:func:`multicrop.judges.runner.scores_table`).

    Returns
    -------
    pandas.DataFrame
        Columns ``image``, ``family``, ``holistic``, then one per dimension
        present, in the table's order; NaN where no reply parsed.
    """
    import pandas as pd

    t = table.assign(column=table["dimension"].where(table["prompt_kind"] == "dimension", "holistic"))
    order = list(dict.fromkeys(["holistic", *t["column"]]))
    wide = t.pivot_table(index=["image", "family"], columns="column", values="score", aggfunc="mean",
                         dropna=False, sort=False)
    wide = wide.reindex(columns=[c for c in order if c in wide.columns])
    images = list(dict.fromkeys(table["image"]))
    wide = wide.reset_index()
    wide["image"] = pd.Categorical(wide["image"], categories=images, ordered=True)
    out = wide.sort_values(["image", "family"], kind="stable").reset_index(drop=True)
    out["image"] = out["image"].astype(str)
    out.columns.name = None
    return out


def format_summary(summary, *, max_rows: int = 50) -> str:
    """The summary as aligned text (scores to 2 decimals), at most ``max_rows`` rows."""
    if summary.empty:
        return "no scores"
    shown = summary.head(max_rows)
    cols = list(shown.columns)
    cells = [[str(v) if c in ("image", "family") else ("-" if v != v else f"{v:.2f}") for c, v in zip(cols, row)]
             for row in shown.itertuples(index=False)]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cols, widths)))]
    lines += ["  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))) for r in cells]
    if len(summary) > max_rows:
        lines.append(f"... {len(summary) - max_rows} more rows; write them all with -o scores.csv")
    return "\n".join(lines)
