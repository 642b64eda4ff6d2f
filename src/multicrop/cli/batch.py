"""``multicrop batch crop`` and ``multicrop batch judge``: resumable jobs over collections."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer

from ..errors import InvalidParameterError
from .lazy import plain_app
from .options import HELP_DEFAULTS  # help-text defaults, checked against CropConfig by the crop CLI tests

__all__ = ["register"]

batch_app = plain_app(help="Resumable batch jobs over folders, globs or manifests (local pool or Ray).",
                        no_args_is_help=True)



class _Bar:
    """Rich progress on stderr: photos done of todo, photos/s, failures, ETA."""

    def __init__(self, *, enabled: bool, what: str) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        console = Console(stderr=True)
        self.bar = Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[rate]:.2f} photos/s"), TextColumn("{task.fields[failed]} failed"),
                            TimeRemainingColumn(), console=console, disable=not (enabled and console.is_terminal))
        self.task = None
        self.t0 = time.perf_counter()
        self.n = self.failed = 0

    def __enter__(self) -> _Bar:
        self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def start(self, todo: int, skipped: int) -> None:
        self.t0 = time.perf_counter()
        self.task = self.bar.add_task("batch", total=todo, rate=0.0, failed=0)

    def row(self, row: dict) -> None:
        self.n += 1
        self.failed += row["status"] != "done"
        rate = self.n / max(time.perf_counter() - self.t0, 1e-9)
        if self.task is not None:
            self.bar.update(self.task, advance=1, rate=rate, failed=self.failed)


def _summary_text(s) -> str:
    reasons = ", ".join(f"{k} {v}" for k, v in s.failed_by_reason.items())
    redone = f", {s.redone_missing} redone (outputs missing)" if s.redone_missing else ""
    text = (f"{s.total} photos: {s.done} done, {s.skipped} skipped (done before){redone}, {s.failed} failed"
            f"{f' ({reasons})' if reasons else ''} in {s.elapsed_s:.1f} s ({s.photos_per_s:.2f} photos/s, "
            f"{s.engine}, {s.workers} workers x {s.threads} threads); manifest {s.manifest}")
    if s.failed_examples:
        lines = [f"  {path}: {error}" for path, error in s.failed_examples]
        more = s.failed - len(s.failed_examples)
        head = f"failed{f' (first {len(lines)} of {s.failed})' if more > 0 else ''}:"
        text += "\n" + "\n".join([head, *lines, f"list all failed photos with: multicrop batch failed {s.manifest}"])
    return text


def _read_config(config_file: Path):
    from ..crop.config import CropConfig
    from ..io import read_text_bounded

    text = read_text_bounded(config_file, what="--config")  # bounded, regular files only: never /dev/zero
    try:
        return CropConfig.from_dict(json.loads(text))
    except (RecursionError, ValueError, TypeError) as exc:
        raise InvalidParameterError(f"--config {config_file}: {str(exc).splitlines()[0] if str(exc) else exc!r}") from None


def crop(
    source: str = typer.Argument(
        ..., help="Folder tree, glob ('photos/**/*.jpg') or CSV/Parquet manifest of paths or URIs."),
    out_dir: Path = typer.Option(..., "--out", "-o", help="Destination; outputs mirror the source's folders."),
    engine: str = typer.Option(
        "local", "--engine", "-e", help="local (process pool) or ray (RAY_ADDRESS or a local Ray)."),
    workers: int | None = typer.Option(None, "--workers", "-j", min=1, help="Workers (default: CPUs / threads)."),
    threads: int = typer.Option(1, "--threads", "-t", min=1, help="Threads per worker for the saliency model."),
    k: int | None = typer.Option(None, "--k", "-k", min=1, help=f"Crops per photo (default {HELP_DEFAULTS['k']})."),
    ratio: str | None = typer.Option(None, "--ratio", "-r", help="Ratio or comma list, or a preset name."),
    saliency: str | None = typer.Option(None, "--saliency", help=f"Saliency backend (default {HELP_DEFAULTS['saliency']})."),
    faces: bool | None = typer.Option(None, "--faces/--no-faces", help="Protect faces (YuNet)."),
    fmt: str | None = typer.Option(None, "--format", "-f", help="Crop format (default: the source's)."),
    preview: bool | None = typer.Option(None, "--preview/--no-preview", help="Write <stem>_preview.png."),
    config_file: Path | None = typer.Option(None, "--config", "-c", help="JSON of CropConfig fields."),
    manifest: Path | None = typer.Option(
        None, "--manifest", "-m", help="Results manifest folder (default OUT/manifest.parquet)."),
    max_megapixels: int | None = typer.Option(
        None, "--max-megapixels", min=1, help="Most source megapixels in flight at once (default: half the RAM)."),
    retry_failed: bool = typer.Option(True, "--retry-failed/--no-retry-failed", help="Try failed photos again."),
    verify_outputs: bool = typer.Option(
        False, "--verify-outputs", help="Also redo photos done before whose crops or record are gone "
                                        "(a rerun otherwise checks settings, size and modification time only)."),
    protocol: list[str] = typer.Option(
        [], "--protocol", help="Also read this URI protocol (e.g. https); s3, gs, az and local files always."),
    allow_outside: bool = typer.Option(
        False, "--allow-outside", help="Let a manifest's relative entries leave its folder (../)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr (terminals only)."),
) -> None:
    """Crop every photo of SOURCE into OUT, resumably; a rerun skips what is done with the same settings."""
    from ..batch import run_crop_batch
    from ..batch.sources import PROTOCOLS
    from ..crop.config import CropConfig, OutputConfig
    from ..ratios import parse_ratio_spec

    base = CropConfig() if config_file is None else _read_config(config_file)
    changes = {k2: v for k2, v in (("k", k), ("saliency", saliency), ("faces", faces)) if v is not None}
    if ratio:
        changes["ratios"] = parse_ratio_spec(ratio)  # a spec keeps its one-ratio rule (instagram)
    crop_cfg = base.replace(**changes)
    out_changes = {k2: v for k2, v in (("format", fmt), ("preview", preview)) if v is not None}
    out_cfg = OutputConfig().replace(**out_changes)
    with _Bar(enabled=progress and not as_json, what="cropping") as bar:
        summary = run_crop_batch(source, out_dir, crop=crop_cfg, output=out_cfg, engine=engine, workers=workers,
                                 threads=threads, manifest=manifest,
                                 pixel_budget=max_megapixels * 1_000_000 if max_megapixels else None,
                                 retry_failed=retry_failed, on_start=bar.start, on_row=bar.row,
                                 verify_outputs=verify_outputs, allow_outside=allow_outside,
                                 protocols=tuple(dict.fromkeys((*PROTOCOLS, *(p.lower() for p in protocol)))),
                                 on_note=lambda line: typer.echo(f"multicrop: note: {line}", err=True))
    typer.echo(json.dumps(summary.to_dict()) if as_json else _summary_text(summary))
    if summary.failed:
        raise typer.Exit(1)


def failed(
    manifest: Path = typer.Argument(..., help="A batch's results manifest folder (OUT/manifest.parquet)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per line."),
) -> None:
    """List every photo whose latest row in MANIFEST failed, with its reason (one per line)."""
    from ..batch.manifest import latest_rows, read_manifest

    if not manifest.exists():
        raise InvalidParameterError(f"manifest {manifest}: no such folder")
    rows = latest_rows(read_manifest(manifest, columns=("path", "status", "error_kind", "error"),
                                     on_quarantine=lambda line: typer.echo(f"multicrop: note: {line}", err=True)))
    bad = [r for r in rows.values() if r["status"] == "failed"]
    for r in sorted(bad, key=lambda r: r["path"]):
        if as_json:
            typer.echo(json.dumps({"path": r["path"], "error_kind": r["error_kind"], "error": r["error"]}))
        else:
            typer.echo(f"{r['path']}\t{r['error_kind']}\t{r['error']}")


def judge(
    source: str = typer.Argument(..., help="Folder tree, glob or CSV/Parquet manifest of images."),
    panel: Path | None = typer.Option(
        None, "--panel", "-p", help="Panel TOML (default: the offline 'measured' judge)."),
    db: Path = typer.Option(..., "--db", "-d", help="Judge call store (SQLite; one machine, shared by the workers)."),
    engine: str = typer.Option("local", "--engine", "-e", help="local or ray."),
    workers: int | None = typer.Option(None, "--workers", "-j", min=1, help="Workers (default: CPUs)."),
    chunk: int = typer.Option(16, "--chunk", min=1, help="Images per task."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Per-image manifest (Parquet)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr (terminals only)."),
) -> None:
    """Judge every image of SOURCE with a panel; calls go through one store, each paid for once."""
    from ..batch.judge_job import run_judge_batch

    with _Bar(enabled=progress and not as_json, what="judging") as bar:
        summary = run_judge_batch(source, db, panel=panel, engine=engine, workers=workers, chunk=chunk,
                                  output=output, on_start=bar.start, on_row=bar.row)
    if as_json:
        typer.echo(json.dumps(summary.to_dict()))
    else:
        reasons = ", ".join(f"{k} {v}" for k, v in summary.failed_by_reason.items())
        typer.echo(f"{summary.total} images: {summary.done} done, {summary.failed} failed"
                   f"{f' ({reasons})' if reasons else ''}; {summary.performed} calls made, {summary.already_done} "
                   f"already in {db}, in {summary.elapsed_s:.1f} s ({summary.engine}, {summary.workers} workers)")
    if summary.failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add the ``batch`` group (``batch crop``, ``batch judge``) to ``app``."""
    batch_app.command("crop")(crop)
    batch_app.command("judge")(judge)
    batch_app.command("failed")(failed)
    app.add_typer(batch_app, name="batch")
