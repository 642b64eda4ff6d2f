"""``multicrop crop``, ``multicrop saliency list`` and ``multicrop example``."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..crop.config import STRATEGIES, CropConfig, OutputConfig
from ..datasets.examples import EXAMPLE_HEIGHT, EXAMPLE_WIDTH
from ..errors import InvalidParameterError, MulticropError

if TYPE_CHECKING:
    from ..crop.outputs import Stem

__all__ = ["register"]

saliency_app = typer.Typer(help="Saliency backends.", no_args_is_help=True)

# Defaults shown in --help come from the config classes, their one home.
_CROP = CropConfig()
_OUTPUT = OutputConfig()


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


def _read_config_file(path: Path) -> tuple[CropConfig, OutputConfig]:
    """The settings of a ``-c`` file: a JSON object of CropConfig fields and, optionally, OutputConfig fields.

    A record's ``config`` is such a file; so is one from before the two were
    split (its ``quality`` and ``max_pixels`` go to the OutputConfig).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidParameterError(f"{path}: cannot read config ({exc})") from None
    if not isinstance(data, dict):
        raise InvalidParameterError(f"{path}: a config file holds a JSON object, got {type(data).__name__}")
    output_keys = {f.name for f in dataclasses.fields(OutputConfig)}
    try:
        crop_cfg = CropConfig.from_dict({k: v for k, v in data.items() if k not in output_keys})
        out_cfg = OutputConfig.from_dict({k: v for k, v in data.items() if k in output_keys})
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"{path}: {exc}") from None
    return crop_cfg, out_cfg


def _given(**options: Any) -> dict[str, Any]:
    """The options the user gave (not None)."""
    return {k: v for k, v in options.items() if v is not None}


def _settings(base: tuple[CropConfig, OutputConfig], crop_options: dict[str, Any],
              output_options: dict[str, Any]) -> tuple[CropConfig, OutputConfig]:
    """``base`` (the config file's settings, or the defaults) with the command-line options applied.

    Options wrong for the whole batch (a bad value, saliency backend or
    format) fail here, before the first photo.
    """
    crop_cfg = base[0].replace(**crop_options)
    if "saliency" in crop_options:
        from ..saliency import SALIENCY

        SALIENCY.get(crop_options["saliency"])  # fail once, before the batch, on a bad name
    if "format" in output_options:
        from ..io import format_suffix

        try:
            format_suffix(output_options["format"])
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"--format: {exc}") from None
    return crop_cfg, base[1].replace(**output_options)


