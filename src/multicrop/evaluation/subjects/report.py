"""What a subjects run writes: a table (text, markdown, JSON), a per-photo CSV, a grid of the worst photos.

Every share is printed with its counts (``18.5 % (17 / 92)``), so a
reader sees how many crops or subjects it rests on.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from ...serialize import to_data
from .metrics import SUBJECTS_METRIC_VERSION
from .run import SubjectsRun

__all__ = ["COLUMNS", "summary_rows", "summary_table", "summary_dict", "write_csv", "write_report"]

#: Table columns: (summary attribute, heading).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("person_cut", "person-cut"),
    ("subject_cut", "subject-cut"),
    ("empty", "empty"),
    ("portrait", "portrait"),
    ("covered", "covered"),
    ("featured", "featured"),
)


def summary_rows(run: SubjectsRun) -> list[list[str]]:
    """One row of strings per method: name, photos, crops per photo, then the shares."""
    rows = []
    for m in run.methods:
        s = run.summary(m.name)
        photos = f"{s.photos}" + (f" (+{s.failed} failed)" if s.failed else "")
        cpp = "-" if not s.photos else f"{s.crops_per_photo:.2f}"
        rows.append([m.name, photos, cpp] + [str(getattr(s, attr)) for attr, _ in COLUMNS])
    return rows


def _scope(run: SubjectsRun) -> str:
    r = run.rules
    if run.all_photos:
        return f"all {len(run.photos)} photos"
    return (f"{len(run.qualifying)} photos with >= {r.photo_min_objects} objects of >= "
            f"{100 * r.photo_object_min:g} % of the frame")


def summary_table(run: SubjectsRun, *, markdown: bool = False) -> str:
    """The summary as an aligned text table, or a markdown table."""
    head = ["method", "photos", "crops/photo"] + [h for _, h in COLUMNS]
    rows = summary_rows(run)
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [f"{run.dataset}: {_scope(run)}", fmt.format(*head)] + [fmt.format(*r) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def summary_dict(run: SubjectsRun) -> dict:
    """JSON-ready summary: dataset, rules, scope and each method's tallies and settings."""
    return {
        "metric_version": SUBJECTS_METRIC_VERSION,
        "dataset": run.dataset,
        "format": run.format,
        "all_photos": run.all_photos,
        "photos_counted": len(run.photos) if run.all_photos else len(run.qualifying),
        "rules": run.rules.to_dict(),
        "methods": [{**m.to_dict(), "summary": run.summary(m.name).to_dict()} for m in run.methods],
    }


def write_csv(run: SubjectsRun, path: str | Path) -> Path:
    """One row per photo and method: counts, failure, seconds and the crop boxes (JSON)."""
    path = Path(path)
    keep = set(run.qualifying)
    fields = ["photo", "method", "qualifies", "crops", "person_cut", "subject_cut", "empty", "portrait",
              "prominent", "covered", "featured", "failure", "seconds", "boxes"]
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(fields)
        for r in run.results:
            m = r.measures
            counts = ([m.n_crops, m.person_cut, m.subject_cut, m.empty, m.portrait, m.n_prominent, m.covered,
                       m.featured] if m is not None else [""] * 8)
            w.writerow([r.photo, r.method, int(r.photo in keep), *counts, r.failure or "", f"{r.seconds:.3f}",
                        json.dumps(to_data(list(r.boxes)), separators=(",", ":"))])
    return path


def write_report(run: SubjectsRun, out_dir: str | Path, *, worst: int = 12) -> dict[str, Path]:
    """Write ``summary.json``, ``report.md``, ``photos.csv`` and a worst-photo grid per method.

    Returns the paths written, by kind.
    """
    from .preview import worst_grid

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    paths["csv"] = write_csv(run, out / "photos.csv")  # first: the crops themselves
    paths["json"] = out / "summary.json"
    paths["json"].write_text(json.dumps(summary_dict(run), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    grids = []
    if worst > 0:
        for m in run.methods:
            p = worst_grid(run, m.name, out / f"worst_{_slug(m.name)}.png", n=worst)
            if p is not None:
                paths[f"worst:{m.name}"] = p
                grids.append((m.name, p.name))
    r = run.rules
    lines = [
        "# Subjects benchmark",
        "",
        f"Dataset: `{run.dataset}` ({run.format}); counted: {_scope(run)}.",
        "",
        summary_table(run, markdown=True),
        "",
        f"Shares of crops (person-cut, subject-cut, empty) and of prominent subjects of the cut classes "
        f"(covered, featured). A crop slices an object holding {100 * r.slice_min:g}-{100 * r.slice_max:g} % of "
        f"it; subjects cover {100 * r.subject_min:g}-{100 * r.subject_max:g} % of the frame, prominent ones "
        f">= {100 * r.prominent_min:g} %; whole = >= {100 * r.whole:g} % held; featured = whole in a crop of "
        f"<= {100 * r.zoom_max:g} % of the frame; empty = holds >= {100 * r.hold_min:g} % of no object over "
        f"{100 * r.object_min:g} % of the frame. Rules: `summary.json`; per photo: `photos.csv`.",
    ]
    if grids:
        lines += ["", "## Worst photos", ""] + [f"- {name}: `{file}`" for name, file in grids]
    paths["markdown"] = out / "report.md"
    paths["markdown"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name).strip("-")
