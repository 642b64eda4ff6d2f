"""``multicrop judge``, ``multicrop judges list`` and ``multicrop store path|stats|runs|show|export|verify``."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import typer
from typer.core import TyperGroup

from ..errors import InvalidParameterError, JudgeError, StoreError
from ..judges.config import RunConfig
from .invocation import command_line
from .lazy import plain_app
from .options import ProgressBar

__all__ = ["register"]

judges_app = plain_app(help="Judge backends.", no_args_is_help=True)
store_app = plain_app(help="The SQLite checkpoint store of judge calls.", no_args_is_help=True)


def _expand_inputs(inputs: list[Path], *, recursive: bool = False):
    """Image paths from files, directories and CSV files (column ``image``).

    ``recursive``: directories also give the photos of their sub-folders.

    A file named twice (by any route) is judged once, under its first label.
    Labels are what the output table's ``image`` column shows, so two
    different files that would share one label are an error.
    """
    from ..judges.types import ImageRef

    refs: list = []
    seen: set[Path] = set()  # resolved paths
    owner: dict[str, Path] = {}  # label -> resolved path
    for item in inputs:
        for path, label in _paths_of(item, recursive=recursive):
            real = path.resolve()
            if real in seen:
                continue
            if label in owner:
                raise InvalidParameterError(
                    f"two different files would both be labelled {label!r} in the output table: {owner[label]} and "
                    f"{real}; list them by distinct paths (e.g. in one CSV, or as files or directories)"
                )
            try:
                refs.append(ImageRef(path, label=label))
            except FileNotFoundError:
                raise InvalidParameterError(f"image {label!r} does not exist") from None
            except IsADirectoryError:
                raise InvalidParameterError(f"image {label!r} is a directory") from None
            seen.add(real)
            owner[label] = real
    if not refs:
        raise InvalidParameterError("no images to judge")
    return refs


def _paths_of(item: Path, *, recursive: bool = False) -> list[tuple[Path, str]]:
    """``(path, label)`` of the images one input names: a file, a directory's images, or a CSV's ``image`` column."""
    from ..io import SUPPORTED_SUFFIXES

    if item.is_dir():
        found = item.rglob("*") if recursive else item.iterdir()
        return [(p, str(p)) for p in sorted(found) if p.suffix.lower() in SUPPORTED_SUFFIXES and p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(item).parts)]
    if item.suffix.lower() == ".csv":
        import pandas as pd

        try:
            df = pd.read_csv(item)
        except (OSError, ValueError) as exc:
            raise InvalidParameterError(f"{item}: cannot read CSV ({exc})") from None
        if "image" not in df.columns:
            raise InvalidParameterError(f"{item}: needs a column 'image', has {list(df.columns)}")
        return [(Path(v) if Path(v).is_absolute() else item.parent / v, v) for v in df["image"].astype(str)]
    if item.exists():
        return [(item, str(item))]
    raise InvalidParameterError(f"input {str(item)!r} does not exist")


#: The defaults of ``--concurrency``, ``--timeout`` and ``--retries`` (their one home is RunConfig).
_RUN = RunConfig()


_DB_HELP = "Store file (default: runs.sqlite in the user data directory; see `multicrop store path`)."


def _db_path(db: Path | None) -> Path:
    from ..judges.store.paths import default_store_path

    return default_store_path() if db is None else db


def judge_command(
    inputs: list[Path] = typer.Argument(..., help="Images, directories of images, or CSV files with an 'image' column."),
    panel: Path | None = typer.Option(None, "--panel", "-p", help="Panel TOML (default: the offline 'measured' judge)."),
    model: str | None = typer.Option(None, "--model", "-m", help="Judge with this one model (OpenAI-compatible endpoint), no panel file."),
    base_url: str | None = typer.Option(None, "--base-url", help="Endpoint of --model, e.g. http://localhost:8000/v1 (default: OpenAI)."),
    api_key_env: str | None = typer.Option(None, "--api-key-env", help="Environment variable holding the key of --model ('' for none)."),
    head: Path | None = typer.Option(None, "--head", help="Judge with the offline embedding judge and this head (from `multicrop judge fit`), no panel file."),
    recursive: bool = typer.Option(False, "--recursive", "-R", help="Folders: also take photos in subfolders."),
    db: Path | None = typer.Option(None, "--db", "-d", help="Checkpoint store (SQLite; default: `multicrop store path`); reruns perform only missing calls."),
    concurrency: int = typer.Option(_RUN.concurrency, "--concurrency", "-c", help="Calls in flight at once."),
    timeout: float = typer.Option(_RUN.timeout_s, "--timeout", help="Per-call timeout in seconds."),
    retries: int = typer.Option(_RUN.max_retries, "--retries", help="Retries on 429 / 5xx / timeouts."),
    holistic_repetitions: int | None = typer.Option(None, "--holistic-repetitions", help="Override the panel's."),
    dimension_repetitions: int | None = typer.Option(None, "--dimension-repetitions", help="Override the panel's."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Score table: .csv or .parquet."),
    as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr (terminals only)."),
) -> None:
    """Score images with a panel of judges (or one model, -m, or a fitted head, --head), holistically and on the five rubric dimensions.

    With no -o, a short table of mean scores per image is printed.  `multicrop judge fit RATINGS --images DIR -o HEAD`
    fits a head on your own ratings (see `multicrop judge fit --help`).
    """
    from ..io.tables import write_table
    from ..judges.quick import format_summary, score_summary
    from ..judges.runner import judge_images, scores_table
    from ..judges.store import CallStore

    if output is not None and output.suffix.lower() not in (".csv", ".parquet"):
        raise InvalidParameterError(f"--output must end in .csv or .parquet, got {output.name!r}")
    cfg = _run_config(concurrency=concurrency, timeout=timeout, retries=retries)
    pnl = _panel(panel, model=model, base_url=base_url, api_key_env=api_key_env, head=head,
                 holistic_repetitions=holistic_repetitions, dimension_repetitions=dimension_repetitions)
    db = _db_path(db)
    images = _expand_inputs(inputs, recursive=recursive)
    # Create the backends before the store is opened: a missing API key (or a
    # bad option) must fail without leaving an empty store file behind.
    backends = {fam.name: fam.create() for fam in pnl.families}
    bar = ProgressBar("judging", enabled=progress, unit="calls", fields={"spend": "${:.4f}"})

    def bad_image(label: str, problem: str) -> None:  # one line per unreadable image, as it is found
        what = problem if problem.startswith(label) else f"{label}: {problem}"
        bar.echo(f"multicrop: skipping unreadable image {what}")

    with CallStore(db) as store, bar:
        summary, plan = judge_images(images, pnl, store, config=cfg, backends=backends, on_start=bar.start,
                                     on_progress=lambda n, failed, cost: bar.advance(n, failed, spend=cost),
                                     on_bad_image=bad_image,
                                     command=shlex.join(command_line()) if command_line() else None)
        table = scores_table(plan, store)
    if output is not None:
        write_table(table, output)
    if as_json:
        info = summary.to_dict() | {"db": str(db), "output": str(output) if output else None, "images": len(images)}
        typer.echo(json.dumps(info))
    else:
        if output is None:
            typer.echo(format_summary(score_summary(table)))
        typer.echo(_summary_line(summary, n_images=len(images), db=db, output=output))
    problems = _problems(summary)
    if problems:
        raise JudgeError("; ".join(problems))


def _run_config(*, concurrency: int, timeout: float, retries: int) -> RunConfig:
    """The run settings, each checked under the name of its option."""
    if concurrency < 1:
        raise InvalidParameterError(f"--concurrency must be an integer >= 1, got {concurrency}")
    if not timeout > 0:
        raise InvalidParameterError(f"--timeout must be a number of seconds > 0, got {timeout:g}")
    if retries < 0:
        raise InvalidParameterError(f"--retries must be an integer >= 0, got {retries}")
    return RunConfig(concurrency=concurrency, timeout_s=timeout, max_retries=retries)


def _panel(path: Path | None, *, model: str | None, base_url: str | None, api_key_env: str | None,
           holistic_repetitions: int | None, dimension_repetitions: int | None, head: Path | None = None):
    """The panel of ``--panel``, ``--model``, ``--head`` or the default one, with the repetition overrides applied."""
    from ..judges.panel import default_panel, load_panel, parse_panel
    from ..judges.quick import head_panel, model_panel

    if model is None and (base_url is not None or api_key_env is not None):
        raise InvalidParameterError("--base-url and --api-key-env go with --model (a panel file sets them per family)")
    given = [name for name, v in (("--panel", path), ("--model", model), ("--head", head)) if v is not None]
    if len(given) > 1:
        raise InvalidParameterError(f"give one of --panel, --model and --head, not {' and '.join(given)}")
    if head is not None:
        pnl = head_panel(head)
    elif model is not None:
        pnl = model_panel(model, base_url=base_url, api_key_env=api_key_env)
    else:
        pnl = load_panel(path) if path is not None else default_panel()
    overrides = {k: v for k, v in (("holistic_repetitions", holistic_repetitions),
                                   ("dimension_repetitions", dimension_repetitions)) if v is not None}
    return parse_panel(pnl.to_dict() | overrides, source="panel") if overrides else pnl


def _summary_line(summary, *, n_images: int, db: Path, output: Path | None) -> str:
    return (
        f"{n_images} images, {summary.planned} calls planned: {summary.already_done} already in {db}, "
        f"{summary.performed} performed ({summary.parse_failures} unparsed replies), {summary.failed} failed, "
        + (f"{summary.skipped} skipped (unreadable images: {len(summary.bad_images)}), " if summary.skipped else "")
        + (f"{summary.identical} shared by identical images, " if summary.identical else "")
        + (f"{summary.collapsed} repetitions of deterministic judges answered by one call, "
           if summary.collapsed else "")
        + (f"{summary.abandoned} not made (stopped families), " if summary.abandoned else "")
        + (f"{summary.done_elsewhere} made by another run on the same store, " if summary.done_elsewhere else "")
        + f"${summary.cost_usd:.4f}, {summary.elapsed_s:.1f} s" + (f"; table -> {output}" if output else "")
    )


def _problems(summary) -> list[str]:
    """What went wrong in a run, one sentence each (the command then exits 1)."""
    problems = []
    if summary.bad_images:
        problems.append(f"{len(summary.bad_images)} unreadable image(s) skipped (listed above)")
    for fam, why in summary.stopped_families:
        problems.append(f"family {fam!r} {why}; the other families ran on; check its base_url and run the same "
                        "command again to make only the missing calls")
    if summary.failed:
        first = summary.failures[0][1] if summary.failures else ""
        problems.append(f"{summary.failed} calls failed after retries (first: {first}); "
                        "run the same command again to retry only those")
    return problems


def judges_list(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List judge backends and their capabilities and options."""
    import dataclasses

    from ..judges.backends import JUDGE_BACKENDS

    rows = []
    for name, cls in JUDGE_BACKENDS.items():
        rows.append({
            "name": name, "version": cls.version, "description": cls.description,
            "supports_json_schema": cls.supports_json_schema, "supports_images": cls.supports_images,
            "needs_network": cls.needs_network, "deterministic": cls.deterministic,
            "reads_prompt": cls.reads_prompt,
            "options": {f.name: f.default for f in dataclasses.fields(cls.Options)},
        })
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        flags = ", ".join(k for k in ("supports_json_schema", "supports_images", "needs_network", "deterministic",
                                      "reads_prompt") if r[k])
        typer.echo(f"{r['name']} (v{r['version']}): {r['description']}")
        typer.echo(f"    flags: {flags or '-'}")
        typer.echo(f"    options: {', '.join(f'{k}={v!r}' for k, v in r['options'].items()) or '-'}")


