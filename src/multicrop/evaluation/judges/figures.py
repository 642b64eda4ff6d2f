"""Figures and the HTML page of the judge report (matplotlib, Agg, no pyplot state)."""

from __future__ import annotations

import html
import io
import json
import math

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .result import JudgesReport

__all__ = ["forest_png", "accuracy_vs_calls_png", "render_html"]

#: strip the matplotlib version from PNG metadata so bytes are reproducible
_PNG_METADATA = {"Software": None}


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata=_PNG_METADATA)
    return buf.getvalue()


def forest_png(report: JudgesReport) -> bytes:
    """Forest plot: Δρ of each arm against the best single member, 95 % CI."""
    c = report.comparisons
    c = c[(c["metric"] == "spearman") & (c["comparator"] == "best_single")] if len(c) else c
    n = max(1, len(c))
    fig = Figure(figsize=(6.4, 0.45 * n + 1.4))
    ax = fig.add_subplot()
    if len(c):
        ys = list(range(n))[::-1]
        ax.errorbar(c["delta"], ys, xerr=[c["delta"] - c["ci_low"], c["ci_high"] - c["delta"]],
                    fmt="o", color="black", ecolor="0.4", capsize=3)
        ax.set_yticks(ys, [str(a) for a in c["arm"]])
    ax.axvline(0.0, color="0.3", linestyle=":")
    best = report.summary.get("best_single", "")
    ax.set_xlabel(f"Δ Spearman ρ vs best single ({best}), {report.config.confidence:.0%} CI")
    ax.set_title("Fusion arms against the best single judge")
    fig.tight_layout()
    return _png(fig)


def accuracy_vs_calls_png(report: JudgesReport) -> bytes:
    """Spearman ρ of each arm against its API calls per image."""
    a = report.arms
    fig = Figure(figsize=(6.4, 4.4))
    ax = fig.add_subplot()
    colours = {"single": "tab:blue", "panel mean": "tab:orange", "fused": "tab:green"}
    for kind, sub in a.groupby("kind", sort=True):
        ax.scatter(sub["calls_per_image"], sub["rho"], label=kind, color=colours.get(kind, "0.5"))
        for _, r in sub.iterrows():
            ax.annotate(str(r["arm"]), (r["calls_per_image"], r["rho"]), fontsize=7,
                        xytext=(3, 3), textcoords="offset points")
    ceil = report.ceiling
    if ceil is not None and math.isfinite(ceil.ceiling) and ceil.ceiling > 0:
        ax.axhline(ceil.ceiling, color="0.3", linestyle="--", label="noise ceiling")
    ax.set_xlabel("API calls per image")
    ax.set_ylabel("Spearman ρ with human mean")
    ax.set_title("Accuracy against cost")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return _png(fig)


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;font-size:13px;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}p.note{color:#555;font-size:14px}.warn{color:#8a4b00}"""


def _table(df) -> str:
    if df is None or len(df) == 0:
        return "<p class='note'>(nothing to show)</p>"
    return df.to_html(index=False, float_format=lambda v: f"{v:.4f}", na_rep="", border=0, escape=True)


def render_html(report: JudgesReport) -> str:
    """The report page: summary, notes and tables inline; the two figures are
    linked PNG files (``forest.png``, ``accuracy_vs_calls.png``) in the same
    directory, so keep the page beside them."""
    s = report.summary
    ceil = report.ceiling
    head = s.get("headroom")
    lines = [
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        "<title>multicrop: judge panel report</title>", f"<style>{_CSS}</style></head><body>",
        "<h1>Is the judge panel worth its cost?</h1>",
        f"<p>{s['n_images']} images with human ratings and complete judge scores "
        f"({s['n_ratings_skipped']} rating rows skipped, {s['n_judge_rows_dropped']} unparsed judge replies dropped). "
        f"Families: {html.escape(', '.join(s['families']))}. Best single judge: <b>{html.escape(s['best_single'])}</b> "
        f"(ρ = {s['best_single_rho']:.3f}).</p>",
    ]
    if ceil is not None:
        reach = (f"the best judge reaches {head:.1%} of it" if head is not None and math.isfinite(head)
                 else "n/a (the ceiling is not positive, see the notes)")
        lines.append(f"<p>Noise ceiling √R = {ceil.ceiling:.3f} (split-half over {ceil.n_splits} splits, "
                     f"{ceil.mean_raters:.1f} raters per image); headroom: {reach}.</p>")
    else:
        lines.append("<p>Noise ceiling: n/a (no per-rater ratings, or too few raters per image); headroom: n/a.</p>")
    tr = s.get("transfer")
    if tr:
        lines.append(f"<p>Label transfer: {tr['n_transfer_images']} images of the second dataset; "
                     f"{tr['n_transfer_overlap']} images shared with this dataset were dropped from it.</p>")
    warns = s.get("warnings") or []
    if warns:
        lines.append("<h2 class='warn'>Warnings</h2>")
        lines.append("<ul class='warn'>" + "".join(f"<li><b>{html.escape(w['code'])}</b>: {html.escape(w['message'])}"
                                                   "</li>" for w in warns) + "</ul>")
    notes = s.get("notes") or {}
    if notes:
        lines.append("<h2>Notes</h2>")
        lines.append("<ul>" + "".join(f"<li><b>{html.escape(str(k))}</b>: {html.escape(str(v))}</li>"
                                      for k, v in sorted(notes.items())) + "</ul>")
    sections = [
        ("Arms", report.arms, "Spearman ρ and Kendall τb of each arm with the human mean on n images, each with "
         "its percentile bootstrap interval; fused arms are out of fold."),
        ("Comparisons", report.comparisons,
         "Δ = arm − comparator, paired bootstrap over images; p one-sided; p_max against the best member "
         "re-selected in every resample; p_bh Benjamini–Hochberg within each metric."),
    ]
    for title, df, note in sections:
        lines += [f"<h2>{title}</h2>", f"<p class='note'>{note}</p>", _table(df)]
    lines += ["<h2>Forest plot</h2>", "<img src='forest.png' alt='forest plot of delta rho'>",
              "<h2>Accuracy against API calls</h2>", "<img src='accuracy_vs_calls.png' alt='rho against calls'>"]
    more = [
        ("Single judges against the panel mean", report.members,
         "p_maxT: single-step max-T p-value over all members (for claims about the best of several)."),
        ("MTMM: matched cells", report.mtmm,
         "Spearman partial correlation with the matched human attribute, human overall partialled out; "
         "delta = dimension prompt − holistic prompt; p two-sided bootstrap (a reversal counts too), "
         "p_bh Benjamini–Hochberg across the cells."),
        ("MTMM matrix", report.mtmm_matrix, "Partial correlation of every prompt with every human attribute."),
        ("Robustness", report.robustness,
         "Fold partitions, precision at the top (expected value, boundary ties broken at random), label transfer."),
    ]
    for title, df, note in more:
        lines += [f"<h2>{title}</h2>", f"<p class='note'>{note}</p>", _table(df)]
    cfg = html.escape(json.dumps(report.config.to_dict(), sort_keys=True))
    lines += ["<h2>Configuration</h2>", f"<pre>{cfg}</pre>", "</body></html>", ""]
    return "\n".join(lines)
