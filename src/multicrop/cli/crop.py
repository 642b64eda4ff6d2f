"""``multicrop crop``: the command and its loop over the photos (each photo's steps: :mod:`.crop_steps`).

Nothing heavy is imported here (no numpy, Pillow or config): ``multicrop
crop --help`` stays fast.  The defaults shown in ``--help`` are
:data:`~multicrop.cli.options.HELP_DEFAULTS`; ``tests/cli/test_crop_cli.py``
checks them against their one home,
:class:`~multicrop.crop.config.CropConfig` and ``OutputConfig``.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import typer

from ..errors import InvalidParameterError
from .crop_steps import (analyse_photo, check_out_dir, finish, in_order, learned_scorer, photo_workers, seamless_result,
                         slides_option)
from .options import (CONFIG_HELP, DETECTORS_HELP, HELP_DEFAULTS, K_HELP, PRESET_HELP, RATIO_HELP, ProgressBar,
                      apply_options, detectors_option, focus_option, given, k_option,
                      ratios_option, read_config_file, write_options)

__all__ = ["register"]

H = HELP_DEFAULTS


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
                              "see docs/cropping.md; 'measured': the shipped offline panel)."),
    shortlist: int | None = typer.Option(
        None, "--shortlist", help="With --judge: alternatives per crop the panel judges (default 4)."),
    judge_store: Path | None = typer.Option(
        None, "--judge-store", help="With --judge: the call store (SQLite); a rerun over it makes no new call "
                                    "(default: a temporary store per photo)."),
    head: Path | None = typer.Option(
        None, "--head", help="Embedding-judge head (multicrop judge fit): its rating of each photo's best framings "
                             "joins their score as one soft term (docs/cropping.md, 'A learned term')."),
    head_weight: float | None = typer.Option(
        None, "--head-weight", min=0, help="With --head: the learned term's weight (default 0.5)."),
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
    seamless, n_slides = slides_option(layout, slides)
    if seamless and (judge is not None or focus_box is not None or head is not None or k is not None
                     or max_k is not None or force_k):
        raise InvalidParameterError("--layout seamless tiles one band: it takes no --judge, --focus, --head, -k, "
                                    "--max-k or --force-k (--slides sets the number of slides)")
    if head_weight is not None and head is None:
        raise InvalidParameterError("--head-weight needs --head (the head whose ratings it weighs)")
    crop_cfg, out_cfg = apply_options(
        base,
        given(k=k_option(k), ratios=ratios, strategy=strategy, saliency=saliency, faces=faces, max_k=max_k,
              force_k=force_k or None, one_ratio=one_ratio, detectors=detectors_option(detectors)),
        given(format=fmt, widths=tuple(width) or None, preview=preview, max_pixels=max_pixels, quality=quality),
    )
    if max_k is not None and crop_cfg.k != "auto":  # an option that would change nothing is said, not ignored
        raise InvalidParameterError(f"--max-k applies to -k auto (this run crops k={crop_cfg.k})")
    if force_k and (crop_cfg.strategy != "direct" or crop_cfg.k == "auto"):
        raise InvalidParameterError("--force-k applies to strategy direct with a fixed k (this run: strategy "
                                    f"{crop_cfg.strategy}, k={crop_cfg.k})")
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
    scorer = None if head is None else learned_scorer(head, crop_cfg, weight=0.5 if head_weight is None else head_weight)
    paths = list_photos(photos, recursive=recursive, stdin=sys.stdin)
    workers, threads = photo_workers(len(paths), plain=not seamless and ranker is None and scorer is None)
    _prefetch_sessions(crop_cfg, threads)
    stems = unique_stems(paths)
    write = None
    if not dry_run:
        check_out_dir(out_dir)
        protected = frozenset(i for i in map(file_id, paths) if i is not None)
        write = write_options(write_settings, protected=protected, taken=frozenset(s.name for s in stems))
    show = len(paths) > 1 and not as_json and not dry_run and sys.stderr.isatty()

    def step(item):
        path, _ = item
        if seamless:  # slides must meet exactly: re-encode rather than cut on the JPEG block grid
            return seamless_result(path, crop_cfg, out_cfg, slides=n_slides, min_slide_width=width[0] if width else None)
        return analyse_photo(path, crop_cfg, out_cfg, strict=strict, judge=ranker, focus=focus_box, scorer=scorer,
                             threads=threads)

    failed = 0
    # Photos are analysed on worker threads, ahead of this one, which writes each photo's files and prints its
    # lines in the photos' order (a judge's lines too: with --judge nothing runs ahead).
    with ProgressBar("cropping", enabled=show, transient=True) as bar:
        bar.start(len(paths))
        for (path, stem), result in in_order(list(zip(paths, stems)), step, workers=workers,
                                             ahead=ranker is None and len(paths) > 1):
            earlier = paths[stem.renamed_from] if stem.renamed_from is not None else None
            own = None if write is None else dataclasses.replace(write, taken=write.taken - {stem.name})
            if seamless and own is not None:  # slides meet exactly: cut losslessly only where no corner moves
                own = dataclasses.replace(own, exact=True)
            ok = finish(path, result, stem, earlier, out_cfg, out_dir, own, as_json=as_json, list_files=not show)
            failed += not ok
            bar.advance(failed=int(not ok))
    if failed:
        raise typer.Exit(1)


def _prefetch_sessions(crop_cfg, threads: int) -> None:
    """The models' sessions built on a second thread while the first photo is opened (docs/speed.md)."""
    from ..crop.analysis import model_files
    from ..models import prefetch

    prefetch(model_files(crop_cfg), threads=threads)


def register(app: typer.Typer) -> None:
    """Add ``crop`` to ``app``."""
    app.command("crop")(crop)