def store_path() -> None:
    """Where the default store lives (used when --db is not given)."""
    typer.echo(str(_db_path(None)))


def store_stats(db: Path | None = typer.Argument(None, help=_DB_HELP),
                as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Counts, spend and families of a store."""
    from ..judges.store import CallStore

    with CallStore(_db_path(db), readonly=True) as store:
        st = store.stats()
    if as_json:
        typer.echo(json.dumps(st.to_dict(), indent=2))
        return
    typer.echo(f"{st.path}: schema v{st.schema_version}, {st.n_calls} calls over {st.n_images} images, "
               f"{st.n_parse_failures} unparsed replies, {st.n_failures} calls still failing")
    typer.echo(f"  tokens {st.prompt_tokens} in / {st.completion_tokens} out, cost ${st.cost_usd:.4f}, "
               f"{st.first_utc or '-'} .. {st.last_utc or '-'}")
    for fam, n in st.per_family.items():
        typer.echo(f"  {fam}: {n}")


def store_export(db: Path | None = typer.Argument(None, help=_DB_HELP),
                 output: Path = typer.Option(..., "--output", "-o", help="Output .csv, .jsonl or .parquet.")) -> None:
    """Export every call record."""
    from ..judges.store import CallStore

    with CallStore(_db_path(db), readonly=True) as store:
        n = store.export(output)
    typer.echo(f"{n} calls -> {output}")


def store_verify(db: Path | None = typer.Argument(None, help=_DB_HELP),
                 as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """SQLite's integrity check, then re-hash every record; exit 1 on damage or mismatches."""
    from ..judges.store import CallStore

    db = _db_path(db)
    with CallStore(db, readonly=True) as store:
        rep = store.verify()
    if rep.damage:
        if as_json:
            typer.echo(json.dumps(rep.to_dict(), indent=2))
        more = f" (and {len(rep.damage) - 1} more problems)" if len(rep.damage) > 1 else ""
        raise StoreError(f"{db}: the store is damaged: SQLite's integrity check says {rep.damage[0]!r}{more}; "
                         "restore it from a backup")
    if as_json:
        typer.echo(json.dumps(rep.to_dict(), indent=2))
    else:
        for key, problem in rep.mismatches:
            typer.echo(f"MISMATCH {key}: {problem}")
        typer.echo(f"{rep.n_checked} calls checked, {len(rep.mismatches)} mismatches")
    if not rep.ok:
        raise StoreError(f"{db}: {len(rep.mismatches)} records fail verification")


def store_runs(db: Path | None = typer.Argument(None, help=_DB_HELP),
               as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The run log: one line per run (when, status, counts, spend, command)."""
    from ..judges.store import CallStore

    with CallStore(_db_path(db), readonly=True) as store:
        runs = store.runs()
    if as_json:
        typer.echo(json.dumps([r.to_dict() for r in runs], indent=2))
        return
    for r in runs:
        counts = (f"{r.performed} performed, {r.already_done} already done, {r.failed} failed, ${r.cost_usd:.4f}"
                  if r.performed is not None else "no counts (did not end)")
        typer.echo(f"run {r.id}  {r.started_utc} .. {r.ended_utc or '-'}  {r.status}  multicrop {r.tool_version}  "
                   f"{counts}  $ {r.command}")
    if not runs:
        typer.echo("no runs logged")


def store_show(call: str = typer.Argument(..., help="Call key (sha256:...) or a unique prefix of its digits."),
               db: Path | None = typer.Option(None, "--db", "-d", help=_DB_HELP),
               as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """One call: its record, the exact prompt text sent, and the run that made it."""
    from ..judges.store import CallStore

    with CallStore(_db_path(db), readonly=True) as store:
        d = store.show(call)
    info = d.record.to_dict() | {"prompt": d.prompt, "run": d.run.to_dict() if d.run else None}
    if as_json:
        typer.echo(json.dumps(info, indent=2, ensure_ascii=False))
        return
    for k, v in d.record.to_dict().items():
        typer.echo(f"{k}: {v}")
    typer.echo(f"run: {d.run.id} ({d.run.started_utc}, {d.run.command})" if d.run else "run: not logged (older store)")
    typer.echo("prompt:" if d.prompt is not None else "prompt: not recorded (older store)")
    if d.prompt is not None:
        typer.echo(d.prompt)


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
    if folds < 2:
        raise InvalidParameterError(f"--folds must be an integer >= 2, got {folds}")
    fmt = fmt or _guess_format(ratings)
    RATINGS_FORMATS.get(fmt)
    rat = load_ratings(ratings, fmt)
    files = [p for item in images for p, _ in _paths_of(item, recursive=recursive)]
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

    if path.is_dir():
        return "para"
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            header = fh.readline().strip()
    except OSError as exc:
        raise InvalidParameterError(f"ratings file {path}: cannot read ({exc.strerror or exc})") from None
    return guess_format(header.split(",") if "=" not in header else [header]) or "csv"


class _JudgeGroup(TyperGroup):
    """``multicrop judge PHOTOS...`` runs the judges; ``multicrop judge fit ...`` fits a head.

    A first argument that names a sub-command (``fit``) selects it; anything
    else is the photos of the default command (a folder named ``fit`` is
    ``./fit``).
    """

    def parse_args(self, ctx, args):  # noqa: D102
        if not args or args[0] not in self.commands or args[0] == _DEFAULT:
            args = [_DEFAULT, *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx, formatter):  # noqa: D102
        formatter.write_usage("multicrop judge", "[OPTIONS] INPUTS... | fit RATINGS --images DIR -o HEAD")


_DEFAULT = "run"
judge_app = plain_app(cls=_JudgeGroup, help="Score photos with judges; `judge fit` fits a head.",
                        no_args_is_help=False, add_completion=False)


def register(app: typer.Typer) -> None:
    """Add ``judge`` (and ``judge fit``), ``judges`` and ``store`` to the root app."""
    judge_app.command(_DEFAULT, hidden=True)(judge_command)
    judge_app.command("fit")(judge_fit)
    app.add_typer(judge_app, name="judge")
    judges_app.command("list")(judges_list)
    store_app.command("path")(store_path)
    store_app.command("stats")(store_stats)
    store_app.command("runs")(store_runs)
    store_app.command("show")(store_show)
    store_app.command("export")(store_export)
    store_app.command("verify")(store_verify)
    app.add_typer(judges_app, name="judges")
    app.add_typer(store_app, name="store")
