"""``multicrop batch crop`` and ``multicrop batch judge``: resumable jobs over collections."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..errors import InvalidParameterError
from .lazy import plain_app
from .options import (CONFIG_HELP, DETECTORS_HELP, HELP_DEFAULTS, K_HELP, PRESET_HELP, ProgressBar, apply_options,
                      detectors_option, given, k_option, ratios_option, read_config_file)

__all__ = ["register"]

batch_app = plain_app(help="Resumable batch jobs over folders, globs or manifests (local pool or Ray).",
                        no_args_is_help=True)



def _summary_text(s) -> str:
    reasons = ", ".join(f"{k} {v}" for k, v in s.failed_by_reason.items())
    redone = f", {s.redone_missing} redone (outputs missing)" if s.redone_missing else ""
    photos = "photo" if s.total == 1 else "photos"
    text = (f"{s.total} {photos}: {s.done} done, {s.skipped} skipped (done before){redone}, {s.failed} failed"
            f"{f' ({reasons})' if reasons else ''} in {s.elapsed_s:.1f} s ({s.photos_per_s:.2f} photos/s, "
            f"{s.engine}, {s.workers} workers x {s.threads} threads); manifest {s.manifest}")
    if s.failed_examples:
        lines = [f"  {path}: {error}" for path, error in s.failed_examples]
        more = s.failed - len(s.failed_examples)
        head = f"failed{f' (first {len(lines)} of {s.failed})' if more > 0 else ''}:"
        text += "\n" + "\n".join([head, *lines, f"list all failed photos with: multicrop batch failed {s.manifest}"])
    return text


def crop(
    source: str = typer.Argument(
        ..., help="Folder tree, glob ('photos/**/*.jpg') or CSV/Parquet manifest of paths or URIs."),
    out_dir: Path = typer.Option(..., "--out", "-o", help="Destination; outputs mirror the source's folders."),
    engine: str = typer.Option(
        "local", "--engine", "-e", help="local (process pool) or ray (RAY_ADDRESS or a local Ray)."),
    workers: int | None = typer.Option(None, "--workers", "-j", min=1, help="Workers (default: CPUs / threads)."),
    threads: int = typer.Option(1, "--threads", "-t", min=1, help="Threads per worker for the saliency model."),
    k: str | None = typer.Option(None, "--k", "-k", help=K_HELP),
    max_k: int | None = typer.Option(None, "--max-k", min=1, help="Most crops --k auto may choose (default 6)."),
    ratio: str | None = typer.Option(None, "--ratio", "-r", help="Ratio or comma list, or a preset name."),
    preset: str | None = typer.Option(None, "--preset", "-p", help=PRESET_HELP),
    saliency: str | None = typer.Option(None, "--saliency", help=f"Saliency backend (default {HELP_DEFAULTS['saliency']})."),
    faces: bool | None = typer.Option(None, "--faces/--no-faces", help="Protect faces (YuNet)."),
    detectors: str | None = typer.Option(None, "--detectors", help=DETECTORS_HELP),
    fmt: str | None = typer.Option(None, "--format", "-f", help="Crop format (default: the source's)."),
    preview: bool | None = typer.Option(None, "--preview/--no-preview", help="Write <stem>_preview.jpg."),
    config_file: Path | None = typer.Option(
        None, "--config", "-c", help=CONFIG_HELP.replace(", keep_metadata, lossless", "")),
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

    base = read_config_file(config_file, write=False)
    crop_cfg, out_cfg = apply_options(
        base,
        given(k=k_option(k), ratios=ratios_option(ratio, preset), saliency=saliency, faces=faces, max_k=max_k,
              detectors=detectors_option(detectors)),
        given(format=fmt, preview=preview))
    with ProgressBar("cropping", enabled=progress and not as_json) as bar:
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
    from ..batch.manifest import failed_rows
    from ..io.names import shown

    if not manifest.exists():
        raise InvalidParameterError(f"manifest {manifest}: no such folder")
    bad = failed_rows(manifest, on_quarantine=lambda line: typer.echo(f"multicrop: note: {line}", err=True))
    for r in bad:
        if as_json:
            typer.echo(json.dumps({"path": r["path"], "error_kind": r["error_kind"], "error": r["error"]}))
        else:
            typer.echo(f"{shown(r['path'])}\t{r['error_kind']}\t{shown(str(r['error']))}")


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

    from ..batch.runner import FAILED_SHOWN
    from ..io.names import shown, unprefixed

    failed: list[dict] = []

    def row(r: dict) -> None:
        bar.row(r)
        if r["status"] != "done" and len(failed) < FAILED_SHOWN:
            failed.append(r)

    with ProgressBar("judging", enabled=progress and not as_json, unit="images") as bar:
        summary = run_judge_batch(source, db, panel=panel, engine=engine, workers=workers, chunk=chunk,
                                  output=output, on_start=bar.start, on_row=row)
    if as_json:
        typer.echo(json.dumps(summary.to_dict()))
    else:
        reasons = ", ".join(f"{k} {v}" for k, v in summary.failed_by_reason.items())
        typer.echo(f"{summary.total} images: {summary.done} done, {summary.failed} failed"
                   f"{f' ({reasons})' if reasons else ''}; {summary.performed} calls made, {summary.already_done} "
                   f"already in {db}, in {summary.elapsed_s:.1f} s ({summary.engine}, {summary.workers} workers)")
        if failed:  # as batch crop names them
            more = f" (first {len(failed)} of {summary.failed})" if summary.failed > len(failed) else ""
            lines = [f"  {shown(r['path'])}: {shown(unprefixed(str(r['error']), r['path']))}"
                     for r in sorted(failed, key=lambda r: r["path"])]
            typer.echo("\n".join([f"failed{more}:", *lines]))
    if summary.failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add the ``batch`` group (``batch crop``, ``batch judge``) to ``app``."""
    batch_app.command("crop")(crop)
    batch_app.command("judge")(judge)
    batch_app.command("failed")(failed)
    app.add_typer(batch_app, name="batch")
