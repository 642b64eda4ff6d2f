"""``multicrop bench synth``: build carousel-synth, scenes on the real Carousel label geometry.

``multicrop bench subjects DIR``: crop a folder of photos with human instance
outlines and count the crops that slice people and subjects, hold nothing,
or leave a prominent subject without a whole (or zoomed) crop.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from .options import PRESET_HELP, ProgressBar, k_option, ratios_option

__all__ = ["register", "synth", "subjects"]


def synth(
    out_dir: Path = typer.Option(..., "--out", "-o", help="Directory to write (Carousel layout)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Random seed; the same seed gives the same files."),
    labels: Path | None = typer.Option(
        None, "--labels", "-l",
        help="A directory of real Carousel label files (default: the Carousel labels shipped with multicrop)."),
    max_side: int = typer.Option(1600, "--max-side", min=64, help="Long side of the rendered images."),
    limit: int | None = typer.Option(None, "--limit", "-n", min=1, help="Only the first N label files."),
    hard: bool = typer.Option(False, "--hard", help="carousel-synth-hard: subjects off-centre in their boxes, "
                              "partly hiding each other, on sharp backgrounds."),
    backgrounds: Path | None = typer.Option(
        None, "--backgrounds", "-b", help="With --hard: a directory of JPEG/PNG/WebP photos to use as sharp "
        "backgrounds (default: the shipped photos, unblurred); benchmarks/fetch_backgrounds.sh DIR fetches 23 free "
        "ones from Debian packages."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar on stderr."),
) -> None:
    """Render carousel-synth: one image per real label file, the labelled boxes as ground truth."""
    from ..datasets.carousel import load_carousel
    from ..datasets.carousel_labels import label_names
    from ..datasets.synth import make_synth

    names = None
    total = None
    if limit is not None:
        names = list(label_names() if labels is None
                     else (i.name for i in load_carousel(labels, require_images=False).items))[:limit]
        total = len(names)
    with ProgressBar("rendering", enabled=progress, unit="images", failures=False) as bar:
        bar.start(total)
        summary = make_synth(labels, out_dir, seed=seed, max_side=max_side, names=names,
                             progress=lambda name: bar.advance(), hard=hard, backgrounds=backgrounds)
    if as_json:
        typer.echo(json.dumps(summary.to_dict(), indent=2))
    else:
        variant = "carousel-synth-hard" if hard else "carousel-synth"
        typer.echo(f"{variant}: {summary.n_images} images, {summary.n_boxes} boxes, {summary.n_hard_failures} hard "
                   f"failures written to {summary.out_dir} (seed {seed})")


def subjects(
    source: Path = typer.Argument(..., help="A folder with images/ and labels/ (YOLO segmentation), a folder "
                                            "with one instances_*.json, or a COCO instances JSON file."),
    strategy: list[str] = typer.Option(
        [], "--strategy", "-s", help="Strategy to measure (repeatable; default: direct and partition)."),
    k: list[str] = typer.Option(
        [], "--k", "-k", help="k per photo, or auto (repeatable; each strategy runs at each k it accepts; "
                              "default: auto and 2)."),
    peer: list[str] = typer.Option(
        [], "--peer", help="Also a single-crop peer, one crop per photo: smartcrop or vips (repeatable; "
                           "needs the peers extra)."),
    ratio: str | None = typer.Option(None, "--ratio", "-r", help="Ratios offered, e.g. 2:3,3:2 (default)."),
    preset: str | None = typer.Option(None, "--preset", "-p", help=PRESET_HELP),
    all_photos: bool = typer.Option(
        False, "--all-photos", help="Crop and count every photo (default: only photos with at least two objects of "
                                    ">= 3 % of the frame)."),
    limit: int | None = typer.Option(None, "--limit", "-n", min=1, help="Only the first N photos counted."),
    out_dir: Path | None = typer.Option(
        None, "--out", "-o", help="Write report.md, summary.json, photos.csv and worst_<method>.png here."),
    worst: int = typer.Option(12, "--worst", min=0, help="Photos in each worst-photo grid (0: none)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar on stderr."),
) -> None:
    """Measure crops against human outlines: person-cut, subject-cut, empty, covered, featured."""
    from ..datasets.outlines import load_outlines
    from ..evaluation.subjects import methods_for, run_subjects
    from ..evaluation.subjects.report import summary_dict, summary_table, write_report
    from ..ratios import DEFAULT_RATIOS

    # A value given twice (-k 2 -k 2, -s direct -s direct) is measured once, where it first appears.
    ks = list(dict.fromkeys(k_option(v, "-k") for v in k)) or ["auto", 2]
    methods = methods_for(strategies=list(dict.fromkeys(strategy)) or ["direct", "partition"], ks=ks,
                          peers=list(dict.fromkeys(peer)), ratios=ratios_option(ratio, preset) or DEFAULT_RATIOS)
    outlines = load_outlines(source)
    total = len(outlines) if limit is None else None
    with ProgressBar("cropping", enabled=progress, failures=False) as bar:
        bar.start(total)
        run = run_subjects(outlines, methods, all_photos=all_photos, limit=limit,
                           progress=lambda photo_id: bar.advance())
    written = write_report(run, out_dir, worst=worst) if out_dir is not None else {}
    if as_json:
        typer.echo(json.dumps(summary_dict(run), indent=2, sort_keys=True))
    else:
        typer.echo(summary_table(run))
        for kind, path in written.items():
            typer.echo(f"wrote {path}")
    for r in run.results:
        if r.failure:
            typer.echo(f"multicrop: {r.photo}: {r.method}: {r.failure}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``synth`` and ``subjects`` to the ``bench`` group ``app``."""
    app.command("synth")(synth)
    app.command("subjects")(subjects)
