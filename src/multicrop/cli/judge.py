"""``multicrop judge``, ``multicrop judges list`` and ``multicrop store stats|export|verify``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer

from ..errors import InvalidParameterError, JudgeError, StoreError
from ..judges.config import RunConfig

__all__ = ["register"]

judges_app = typer.Typer(help="Judge backends.", no_args_is_help=True)
store_app = typer.Typer(help="The SQLite checkpoint store of judge calls.", no_args_is_help=True)


def _expand_inputs(inputs: list[Path]):
    """Image paths from files, directories and CSV files (column ``image``).

    A file named twice (by any route) is judged once, under its first label.
    Labels are what the output table's ``image`` column shows, so two
    different files that would share one label are an error.
    """
    from ..judges.types import ImageRef

    refs: list = []
    seen: set[Path] = set()  # resolved paths
    owner: dict[str, Path] = {}  # label -> resolved path
    for item in inputs:
        for path, label in _paths_of(item):
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


def _paths_of(item: Path) -> list[tuple[Path, str]]:
    """``(path, label)`` of the images one input names: a file, a directory's images, or a CSV's ``image`` column."""
    from ..io import SUPPORTED_SUFFIXES

    if item.is_dir():
        return [(p, str(p)) for p in sorted(item.iterdir()) if p.suffix.lower() in SUPPORTED_SUFFIXES and p.is_file()]
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


def judge_command(
    inputs: list[Path] = typer.Argument(..., help="Images, directories of images, or CSV files with an 'image' column."),
    panel: Path | None = typer.Option(None, "--panel", "-p", help="Panel TOML (default: the offline 'measured' judge)."),
    db: Path = typer.Option(Path("runs.sqlite"), "--db", "-d", help="Checkpoint store (SQLite); reruns perform only missing calls."),
    concurrency: int = typer.Option(_RUN.concurrency, "--concurrency", "-c", help="Calls in flight at once."),
    timeout: float = typer.Option(_RUN.timeout_s, "--timeout", help="Per-call timeout in seconds."),
    retries: int = typer.Option(_RUN.max_retries, "--retries", help="Retries on 429 / 5xx / timeouts."),
    holistic_repetitions: int | None = typer.Option(None, "--holistic-repetitions", help="Override the panel's."),
    dimension_repetitions: int | None = typer.Option(None, "--dimension-repetitions", help="Override the panel's."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Score table: .csv or .parquet."),
    as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr (terminals only)."),
) -> None:
    """Score images with a panel of judges, holistically and on the five rubric dimensions."""
    from ..io.tables import write_table
    from ..judges.runner import judge_images, scores_table
    from ..judges.store import CallStore

    if output is not None and output.suffix.lower() not in (".csv", ".parquet"):
        raise InvalidParameterError(f"--output must end in .csv or .parquet, got {output.name!r}")
    pnl = _panel(panel, holistic_repetitions=holistic_repetitions, dimension_repetitions=dimension_repetitions)
    cfg = RunConfig(concurrency=concurrency, timeout_s=timeout, max_retries=retries)
    images = _expand_inputs(inputs)
    # Create the backends before the store is opened: a missing API key (or a
    # bad option) must fail without leaving an empty store file behind.
    backends = {fam.name: fam.create() for fam in pnl.families}
    bar = _ProgressBar(enabled=progress)
    with CallStore(db) as store, bar:
        summary, plan = judge_images(images, pnl, store, config=cfg, backends=backends, on_start=bar.start,
                                     on_progress=bar.advance, on_bad_image=bar.bad_image)
        table = scores_table(plan, store) if output is not None else None
    if output is not None:
        write_table(table, output)
    if as_json:
        info = summary.to_dict() | {"db": str(db), "output": str(output) if output else None, "images": len(images)}
        typer.echo(json.dumps(info))
    else:
        typer.echo(_summary_line(summary, n_images=len(images), db=db, output=output))
    problems = _problems(summary)
    if problems:
        raise JudgeError("; ".join(problems))


def _panel(path: Path | None, *, holistic_repetitions: int | None, dimension_repetitions: int | None):
    """The panel of ``--panel`` (or the default one) with the repetition overrides applied and validated."""
    from ..judges.panel import default_panel, load_panel, parse_panel

    pnl = load_panel(path) if path is not None else default_panel()
    overrides = {k: v for k, v in (("holistic_repetitions", holistic_repetitions),
                                   ("dimension_repetitions", dimension_repetitions)) if v is not None}
    return parse_panel(pnl.to_dict() | overrides, source="panel") if overrides else pnl


class _ProgressBar:
    """The rich progress bar of a run (on stderr, terminals only) and the run's callbacks into it."""

    def __init__(self, *, enabled: bool) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(stderr=True)
        self.bar = Progress(
            TextColumn("judging"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
            TextColumn("${task.fields[spend]:.4f}"), TextColumn("{task.fields[failed]} failed"),
            TimeElapsedColumn(), console=console, disable=not (enabled and console.is_terminal),
        )
        self.task = None
        self.t0 = time.perf_counter()
        self.n, self.cost, self.failed = 0, 0.0, 0

    def __enter__(self) -> _ProgressBar:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)

    def start(self, total: int, done: int) -> None:
        self.task = self.bar.add_task("judge", total=total, rate="", spend=0.0, failed=0)
        self.t0 = time.perf_counter()

    def advance(self, n: int, failed: int, cost: float) -> None:
        self.n += n
        self.cost += cost
        self.failed += failed
        rate = self.n / max(time.perf_counter() - self.t0, 1e-9)
        self.bar.update(self.task, advance=n, rate=f"{rate:.0f} calls/s", spend=self.cost, failed=self.failed)

    def bad_image(self, label: str, problem: str) -> None:
        # One line per unreadable image, as it is found; its calls are skipped.
        what = problem if problem.startswith(label) else f"{label}: {problem}"
        self.bar.console.print(f"multicrop: skipping unreadable image {what}", soft_wrap=True, markup=False,
                               highlight=False)


