"""``multicrop eval judges`` and ``multicrop eval probe``: thin over
:mod:`multicrop.evaluation.judges.report` and :mod:`multicrop.evaluation.judges.probe`.

Option defaults are read from :class:`~multicrop.evaluation.judges.config.JudgesReportConfig`
and :class:`~multicrop.evaluation.judges.config.ProbeConfig`, their one home.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import typer

from ..evaluation.judges.config import JudgesReportConfig as ReportConfig
from ..evaluation.judges.config import ProbeConfig

__all__ = ["register"]


def _load(scores: Path, ratings: Path, fmt: str):
    from ..datasets.ratings import RATINGS_FORMATS
    from ..fusion.features import read_judge_table

    reader = RATINGS_FORMATS.create(fmt)  # fail on a bad --format before reading anything
    return read_judge_table(scores), reader.load(ratings)


#: config field -> the option that sets it
_OPTIONS = {"n_resamples": "--resamples", "n_folds": "--folds", "n_partitions": "--partitions",
            "n_splits": "--splits", "confidence": "--confidence", "n_jobs": "--jobs", "combiners": "--combiner",
            "image_key": "--image-key"}


@contextlib.contextmanager
def _naming(scores: Path, ratings: Path):
    """Errors about the pair of inputs (too few shared images, no holistic rows) name both files."""
    from ..errors import DatasetError

    try:
        yield
    except DatasetError as exc:
        raise DatasetError(f"{scores.name} with {ratings.name}: {exc}") from None


def _photo_files(photos: list[Path]) -> list[Path]:
    """The photos of the ``--photos`` folders and their subfolders, folder by folder, each sorted.

    The one photo rule of :func:`multicrop.io.is_photo` (a suffix of
    :data:`multicrop.io.FORMATS`, no dot-file) and, as ``multicrop crop -R``,
    nothing inside a dot-folder; a path that is no folder gives nothing.
    """
    from ..io import folder_photos

    return [p for d in photos if d.is_dir() for p in folder_photos(d, True, outputs=True)]


def _baselines(table, photos: list[Path], *, cache: Path | None, iaa_model: Path | None, iaa_input_size: int,
               iaa_normalisation: str, iaa_output: int):
    """Embeddings (and IAA scores) of the judge table's images, found by file name among ``photos``."""
    import pandas as pd

    from ..embeddings import EMBEDDING
    from ..errors import InvalidParameterError
    from ..evaluation.judges.baselines import Baselines
    from ..judges.fitting import FeatureCache, embed_images, match_images
    from ..judges.types import ImageRef

    files = _photo_files(photos)
    labels = sorted(set(table.data["image"].astype(str)))
    found = match_images(labels, files)
    if not found:
        raise InvalidParameterError(f"--photos: none of the {len(labels)} judged images is among the "
                                    f"{len(files)} photo files (matched by file name)")
    names = [lbl for lbl in labels if lbl in found]
    refs = [ImageRef(found[lbl], label=lbl) for lbl in names]
    emb = embed_images(refs, cache=FeatureCache(cache, model_id=EMBEDDING.id) if cache else None)
    iaa = {}
    if iaa_model is not None:
        from ..embeddings.iaa import IaaModel

        model = IaaModel(iaa_model, input_size=iaa_input_size, normalisation=iaa_normalisation, output=iaa_output)
        values = []
        for i in range(0, len(refs), 16):
            values.extend(model.score([r.array(max(448, iaa_input_size * 2)) for r in refs[i:i + 16]]))
        iaa[iaa_model.stem] = pd.Series(values, index=names)
    return Baselines(embeddings=pd.DataFrame(emb, index=names), iaa=iaa)


