"""``multicrop judge`` (and ``judge fit``) and ``multicrop judges list``; the store's commands are in :mod:`.store`."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import typer
from typer import _click
from typer.core import TyperCommand, TyperGroup

from ..errors import InvalidParameterError, JudgeError
from ..judges.config import RunConfig
from .invocation import command_line
from .lazy import plain_app
from .judge_fit import judge_fit
from .judge_inputs import expand_inputs
from .options import ProgressBar
from .store import db_path

__all__ = ["register"]

judges_app = plain_app(help="Judge backends.", no_args_is_help=True)


#: The defaults of ``--concurrency``, ``--timeout`` and ``--retries`` (their one home is RunConfig).
_RUN = RunConfig()


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
    holistic_repetitions: int | None = typer.Option(
        None, "--holistic-repetitions", help="Override the panel's (0 to 100)."),
    dimension_repetitions: int | None = typer.Option(
        None, "--dimension-repetitions", help="Override the panel's (0 to 100)."),
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
    db = db_path(db)
    images = expand_inputs(inputs, recursive=recursive)
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
    from ..judges.plan import check_repetitions
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
    overrides = {k: check_repetitions(v, name=f"--{k.replace('_', '-')} (the panel's {k})")
                 for k, v in (("holistic_repetitions", holistic_repetitions),
                              ("dimension_repetitions", dimension_repetitions)) if v is not None}
    return parse_panel(pnl.to_dict() | overrides, source="panel") if overrides else pnl  # a file's: checked as parsed


def _summary_line(summary, *, n_images: int, db: Path, output: Path | None) -> str:
    return (
        f"{n_images} image{'s' * (n_images != 1)}, {summary.planned} calls planned: {summary.already_done} already in {db}, "
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


class _DefaultContext(_click.Context):
    """The context of the default command: its path is its group's, ``multicrop judge``, as the user types it."""

    @property
    def command_path(self) -> str:  # noqa: D102
        return self.parent.command_path if self.parent is not None else super().command_path


class _DefaultCommand(TyperCommand):
    """The group's default command: usage lines and "Try ... --help" name ``multicrop judge``, not its hidden name."""

    context_class = _DefaultContext


_DEFAULT = "run"
judge_app = plain_app(cls=_JudgeGroup, help="Score photos with judges; `judge fit` fits a head.",
                        no_args_is_help=False, add_completion=False)


def register(app: typer.Typer) -> None:
    """Add ``judge`` (and ``judge fit``) and ``judges`` to the root app."""
    judge_app.command(_DEFAULT, hidden=True, cls=_DefaultCommand)(judge_command)
    judge_app.command("fit")(judge_fit)  # in its own module; imported with this one
    app.add_typer(judge_app, name="judge")
    judges_app.command("list")(judges_list)
    app.add_typer(judges_app, name="judges")
