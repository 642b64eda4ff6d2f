"""``multicrop eval carousel``: run a method on a Carousel directory, score it with kIoU."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer

from ..ratios import DEFAULT_RATIOS

__all__ = ["register", "carousel"]


def carousel(
    dataset_dir: Path = typer.Argument(..., help="Carousel directory (dataset/, hard_failures.txt)."),
    method: str = typer.Option("partition", "--method", "-m", help="Method: partition, topk, smartcrop, vips, slices, ..."),
    subset: str = typer.Option("all", "--subset", "-s", help="all, ok (not in hard_failures.txt) or failures."),
    out_dir: Path = typer.Option(..., "--out", "-o", help="Report directory (results.jsonl makes reruns resume)."),
    workers: int = typer.Option(1, "--workers", "-j", min=1, help="Parallel worker processes."),
    ratio: str = typer.Option(DEFAULT_RATIOS, "--ratio", "-r", help="Ratios offered to the method."),
    limit: int | None = typer.Option(None, "--limit", "-n", min=1, help="Only the first N images of the subset."),
    thumbnails: bool = typer.Option(True, "--thumbnails/--no-thumbnails", help="Draw boxes on thumbnails for the HTML page."),
    as_json: bool = typer.Option(False, "--json", help="Print the table as JSON instead of a table."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar on stderr."),
    blobs: bool = typer.Option(True, "--blob-cut/--no-blob-cut",
                               help="Measure the share of crops cutting a salient blob (U^2-Netp, cached in OUT/saliency)."),
) -> None:
    """Evaluate a multi-crop method on Carousel: kIoU@0.5:0.95, kIoU@0.5, k, orientation and blob-cut share."""
    from rich.console import Console
    from rich.table import Table

    from ..evaluation.carousel.evaluate import evaluate_carousel
    from ..evaluation.carousel.report import DISPLAY_COLUMNS, format_rows, write_report
    from ..ratios import parse_ratios
    from .progress import ProgressBar

    ratios = parse_ratios(ratio)
    err = Console(stderr=True)
    bar = ProgressBar(f"{method} on {subset}", enabled=progress, unit="images", failures=False)

    def on_start(total: int, resumed: int) -> None:
        bar.start(total, done=resumed)
        if resumed:
            bar.echo(f"resuming: {resumed} of {total} images already in {out_dir / 'results.jsonl'}")

    t0 = time.perf_counter()
    with bar:
        ev = evaluate_carousel(
            dataset_dir, method, subset=subset, out_dir=out_dir, workers=workers, ratios=ratios,
            limit=limit, progress=lambda r: bar.advance(), on_start=on_start, blobs=blobs,
        )
    wall = time.perf_counter() - t0
    paths = write_report(ev, out_dir, thumbnails=thumbnails)
    if ev.dataset.skipped:
        err.print(ev.dataset.summary())
    if as_json:
        typer.echo(json.dumps({**ev.to_dict(), "wall_seconds": wall,
                               "files": {k: str(v) for k, v in paths.items()}}, indent=2))
        return
    table = Table(title=f"Carousel kIoU - {ev.method} ({len(ev.results)} images, {wall:.1f} s wall, "
                        f"{ev.workers} worker(s) x {ev.threads} thread(s))")
    for col in DISPLAY_COLUMNS:
        table.add_column(col, justify="left" if col in ("method", "subset") else "right")
    for row in format_rows(ev.rows):
        table.add_row(*row)
    out = Console()
    if not out.is_terminal:  # a file or pipe has no width to fit: keep the ten columns on one line each
        out = Console(width=max(out.width, 160))
    out.print(table)
    errors = sorted((r.prediction.name, r.prediction.error) for r in ev.results if r.prediction.error)
    if errors:  # they count with no crop (kIoU 0): say so, never only in per_image.csv
        first = " (the first 5; per_image.csv lists all)" if len(errors) > 5 else ""
        typer.echo(f"{len(errors)} of {len(ev.results)} images ended in an error and count with no crop (kIoU 0); "
                   f"a rerun tries them again{first}:", err=True)
        for name, why in errors[:5]:
            typer.echo(f"  {name}: {why}", err=True)
    typer.echo(f"report: {paths['html']}")


def register(app: typer.Typer) -> None:
    """Add ``carousel`` to the ``eval`` group ``app``."""
    app.command("carousel")(carousel)
