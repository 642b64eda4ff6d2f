"""The steps of ``multicrop crop`` for one photo: analyse it (or lay out a seamless carousel), write and report.

Each returns its result or the exception that makes the photo fail, so the
command's loop reports a failed photo in one line and goes on with the next.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..errors import InvalidParameterError, MulticropError
from .options import count_or_auto

if TYPE_CHECKING:
    from ..crop.config import CropConfig, OutputConfig
    from ..crop.outputs import Stem, WriteOptions

__all__ = ["LAYOUTS", "analyse_photo", "check_crops", "check_out_dir", "finish", "in_order", "photo_workers", "problem",
           "seamless_result", "slides_option"]


def shown(name) -> str:
    """A file name as the terminal may show it (:func:`multicrop.io.shown`; imported when first used)."""
    from ..io.names import shown as escape

    return escape(str(name))


def problem(path: Path, exc: Exception) -> str:
    """The error text without a leading ``<path>: `` (the CLI adds its own)."""
    from ..io.names import unprefixed

    return unprefixed(str(exc), path)


def check_out_dir(out_dir: Path) -> None:
    """Create ``--out`` (once, before the batch) or say in one line why it cannot be used."""
    if out_dir.exists() and not out_dir.is_dir():
        raise InvalidParameterError(f"--out {out_dir}: exists and is not a directory")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidParameterError(f"--out {out_dir}: cannot create the directory ({exc.strerror or exc})") from None
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise InvalidParameterError(f"--out {out_dir}: the directory is not writable")


def check_crops(result: Any, path: Path) -> None:
    """A photo that got no crop at all is an error, not a quiet success."""
    if not result.crops:
        ratios = ",".join(str(r) for r in result.config.ratios)
        raise MulticropError(
            f"no crop of ratio {ratios} at least {result.config.min_crop_side} px on each side fits "
            f"this {result.size[0]}x{result.size[1]} photo; try other ratios")


def photo_workers(n_photos: int, *, plain: bool) -> tuple[int, int]:
    """How many photos of a batch of ``n_photos`` are analysed at once, and the model threads each gets.

    Two photos at a time, each with half of :func:`multicrop.models.thread_count`'s threads (rounded down:
    three threads run two photos on one each), where there are
    two photos or more, two threads or more and the photos are ``plain`` (crops of the shipped models alone:
    no judge panel, learned head or seamless layout).  U^2-Netp loses nothing on half the threads (1.9 times
    as long on one as on two), and the rest of a photo's work (the decode, subjects, selection, the cuts)
    runs on one core: two photos side by side keep both busy (docs/speed.md, "A folder").  Else one photo
    at a time with every thread.  The threads never change a result.
    """
    from ..models import thread_count

    threads = thread_count()
    workers = 2 if plain and n_photos > 1 and threads > 1 else 1
    return workers, max(1, threads // workers)


def in_order(items: list, step: Callable[[Any], Any], *, workers: int, ahead: bool) -> Iterator[tuple[Any, Any]]:
    """``(item, step(item))`` for each of ``items``, in their order.

    ``ahead``: ``step`` runs on ``workers`` threads, with up to ``workers + 1`` items handed out beyond the
    one the caller holds (it writes a photo while the next ones are analysed; a finished one waits with
    its result, which holds the photo's analysis copy, not its pixels); else each runs here, when asked for.
    Items not started when the caller stops (an error, Ctrl-C) are never started; those running finish
    first (the process waits for them as it exits: at most ``workers`` photos' analyses).
    """
    if not ahead:
        for item in items:
            yield item, step(item)
        return
    pool = ThreadPoolExecutor(workers, thread_name_prefix="multicrop-photo")
    try:
        pending = deque(pool.submit(step, item) for item in items[:workers + 1])
        for i, item in enumerate(items):
            result = pending.popleft().result()
            if i + workers + 1 < len(items):
                pending.append(pool.submit(step, items[i + workers + 1]))
            yield item, result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def analyse_photo(path: Path, crop_cfg: CropConfig, out_cfg: OutputConfig, *, strict: bool, judge: Any = None,
                  focus: Any = None, scorer: Any = None, threads: int | None = None) -> Any:
    """``crop_photo`` on one photo (then the judge panel's choice): its result, or the exception that makes it
    fail.  ``threads``: the models' threads (default :func:`multicrop.models.thread_count`)."""
    from ..crop import pipeline

    try:
        result = pipeline.crop_photo(path, crop_cfg, max_pixels=out_cfg.max_pixels, threads=threads,
                                     shortlist=judge.shortlist if judge else 1, focus=focus, scorer=scorer)
        check_crops(result, path)
        if result.failure and strict:
            raise MulticropError(f"partition failure: {result.failure}")
        if judge:
            result = judge.rank(result)
            typer.echo(f"multicrop: {shown(path)}: {judge.summary(result)}", err=True)
    except (MulticropError, OSError) as exc:
        return exc
    return result


def learned_scorer(head: Path, crop_cfg: CropConfig, *, weight: float) -> Any:
    """``--head``: the configured scorer with the head's rating of its best framings as one soft term."""
    from ..crop.scoring import get_scorer
    from ..crop.scoring.learned import LearnedScorer
    from ..judges.heads import load_head

    return LearnedScorer(load_head(head), get_scorer(crop_cfg), weight=weight)


LAYOUTS = ("crops", "seamless")


def slides_option(layout: str, value: str | None) -> tuple[bool, int | None]:
    """``--layout`` / ``--slides``: (seamless?, the slide count or None for auto)."""
    if layout not in LAYOUTS:
        raise InvalidParameterError(f"--layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    n = None if value is None else count_or_auto(value, "--slides")
    if n is None or n == "auto":
        return layout == "seamless", None
    if layout != "seamless":
        raise InvalidParameterError(f"--slides {value} needs --layout seamless (crops take --k)")
    return True, n


def seamless_result(path: Path, crop_cfg: CropConfig, out_cfg: OutputConfig, *, slides: int | None,
                    min_slide_width: int | None) -> Any:
    """:func:`multicrop.crop.seamless_photo.seamless_photo` on one photo: its CropResult, or the exception that makes it fail."""
    from ..crop.seamless_photo import seamless_photo

    try:
        return seamless_photo(path, crop_cfg, slides=slides, min_slide_width=min_slide_width,
                              max_pixels=out_cfg.max_pixels)
    except (MulticropError, OSError) as exc:
        return exc


def finish(path: Path, result: Any, stem: Stem, earlier: Path | None, out_cfg: OutputConfig, out_dir: Path,
            write: WriteOptions | None, *, as_json: bool, list_files: bool) -> bool:
    """Write one photo's files (``write`` None: dry run) and report on stdout/stderr.  False if it failed."""
    from ..crop.outputs import write_outputs

    if isinstance(result, Exception):
        typer.echo(f"multicrop: {shown(path)}: {problem(path, result)}", err=True)
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
        typer.echo(f"multicrop: {shown(path)}: {problem(path, exc)}", err=True)
        return False
    if result.failure:
        typer.echo(f"multicrop: {shown(path)}: warning: partition failure: {result.failure}", err=True)
    for note in rec["warnings"]:
        typer.echo(f"multicrop: {shown(path)}: warning: {note}", err=True)
    for note in getattr(result, "notes", ()):  # e.g. fewer distinct subjects than the k asked for
        typer.echo(f"multicrop: {shown(path)}: {note}", err=True)
    if as_json or write is None:
        typer.echo(json.dumps(rec, sort_keys=True))
    elif list_files:
        typer.echo(f"{shown(path)}: {', '.join(shown(c['path']) for c in rec['crops'])}")
    return True