@contextmanager
def _progress(total: int, *, show: bool) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr while the block runs (when ``show``); yields the function that advances it."""
    if not show:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeRemainingColumn(), console=Console(stderr=True), transient=True)
    progress.start()
    task = progress.add_task("cropping", total=total)
    try:
        yield lambda: progress.advance(task)
    finally:
        progress.stop()


def _crop_one(path: Path, stem: Stem, earlier: Path | None, crop_cfg: CropConfig, out_cfg: OutputConfig,
              out_dir: Path, *, strict: bool, as_json: bool, list_files: bool) -> bool:
    """Crop one photo and write its files; report on stdout/stderr.  False if it failed."""
    from ..crop import pipeline
    from ..crop.outputs import write_outputs

    try:
        result = pipeline.crop_photo(path, crop_cfg, max_pixels=out_cfg.max_pixels)
        if result.failure and strict:
            raise MulticropError(f"partition failure: {result.failure}")
        notes = ()
        if earlier is not None:
            notes = (f"same name as {earlier} earlier in this batch; this photo's files are "
                     f"named {stem.name}_* and {stem.name}.json, not {path.stem}_*",)
        rec = write_outputs(result, out_dir, config=out_cfg, stem=stem.name, warnings=notes)
    except (MulticropError, OSError) as exc:
        typer.echo(f"multicrop: {path}: {_problem(path, exc)}", err=True)
        return False
    if result.failure:
        typer.echo(f"multicrop: {path}: warning: partition failure: {result.failure}", err=True)
    for note in rec["warnings"]:
        typer.echo(f"multicrop: {path}: warning: {note}", err=True)
    if as_json:
        typer.echo(json.dumps(rec, sort_keys=True))
    elif list_files:
        typer.echo(f"{path}: {', '.join(c['path'] for c in rec['crops'])}")
    return True


def crop(
    photos: list[Path] = typer.Argument(..., help="Photos to crop (JPEG, PNG, WebP, TIFF, HEIC...)."),
    out_dir: Path = typer.Option(Path("."), "--out", "-o", help="Directory for crops, JSON and preview."),
    k: int | None = typer.Option(None, "--k", "-k", min=1, help=f"Crops per photo (default {_CROP.k})."),
    ratio: str | None = typer.Option(
        None, "--ratio", "-r",
        help=f"Ratio or comma list, e.g. 2:3,3:2 (default {','.join(str(r) for r in _CROP.ratios)}).",
    ),
    preset: str | None = typer.Option(None, "--preset", "-p", help="Ratio preset: instagram, carousel, ..."),
    strategy: str | None = typer.Option(
        None, "--strategy", "-s", help=f"{' or '.join(STRATEGIES)} (default {_CROP.strategy})."
    ),
    saliency: str | None = typer.Option(
        None, "--saliency", help=f"Saliency backend (default {_CROP.saliency}; see `saliency list`)."
    ),
    faces: bool | None = typer.Option(
        None, "--faces/--no-faces", help=f"Protect faces (YuNet; default {'on' if _CROP.faces else 'off'})."
    ),
    width: list[int] = typer.Option([], "--width", "-w", min=1, help="Also write copies this wide (repeatable)."),
    fmt: str | None = typer.Option(None, "--format", "-f", help="Crop format: jpg, png, webp, tif (default: source's)."),
    max_pixels: int | None = typer.Option(
        None, "--max-pixels", min=1, help=f"Refuse larger images, in pixels (default {_OUTPUT.max_pixels})."
    ),
    preview: bool | None = typer.Option(
        None, "--preview/--no-preview",
        help=f"Write <stem>_preview.png (default {'yes' if _OUTPUT.preview else 'no'}).",
    ),
    strict: bool = typer.Option(False, "--strict", help="Treat a partition failure as an error (no output)."),
    config_file: Path | None = typer.Option(
        None, "--config", "-c", help="JSON of CropConfig and OutputConfig fields (options override it)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON record per photo on stdout."),
) -> None:
    """Cut k distinct full-resolution crops from each photo."""
    from ..crop.outputs import unique_stems
    from ..geometry import parse_ratios

    base = _read_config_file(config_file) if config_file is not None else (CropConfig(), OutputConfig())
    if ratio and preset:
        raise InvalidParameterError("give --ratio or --preset, not both")
    ratios = parse_ratios(ratio or preset) if ratio or preset else None
    crop_cfg, out_cfg = _settings(
        base,
        _given(k=k, ratios=ratios, strategy=strategy, saliency=saliency, faces=faces),
        _given(format=fmt, widths=tuple(width) or None, preview=preview, max_pixels=max_pixels),
    )
    _check_out_dir(out_dir)
    show = len(photos) > 1 and not as_json and sys.stderr.isatty()
    failed = 0
    with _progress(len(photos), show=show) as advance:
        for path, stem in zip(photos, unique_stems(photos)):
            earlier = photos[stem.renamed_from] if stem.renamed_from is not None else None
            ok = _crop_one(path, stem, earlier, crop_cfg, out_cfg, out_dir, strict=strict, as_json=as_json,
                           list_files=not show)
            failed += not ok
            advance()
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
    width: int = typer.Option(EXAMPLE_WIDTH, "--width", "-w", min=300, help="Width in pixels."),
    height: int = typer.Option(EXAMPLE_HEIGHT, "--height", "-H", min=100, help="Height in pixels."),
) -> None:
    """Write a multi-subject example photo built from scikit-image's sample images."""
    from ..datasets.examples import example_photo

    typer.echo(str(example_photo(path, width=width, height=height)))


def register(app: typer.Typer) -> None:
    """Add ``crop``, ``example`` and the ``saliency`` group to ``app``."""
    app.command("crop")(crop)
    app.command("example")(example)
    app.add_typer(saliency_app, name="saliency")
