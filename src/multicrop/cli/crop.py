"""``multicrop crop``, ``multicrop saliency list`` and ``multicrop example``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer

from ..errors import InvalidParameterError, MulticropError

__all__ = ["register"]

saliency_app = typer.Typer(help="Saliency backends.", no_args_is_help=True)


def _problem(path: Path, exc: Exception) -> str:
    """The error text without a leading ``<path>: `` (the CLI adds its own)."""
    msg = str(exc)
    prefix = f"{path}: "
    return msg[len(prefix):] if msg.startswith(prefix) else msg


def _check_out_dir(out_dir: Path) -> None:
    """Create ``--out`` (once, before the batch) or say in one line why it cannot be used."""
    if out_dir.exists() and not out_dir.is_dir():
        raise InvalidParameterError(f"--out {out_dir}: exists and is not a directory")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidParameterError(f"--out {out_dir}: cannot create the directory ({exc.strerror or exc})") from None
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise InvalidParameterError(f"--out {out_dir}: the directory is not writable")


def crop(
    photos: list[Path] = typer.Argument(..., help="Photos to crop (JPEG, PNG, WebP, TIFF, HEIC...)."),
    out_dir: Path = typer.Option(Path("."), "--out", "-o", help="Directory for crops, JSON and preview."),
    k: int | None = typer.Option(None, "--k", "-k", min=1, help="Crops per photo (default 2)."),
    ratio: str | None = typer.Option(None, "--ratio", "-r", help="Ratio or comma list, e.g. 2:3,3:2."),
    preset: str | None = typer.Option(None, "--preset", "-p", help="Ratio preset: instagram, carousel, ..."),
    strategy: str | None = typer.Option(None, "--strategy", "-s", help="partition (default) or topk."),
    saliency: str | None = typer.Option(None, "--saliency", help="Saliency backend (see `saliency list`)."),
    faces: bool | None = typer.Option(None, "--faces/--no-faces", help="Protect faces (YuNet)."),
    width: list[int] = typer.Option([], "--width", "-w", min=1, help="Also write copies this wide (repeatable)."),
    fmt: str | None = typer.Option(None, "--format", "-f", help="Crop format: jpg, png, webp, tif (default: source's)."),
    max_pixels: int | None = typer.Option(
        None, "--max-pixels", min=1, help="Refuse larger images, in pixels (default 300000000: 300 MP)."
    ),
    preview: bool = typer.Option(True, "--preview/--no-preview", help="Write <stem>_preview.png."),
    strict: bool = typer.Option(False, "--strict", help="Treat a partition failure as an error (no output)."),
    config_file: Path | None = typer.Option(None, "--config", "-c", help="CropConfig JSON (options override it)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON record per photo on stdout."),
) -> None:
    """Cut k distinct full-resolution crops from each photo."""
    from ..crop.config import CropConfig
    from ..geometry import parse_ratios
    from ..crop.outputs import format_suffix, unique_stems, write_outputs
    from ..crop.pipeline import crop_photo

    if config_file is not None:
        try:
            base = CropConfig.from_dict(json.loads(config_file.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as exc:
            raise InvalidParameterError(f"{config_file}: cannot read config ({exc})") from None
    else:
        base = CropConfig()
    changes: dict = {}
    if ratio and preset:
        raise InvalidParameterError("give --ratio or --preset, not both")
    if ratio or preset:
        changes["ratios"] = parse_ratios(ratio or preset)
    for name, value in (("k", k), ("strategy", strategy), ("saliency", saliency), ("faces", faces),
                        ("max_pixels", max_pixels)):
        if value is not None:
            changes[name] = value
    cfg = base.replace(**changes) if changes else base
    if saliency is not None:
        from ..saliency import SALIENCY

        SALIENCY.get(saliency)  # fail once, before the batch, on a bad name
    if fmt is not None:
        try:
            format_suffix(fmt)
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"--format: {exc}") from None
    _check_out_dir(out_dir)
    stems = unique_stems(photos)

    failed = 0
    progress = None
    if len(photos) > 1 and not as_json and sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeRemainingColumn(), console=Console(stderr=True), transient=True)
    task = None
    if progress is not None:
        progress.start()
        task = progress.add_task("cropping", total=len(photos))
    try:
        for path, (stem, first) in zip(photos, stems):
            try:
                result = crop_photo(path, cfg)
                if result.failure and strict:
                    raise MulticropError(f"partition failure: {result.failure}")
                notes = ()
                if first is not None:
                    notes = (f"same name as {photos[first]} earlier in this batch; this photo's files are "
                             f"named {stem}_* and {stem}.json, not {path.stem}_*",)
                rec = write_outputs(result, out_dir, fmt=fmt, widths=tuple(width), preview=preview, stem=stem,
                                    warnings=notes)
                if result.failure:
                    typer.echo(f"multicrop: {path}: warning: partition failure: {result.failure}", err=True)
                for note in rec["warnings"]:
                    typer.echo(f"multicrop: {path}: warning: {note}", err=True)
                if as_json:
                    typer.echo(json.dumps(rec, sort_keys=True))
                elif progress is None:
                    names = ", ".join(c["path"] for c in rec["crops"])
                    typer.echo(f"{path}: {names}")
            except (MulticropError, OSError) as exc:
                failed += 1
                typer.echo(f"multicrop: {path}: {_problem(path, exc)}", err=True)
            if progress is not None:
                progress.advance(task)
    finally:
        if progress is not None:
            progress.stop()
    if failed:
        raise typer.Exit(1)


@saliency_app.command("list")
def saliency_list(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the registered saliency methods."""
    from ..saliency import SALIENCY

    rows = [
        {"name": b.name, "version": b.version, "needs_weights": b.needs_weights, "description": b.description}
        for _, b in SALIENCY.items()
    ]
    if as_json:
        typer.echo(json.dumps(rows, sort_keys=True))
        return
    for r in rows:
        typer.echo(f"{r['name']:<10} {r['version']:<10} {r['description']}")


def example(
    path: Path = typer.Argument(Path("example.jpg"), help="Where to write the example photo."),
    width: int = typer.Option(3600, "--width", "-w", min=300, help="Width in pixels."),
    height: int = typer.Option(1400, "--height", "-H", min=100, help="Height in pixels."),
) -> None:
    """Write a multi-subject example photo built from scikit-image's sample images."""
    from ..datasets.examples import example_photo

    typer.echo(str(example_photo(path, width=width, height=height)))


def register(app: typer.Typer) -> None:
    """Add ``crop``, ``example`` and the ``saliency`` group to ``app``."""
    app.command("crop")(crop)
    app.command("example")(example)
    app.add_typer(saliency_app, name="saliency")