def _summary_line(summary, *, n_images: int, db: Path, output: Path | None) -> str:
    return (
        f"{n_images} images, {summary.planned} calls planned: {summary.already_done} already in {db}, "
        f"{summary.performed} performed ({summary.parse_failures} unparsed replies), {summary.failed} failed, "
        + (f"{summary.skipped} skipped (unreadable images: {len(summary.bad_images)}), " if summary.skipped else "")
        + (f"{summary.identical} shared by identical images, " if summary.identical else "")
        + (f"{summary.abandoned} not made (stopped families), " if summary.abandoned else "")
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
            "options": {f.name: f.default for f in dataclasses.fields(cls.Options)},
        })
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        flags = ", ".join(k for k in ("supports_json_schema", "supports_images", "needs_network", "deterministic") if r[k])
        typer.echo(f"{r['name']} (v{r['version']}): {r['description']}")
        typer.echo(f"    flags: {flags or '-'}")
        typer.echo(f"    options: {', '.join(f'{k}={v!r}' for k, v in r['options'].items()) or '-'}")


def store_stats(db: Path = typer.Argument(..., help="Store file."),
                as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Counts, spend and families of a store."""
    from ..judges.store import CallStore

    with CallStore(db, readonly=True) as store:
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


def store_export(db: Path = typer.Argument(..., help="Store file."),
                 output: Path = typer.Option(..., "--output", "-o", help="Output .csv, .jsonl or .parquet.")) -> None:
    """Export every call record."""
    from ..judges.store import CallStore

    with CallStore(db, readonly=True) as store:
        n = store.export(output)
    typer.echo(f"{n} calls -> {output}")


def store_verify(db: Path = typer.Argument(..., help="Store file."),
                 as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Re-hash every record; exit 1 listing mismatches."""
    from ..judges.store import CallStore

    with CallStore(db, readonly=True) as store:
        rep = store.verify()
    if as_json:
        typer.echo(json.dumps(rep.to_dict(), indent=2))
    else:
        for key, problem in rep.mismatches:
            typer.echo(f"MISMATCH {key}: {problem}")
        typer.echo(f"{rep.n_checked} calls checked, {len(rep.mismatches)} mismatches")
    if not rep.ok:
        raise StoreError(f"{db}: {len(rep.mismatches)} records fail verification")


def register(app: typer.Typer) -> None:
    """Add ``judge``, ``judges`` and ``store`` to the root app."""
    app.command("judge")(judge_command)
    judges_app.command("list")(judges_list)
    store_app.command("stats")(store_stats)
    store_app.command("export")(store_export)
    store_app.command("verify")(store_verify)
    app.add_typer(judges_app, name="judges")
    app.add_typer(store_app, name="store")
