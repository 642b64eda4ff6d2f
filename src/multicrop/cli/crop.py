"""``multicrop crop``, ``multicrop saliency list`` and ``multicrop example``.

Nothing heavy is imported here (no numpy, Pillow or config): ``multicrop
--help`` stays fast.  The defaults shown in ``--help`` are the constants
below; ``tests/cli/test_crop_cli.py`` checks them against their one home,
:class:`~multicrop.crop.config.CropConfig` and ``OutputConfig``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..errors import InvalidParameterError, MulticropError
from .lazy import plain_app
from .options import (CONFIG_HELP, DETECTORS_HELP, HELP_DEFAULTS, K_HELP, PRESET_HELP, RATIO_HELP, ProgressBar,
                      apply_options, count_or_auto, detectors_option, focus_option, given, k_option,
                      ratios_option, read_config_file, write_options)

if TYPE_CHECKING:
    from ..crop.config import CropConfig, OutputConfig
    from ..crop.outputs import Stem, WriteOptions

__all__ = ["register"]

saliency_app = plain_app(help="Saliency backends.", no_args_is_help=True)

H = HELP_DEFAULTS


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


def _check_crops(result: Any, path: Path) -> None:
    """A photo that got no crop at all is an error, not a quiet success."""
    if not result.crops:
        ratios = ",".join(str(r) for r in result.config.ratios)
        raise MulticropError(
            f"no crop of ratio {ratios} at least {result.config.min_crop_side} px on each side fits "
            f"this {result.size[0]}x{result.size[1]} photo; try other ratios")


def _analyse(path: Path, crop_cfg: CropConfig, out_cfg: OutputConfig, *, strict: bool, judge: Any = None,
             focus: Any = None) -> Any:
    """``crop_photo`` on one photo (then the judge panel's choice): its result, or the exception that makes it fail."""
    from ..crop import pipeline

    try:
        result = pipeline.crop_photo(path, crop_cfg, max_pixels=out_cfg.max_pixels,
                                     shortlist=judge.shortlist if judge else 1, focus=focus)
        _check_crops(result, path)
        if result.failure and strict:
            raise MulticropError(f"partition failure: {result.failure}")
        if judge:
            result = judge.rank(result)
            typer.echo(f"multicrop: {path}: {judge.summary(result)}", err=True)
    except (MulticropError, OSError) as exc:
        return exc
    return result


LAYOUTS = ("crops", "seamless")


def _slides_option(layout: str, value: str | None) -> tuple[bool, int | None]:
    """``--layout`` / ``--slides``: (seamless?, the slide count or None for auto)."""
    if layout not in LAYOUTS:
        raise InvalidParameterError(f"--layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    n = None if value is None else count_or_auto(value, "--slides")
    if n is None or n == "auto":
        return layout == "seamless", None
    if layout != "seamless":
        raise InvalidParameterError(f"--slides {value} needs --layout seamless (crops take --k)")
    return True, n


def _seamless(path: Path, crop_cfg: CropConfig, out_cfg: OutputConfig, *, slides: int | None,
              min_slide_width: int | None) -> Any:
    """A seamless carousel of one photo as a CropResult: adjacent slides tiling one band.

    The photo is analysed once; each ratio of the setting is laid out and the
    one slicing the fewest subjects, then cutting the fewest, then keeping
    the most of the photo is taken (as the web page chooses).  The slides
    carry no score (NaN); the layout's notes go into the record.
    """
    import math

    import numpy as np

    from ..crop.analysis import analyse
    from ..crop.pipeline import CropResult, pipeline_versions
    from ..crop.scoring import ScoredCrop
    from ..crop.seamless import seamless_layout
    from ..io import load_image

    try:
        loaded = load_image(path, max_side=crop_cfg.analysis_max_side, max_pixels=out_cfg.max_pixels)
        analysis = analyse(loaded.analysis, crop_cfg)
        sal = np.asarray(analysis.saliency, dtype=np.float64)
        subjects = list(analysis.subjects) or list(analysis.faces)
        lays = [seamless_layout(sal, size=loaded.size, ratio=r, subjects=subjects, slides=slides,
                                min_slide_width=min_slide_width) for r in crop_cfg.ratios]
    except (MulticropError, OSError) as exc:
        return exc
    lay = min(lays, key=lambda la: (len(la.sliced), len(la.cut), -la.kept))
    h, w = loaded.analysis.shape[:2]
    sx, sy = loaded.size[0] / w, loaded.size[1] / h
    band = lay.band
    notes = (f"seamless carousel: {len(lay.boxes)} slides of {lay.ratio} tiling the band x={band.x} y={band.y} "
             f"w={band.w} h={band.h} ({lay.kept:.0%} of the photo)", *lay.notes)
    return CropResult(
        crops=tuple(ScoredCrop(b, math.nan, {}, lay.ratio) for b in lay.boxes), partition=None, failure=None,
        size=loaded.size, analysis_size=(w, h), config=crop_cfg, versions=pipeline_versions(crop_cfg),
        faces=tuple(f.scale(sx, sy) for f in analysis.faces),
        subjects=tuple(s.to_record(sx, sy) for s in analysis.subjects), analysis_key=analysis.key,
        source=str(loaded.path) if loaded.path is not None else None, k_requested=slides, notes=notes,
        image=loaded, saliency=sal)


def _finish(path: Path, result: Any, stem: Stem, earlier: Path | None, out_cfg: OutputConfig, out_dir: Path,
            write: WriteOptions | None, *, as_json: bool, list_files: bool) -> bool:
    """Write one photo's files (``write`` None: dry run) and report on stdout/stderr.  False if it failed."""
    from ..crop.outputs import write_outputs

    if isinstance(result, Exception):
        typer.echo(f"multicrop: {path}: {_problem(path, result)}", err=True)
        return False
    notes = ()
    if earlier is not None:
        notes = (f"same name as {earlier} earlier in this batch; this photo's files are "
                 f"named {stem.name}_* and {stem.name}.json, not {path.stem}_*",)
    try:
        if write is None:
            rec = result.to_dict()
            rec.update(stem=stem.name, warnings=list(notes) + list(result.image.warnings), dry_run=True)
        else:
            rec = write_outputs(result, out_dir, config=out_cfg, stem=stem.name, warnings=notes, options=write)
    except (MulticropError, OSError) as exc:
        typer.echo(f"multicrop: {path}: {_problem(path, exc)}", err=True)
        return False
    if result.failure:
        typer.echo(f"multicrop: {path}: warning: partition failure: {result.failure}", err=True)
    for note in rec["warnings"]:
        typer.echo(f"multicrop: {path}: warning: {note}", err=True)
    for note in getattr(result, "notes", ()):  # e.g. fewer distinct subjects than the k asked for
        typer.echo(f"multicrop: {path}: {note}", err=True)
    if as_json or write is None:
        typer.echo(json.dumps(rec, sort_keys=True))
    elif list_files:
        typer.echo(f"{path}: {', '.join(c['path'] for c in rec['crops'])}")
    return True


def crop(
    photos: list[str] = typer.Argument(
        ..., help="Photos, folders (photos inside; -R: also in subfolders), globs, or - for a list on stdin."),
    out_dir: Path = typer.Option(Path("."), "--out", "-o", help="Directory for crops, JSON and preview."),
    k: str | None = typer.Option(None, "--k", "-k", help=K_HELP),
    max_k: int | None = typer.Option(None, "--max-k", min=1, help="Most crops --k auto may choose (default 6)."),
    force_k: bool = typer.Option(
        False, "--force-k", help="Strategy direct: write k crops even when the photo has fewer distinct subjects."),
    one_ratio: bool | None = typer.Option(
        None, "--one-ratio/--per-crop-ratio",
        help="One ratio for the whole carousel (the platforms re-crop every slide to the first's ratio; default "
             "on for the instagram preset) or each crop its own ratio from the list."),
    ratio: str | None = typer.Option(None, "--ratio", "-r", help=RATIO_HELP),
    preset: str | None = typer.Option(None, "--preset", "-p", help=PRESET_HELP),
    strategy: str | None = typer.Option(
        None, "--strategy", "-s", help=f"{' or '.join(H['strategies'])} (default {H['strategy']})."
    ),
    saliency: str | None = typer.Option(
        None, "--saliency", help=f"Saliency backend (default {H['saliency']}; see `saliency list`)."
    ),
    faces: bool | None = typer.Option(
        None, "--faces/--no-faces", help=f"Protect faces (YuNet; default {'on' if H['faces'] else 'off'})."
    ),
    width: list[int] = typer.Option([], "--width", "-w", min=1, help="Also write copies this wide (repeatable)."),
    fmt: str | None = typer.Option(None, "--format", "-f", help="Crop format: jpg, png, webp, tif (default: source's)."),
    quality: int | None = typer.Option(
        None, "--quality", "-q", min=1, max=100,
        help=f"JPEG/WebP quality of re-encoded crops (default {H['quality']}; JPEG crops of JPEGs keep the "
             "source's tables or are cut losslessly).",
    ),
    lossless: str | None = typer.Option(
        None, "--lossless", help="auto: cut JPEG crops of JPEGs without re-encoding (libturbojpeg, else "
                                 "jpegtran) where possible; "
                                 "never: always re-encode (default auto)."),
    keep_metadata: bool = typer.Option(
        False, "--keep-metadata", help="Copy all EXIF (GPS, serial numbers, maker notes); default: only the "
                                       "capture settings, see docs/cropping.md."),
    max_pixels: int | None = typer.Option(
        None, "--max-pixels", min=1, help=f"Refuse larger images, in pixels (default {H['max_pixels']})."
    ),
    preview: bool | None = typer.Option(
        None, "--preview/--no-preview",
        help=f"Write <stem>_preview.jpg (default {'yes' if H['preview'] else 'no'}).",
    ),
    recursive: bool = typer.Option(False, "--recursive", "-R", help="Folders: also take photos in subfolders."),
    dry_run: bool = typer.Option(False, "--dry-run", "-n", help="Print each photo's JSON (boxes, scores); write nothing."),
    strict: bool = typer.Option(False, "--strict", help="Treat a partition failure as an error (no output)."),
    config_file: Path | None = typer.Option(None, "--config", "-c", help=CONFIG_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON record per photo on stdout."),
    judge: Path | None = typer.Option(
        None, "--judge", help="Judge panel TOML: the panel chooses each crop among its shortlist (strategy direct; "
                              "see docs/cropping.md; offline: multicrop/data/panel.measured.toml)."),
    shortlist: int | None = typer.Option(
        None, "--shortlist", help="With --judge: alternatives per crop the panel judges (default 4)."),
    judge_store: Path | None = typer.Option(
        None, "--judge-store", help="With --judge: the call store (SQLite); a rerun over it makes no new call "
                                    "(default: a temporary store per photo)."),
    focus: str | None = typer.Option(
        None, "--focus", help="X,Y or X,Y,W,H in source pixels: a point or region one crop must hold (strategy "
                              "direct); the record says it was given."),
    detectors: str | None = typer.Option(None, "--detectors", help=DETECTORS_HELP),
    layout: str = typer.Option(
        "crops", "--layout", help="crops: k distinct crops; seamless: adjacent slides of one ratio tiling one "
                                  "band of the photo, for a panorama swiped across (the best ratio of the setting)."),
    slides: str | None = typer.Option(
        None, "--slides", help="With --layout seamless: the number of slides, or auto (from the photo's width; "
                               "the first --width is the narrowest slide preferred)."),
) -> None:
    """Cut k distinct full-resolution crops from each photo; originals are never written over."""
    from ..io import list_photos
    from ..crop.outputs import unique_stems
    from ..io.guard import file_id

    base = read_config_file(config_file, option="-c")
    ratios = ratios_option(ratio, preset)
    focus_box = focus_option(focus)
    seamless, n_slides = _slides_option(layout, slides)
    if seamless and (judge is not None or focus_box is not None):
        raise InvalidParameterError("--layout seamless tiles one band: it takes no --judge and no --focus")
    crop_cfg, out_cfg = apply_options(
        base,
        given(k=k_option(k), ratios=ratios, strategy=strategy, saliency=saliency, faces=faces, max_k=max_k,
              force_k=force_k or None, one_ratio=one_ratio, detectors=detectors_option(detectors)),
        given(format=fmt, widths=tuple(width) or None, preview=preview, max_pixels=max_pixels, quality=quality),
    )
    write_settings = {**base.write, **given(lossless=lossless, keep_metadata=keep_metadata or None)}
    try:
        write_options(write_settings)
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"--lossless: {exc}") from None
    if dry_run and judge is not None:
        raise InvalidParameterError("--dry-run cannot be used with --judge: the panel makes judge calls (possibly "
                                    "paid) and writes the call store; drop --dry-run or --judge")
    ranker = None
    if judge is not None or shortlist is not None or judge_store is not None:
        from ..ranking.settings import JudgeSettings

        ranker = JudgeSettings.from_options(judge, shortlist=shortlist, store=judge_store, strategy=crop_cfg.strategy,
                                            warn=lambda line: typer.echo(f"multicrop: warning: {line}", err=True))
    paths = list_photos(photos, recursive=recursive, stdin=sys.stdin)
    stems = unique_stems(paths)
    write = None
    if not dry_run:
        _check_out_dir(out_dir)
        protected = frozenset(i for i in map(file_id, paths) if i is not None)
        write = write_options(write_settings, protected=protected, taken=frozenset(s.name for s in stems))
    show = len(paths) > 1 and not as_json and not dry_run and sys.stderr.isatty()
    failed = 0
    # Photo i's files are written (decode, encode, libturbojpeg via ctypes: GIL released) on a second
    # thread while photo i+1 is analysed; its lines are printed before anything about photo i+1, so
    # output order holds.
    overlap = write is not None and len(paths) > 1
    with ProgressBar("cropping", enabled=show, transient=True) as bar, \
            (ThreadPoolExecutor(1, thread_name_prefix="multicrop-write") if overlap else nullcontext()) as pool:
        bar.start(len(paths))
        pending = None
        for path, stem in zip(paths, stems):
            earlier = paths[stem.renamed_from] if stem.renamed_from is not None else None
            own = None if write is None else dataclasses.replace(write, taken=write.taken - {stem.name})
            if seamless:  # slides must meet exactly: re-encode rather than cut on the JPEG block grid
                result = _seamless(path, crop_cfg, out_cfg, slides=n_slides,
                                   min_slide_width=width[0] if width else None)
                own = None if own is None else dataclasses.replace(own, lossless="never")
            else:
                result = _analyse(path, crop_cfg, out_cfg, strict=strict, judge=ranker, focus=focus_box)
            if pending is not None:
                failed += not pending.result()
                bar.advance()
            args = (path, result, stem, earlier, out_cfg, out_dir, own)
            if pool is not None and not isinstance(result, Exception):
                pending = pool.submit(_finish, *args, as_json=as_json, list_files=not show)
                continue
            pending = None
            failed += not _finish(*args, as_json=as_json, list_files=not show)
            bar.advance()
        if pending is not None:
            failed += not pending.result()
            bar.advance()
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
    width: int = typer.Option(HELP_DEFAULTS["example_width"], "--width", "-w", min=300, help="Width in pixels."),
    height: int = typer.Option(HELP_DEFAULTS["example_height"], "--height", "-H", min=100, help="Height in pixels."),
) -> None:
    """Write a multi-subject example photo built from scikit-image's sample images."""
    from ..datasets.examples import example_photo

    typer.echo(str(example_photo(path, width=width, height=height)))


def register(app: typer.Typer) -> None:
    """Add ``crop``, ``example`` and the ``saliency`` group to ``app``."""
    app.command("crop")(crop)
    app.command("example")(example)
    app.add_typer(saliency_app, name="saliency")
