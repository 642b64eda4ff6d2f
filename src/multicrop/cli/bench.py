"""``multicrop bench synth``: build carousel-synth, scenes on the real Carousel label geometry."""

from __future__ import annotations

import json
from pathlib import Path

import typer

__all__ = ["register", "synth"]


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
    from rich.console import Console
    from rich.progress import Progress

    from ..datasets.carousel import load_carousel
    from ..datasets.carousel_labels import label_names
    from ..datasets.synth import make_synth

    names = None
    total = None
    if limit is not None:
        names = list(label_names() if labels is None
                     else (i.name for i in load_carousel(labels, require_images=False).items))[:limit]
        total = len(names)
    with Progress(console=Console(stderr=True), disable=not progress) as bar:
        task = bar.add_task("rendering", total=total)
        summary = make_synth(labels, out_dir, seed=seed, max_side=max_side, names=names,
                             progress=lambda name: bar.advance(task), hard=hard, backgrounds=backgrounds)
    if as_json:
        typer.echo(json.dumps(summary.to_dict(), indent=2))
    else:
        variant = "carousel-synth-hard" if hard else "carousel-synth"
        typer.echo(f"{variant}: {summary.n_images} images, {summary.n_boxes} boxes, {summary.n_hard_failures} hard "
                   f"failures written to {summary.out_dir} (seed {seed})")


def register(app: typer.Typer) -> None:
    """Add ``synth`` to the ``bench`` group ``app``."""
    app.command("synth")(synth)
