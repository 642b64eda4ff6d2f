"""``multicrop judge fit``: a head for the offline embedding judge, fitted on your own ratings."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..errors import InvalidParameterError
from .judge_inputs import paths_of
from .options import ProgressBar

__all__ = ["judge_fit"]


def judge_fit(
    ratings: Path = typer.Argument(..., help="Ratings file (or PARA directory) with the photos' human scores."),
    images: list[Path] = typer.Option(..., "--images", "-i", help="Folder(s) or files of the rated photos (matched by file name)."),
    output: Path = typer.Option(..., "--output", "-o", help="Head file to write (.json)."),
    fmt: str | None = typer.Option(None, "--format", "-f", help="Ratings format: eva, para or csv (default: from the header)."),
    recursive: bool = typer.Option(True, "--recursive/--no-recursive", "-R", help="Folders: also take photos in subfolders (default on)."),
    folds: int = typer.Option(5, "--folds", help="Folds of the (nested) cross-validation."),
    seed: int = typer.Option(0, "--seed", help="Seed of the fold split."),
    cache: Path | None = typer.Option(None, "--cache", help="Keep the embeddings in this .npz (by photo SHA-256) for refits."),
    as_json: bool = typer.Option(False, "--json", help="Print the fit as JSON."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr (terminals only)."),
) -> None:
    """Fit a head for the offline embedding judge on your own ratings (ridge over the shipped EfficientNet-Lite0 embedding).

    Fits the holistic score and each rubric dimension whose human attribute the ratings carry (quality -> technical
    quality, composition, colour -> colour and tone); prints each target's out-of-fold Spearman rho.  Score photos
    with `multicrop judge PHOTOS --head HEAD`.
    """
    from ..datasets.ratings import RATINGS_FORMATS, load_ratings
    from ..embeddings import EMBEDDING
    from ..judges.fitting import FeatureCache, fit_head_from_ratings
    from ..judges.heads import save_head

    if output.suffix.lower() != ".json":
        raise InvalidParameterError(f"--output must end in .json, got {output.name!r}")
    _check_writable(output)  # before the fit, which embeds every photo
    if folds < 2:
        raise InvalidParameterError(f"--folds must be an integer >= 2, got {folds}")
    fmt = fmt or _guess_format(ratings)
    RATINGS_FORMATS.get(fmt)
    rat = load_ratings(ratings, fmt)
    files = [p for item in images for p, _ in paths_of(item, recursive=recursive)]
    lines: list[str] = []

    def said(t) -> None:
        line = (f"{t.name}: fitted on {t.n} photos ({t.attribute}), out-of-fold Spearman rho {t.oof_spearman:.3f}, "
                f"ridge alpha {t.alpha:.3g}")
        lines.append(line)
        if not as_json:
            typer.echo(line)

    bar = ProgressBar("embedding", enabled=progress, failures=False)
    with bar:
        res = fit_head_from_ratings(rat, files, n_folds=folds, seed=seed,
                                    cache=FeatureCache(cache, model_id=EMBEDDING.id) if cache else None,
                                    on_start=bar.start, on_embedding=bar.advance, on_target=said)
    sha = save_head(res.head, output)
    if as_json:
        typer.echo(json.dumps({"head": str(output), "sha256": sha, "embedding": res.head.embedding,
                               "rated": res.n_rated, "matched": res.n_matched,
                               "targets": [{"name": t.name, "attribute": t.attribute, "n": t.n, "alpha": t.alpha,
                                            "oof_spearman": t.oof_spearman} for t in res.head.targets]}))
        return
    missing = f"; {len(res.unmatched)} rated images not found" if res.unmatched else ""
    typer.echo(f"head -> {output} ({sha[:19]}...): {len(res.head.targets)} targets from {res.n_matched} of "
               f"{res.n_rated} rated photos{missing}")


def _guess_format(path: Path) -> str:
    """The ratings format of a file (or PARA directory) from its header; csv when it looks like none."""
    from ..datasets.ratings import guess_format

    from ..io import check_regular

    if path.is_dir():
        return "para"
    check_regular(path, what="ratings file", error=InvalidParameterError)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            header = fh.readline().strip()
    except OSError as exc:
        raise InvalidParameterError(f"ratings file {path}: cannot read ({exc.strerror or exc})") from None
    return guess_format(header.split(",") if "=" not in header else [header]) or "csv"


def _check_writable(output: Path) -> None:
    """``--output`` can be written: not a folder, its folder writable or creatable below a writable one."""
    import os

    from ..io.save import nearest_existing

    probe = nearest_existing(output.parent)
    if output.is_dir() or not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        why = "is a folder" if output.is_dir() else f"cannot be written ({probe} is not a writable folder)"
        raise InvalidParameterError(f"--output {output}: {why}; nothing was fitted")