def judges(
    scores: Path = typer.Option(..., "--scores", "-s", help="Judge table (.csv or .parquet): image, family, "
                                "prompt_kind, dimension, repetition, score."),
    ratings: Path = typer.Option(..., "--ratings", "-r", help="Human ratings file (or PARA directory)."),
    fmt: str = typer.Option("csv", "--format", "-f", help="Ratings format: eva, para or csv."),
    output: Path = typer.Option(..., "--output", "-o", help="Report directory (created if missing; an existing "
                                "report's files are replaced)."),
    seed: int = typer.Option(ReportConfig.seed, "--seed", help="Seed of folds, rater splits and resamples."),
    resamples: int = typer.Option(ReportConfig.n_resamples, "--resamples", "-B", help="Paired bootstrap resamples."),
    folds: int = typer.Option(ReportConfig.n_folds, "--folds", help="Out-of-fold folds."),
    partitions: int = typer.Option(ReportConfig.n_partitions, "--partitions",
                                   help="Fold partitions for the robustness check."),
    splits: int = typer.Option(ReportConfig.n_splits, "--splits", help="Rater split-halves for the noise ceiling."),
    confidence: float = typer.Option(ReportConfig.confidence, "--confidence",
                                     help="Level of the percentile intervals."),
    combiner: list[str] = typer.Option(list(ReportConfig.combiners), "--combiner", "-c", help="Combiner(s) to run."),
    family: list[str] = typer.Option([], "--family", help="Restrict to these families (repeatable)."),
    jobs: int = typer.Option(ReportConfig.n_jobs, "--jobs", "-j", help="Worker processes for robustness refits."),
    image_key: str = typer.Option(ReportConfig.image_key, "--image-key",
                                  help="Match images: auto, exact, name or stem."),
    transfer_scores: Path = typer.Option(None, "--transfer-scores", help="Judge table of a second dataset."),
    transfer_ratings: Path = typer.Option(None, "--transfer-ratings", help="Ratings of the second dataset."),
    transfer_format: str = typer.Option("csv", "--transfer-format", help="Format of --transfer-ratings."),
    photos: list[Path] = typer.Option([], "--photos", help="Folder(s) of the rated photos (searched recursively): "
                                      "adds the embedding ridge-probe arms, and the --iaa-model arm."),
    embed_cache: Path | None = typer.Option(None, "--embed-cache", help="Keep the photos' embeddings in this .npz."),
    iaa_model: Path | None = typer.Option(None, "--iaa-model", help="A supervised aesthetic model (.onnx) scored as "
                                          "a baseline arm on --photos."),
    iaa_input_size: int = typer.Option(224, "--iaa-input-size", help="Square input side of --iaa-model."),
    iaa_normalisation: str = typer.Option("imagenet", "--iaa-normalisation",
                                          help="Input of --iaa-model: imagenet, unit, symmetric or raw."),
    iaa_output: int = typer.Option(0, "--iaa-output", help="Which output of --iaa-model is the score."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Run the judge-panel protocol and write tables, figures and index.html.

    With --photos, the embedding ridge probe (and its label-budget curve) and an optional --iaa-model join the
    arms as baselines; feature selection and tie-breaking ablations need nothing more than the judge table.
    """
    from rich.console import Console

    from ..errors import InvalidParameterError
    from ..evaluation.judges.report import check_report_dir, evaluate_judges, write_judges_report
    from ..evaluation.judges.result import summary_jsonable
    from .progress import ProgressBar

    if (transfer_scores is None) != (transfer_ratings is None):
        raise InvalidParameterError("--transfer-scores and --transfer-ratings must be given together")
    try:
        cfg = ReportConfig(
            seed=seed, n_resamples=resamples, n_folds=folds, n_partitions=partitions, n_splits=splits,
            confidence=confidence,
            combiners=tuple(combiner), families=tuple(family) or None, n_jobs=jobs, image_key=image_key,
        )
    except InvalidParameterError as exc:  # name the option the user typed, not the config field
        msg = str(exc)
        for field_name, option in _OPTIONS.items():
            if msg.startswith(field_name + " "):
                msg = option + msg[len(field_name):]
        raise InvalidParameterError(msg) from None
    check_report_dir(output)  # before any loading or computing
    if iaa_model is not None and not photos:
        raise InvalidParameterError("--iaa-model needs --photos (the folder of the rated photos)")
    table, human = _load(scores, ratings, fmt)
    transfer = _load(transfer_scores, transfer_ratings, transfer_format) if transfer_scores else None
    baselines = (_baselines(table, photos, cache=embed_cache, iaa_model=iaa_model, iaa_input_size=iaa_input_size,
                            iaa_normalisation=iaa_normalisation, iaa_output=iaa_output) if photos else None)
    console = Console(stderr=True)
    with ProgressBar("judge protocol", enabled=not as_json, unit=None, transient=True) as bar:
        with _naming(scores, ratings):
            report = evaluate_judges(table, human, cfg, transfer=transfer, baselines=baselines, progress=bar.stage)
    write_judges_report(report, output)
    s = report.summary
    for w in s.get("warnings", []):
        console.print(f"warning: {w['message']}", markup=False, highlight=False, soft_wrap=True)
    if as_json:
        typer.echo(json.dumps(summary_jsonable(report), sort_keys=True))
        return
    typer.echo(f"{s['n_images']} images; best single {s['best_single']} rho={s['best_single_rho']:.3f}")
    for _, r in report.arms.iterrows():
        typer.echo(f"  {r['arm']:<18} n={r['n']} rho={r['rho']:.3f} [{r['rho_ci_low']:.3f}, {r['rho_ci_high']:.3f}] "
                   f"tau_b={r['tau_b']:.3f} [{r['tau_b_ci_low']:.3f}, {r['tau_b_ci_high']:.3f}]")
    if s.get("headroom") is not None:
        typer.echo(f"noise ceiling {s['ceiling']['ceiling']:.3f}; headroom {s['headroom']:.1%}")
    c = report.comparisons
    sel = c[(c["metric"] == "spearman") & (c["comparator"] == "best_single")]
    for _, r in sel.iterrows():
        typer.echo(f"  {r['arm']:<14} d_rho={r['delta']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] "
                   f"p={r['p']:.4f} p_bh={r['p_bh']:.4f}")
    typer.echo(f"report: {output / 'index.html'}")


def probe(
    scores: Path = typer.Option(..., "--scores", "-s", help="Judge table with holistic rows."),
    ratings: Path = typer.Option(..., "--ratings", "-r", help="Human ratings with per-rater rows."),
    fmt: str = typer.Option("csv", "--format", "-f", help="Ratings format: eva, para or csv."),
    repetitions: int = typer.Option(ProbeConfig.repetitions, "--repetitions", "-n",
                                    help="Holistic repetitions per family."),
    image_key: str = typer.Option(ProbeConfig.image_key, "--image-key",
                                  help="Match images: auto, exact, name or stem."),
    seed: int = typer.Option(ProbeConfig.seed, "--seed", help="Seed of rater splits and resamples."),
    resamples: int = typer.Option(ProbeConfig.n_resamples, "--resamples", "-B",
                                  help="Bootstrap resamples for the CI."),
    splits: int = typer.Option(ProbeConfig.n_splits, "--splits", help="Rater split-halves for the noise ceiling."),
    confidence: float = typer.Option(ProbeConfig.confidence, "--confidence",
                                     help="Level of the CI of the best rho."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Cheap holistic headroom probe: is a dimension-scored panel worth paying for?"""
    from ..evaluation.judges.probe import probe_headroom
    from ..evaluation.judges.result import json_data

    table, human = _load(scores, ratings, fmt)
    with _naming(scores, ratings):
        res = probe_headroom(table, human, repetitions=repetitions, seed=seed, n_resamples=resamples,
                             n_splits=splits, confidence=confidence, image_key=image_key)
    if as_json:
        typer.echo(json.dumps(json_data(res), sort_keys=True))
        return
    for fam, rho in res.members.items():
        short = res.short_families.get(fam)
        typer.echo(f"  {fam:<20} rho={rho:.3f}"
                   + (f"  (only {short} of {res.repetitions} holistic repetitions available)" if short else ""))
    b = res.best_rho
    typer.echo(f"best {res.best}: rho={b.estimate:.3f} [{b.ci_low:.3f}, {b.ci_high:.3f}]; "
               f"ceiling {res.ceiling.ceiling:.3f}; headroom {res.headroom:.1%}")
    typer.echo(f"verdict: {res.verdict} - {res.advice}")


def register(app: typer.Typer) -> None:
    """Add ``judges`` and ``probe`` to the ``eval`` group."""
    app.command("judges")(judges)
    app.command("probe")(probe)
