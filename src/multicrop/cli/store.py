"""``multicrop store path|stats|runs|show|export|verify``: the SQLite checkpoint store of judge calls."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..errors import StoreError
from .lazy import plain_app

__all__ = ["DB_HELP", "db_path", "register"]

store_app = plain_app(help="The SQLite checkpoint store of judge calls.", no_args_is_help=True)

DB_HELP = "Store file (default: runs.sqlite in the user data directory; see `multicrop store path`)."


def db_path(db: Path | None) -> Path:
    """``--db`` as given, or the default store (the user data directory's runs.sqlite)."""
    from ..judges.store.paths import default_store_path

    return default_store_path() if db is None else db


def store_path() -> None:
    """Where the default store lives (used when --db is not given)."""
    typer.echo(str(db_path(None)))


def store_stats(db: Path | None = typer.Argument(None, help=DB_HELP),
                as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Counts, spend and families of a store."""
    from ..judges.store import CallStore

    with CallStore(db_path(db), readonly=True) as store:
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


def store_export(db: Path | None = typer.Argument(None, help=DB_HELP),
                 output: Path = typer.Option(..., "--output", "-o", help="Output .csv, .jsonl or .parquet.")) -> None:
    """Export every call record."""
    from ..judges.store import CallStore

    with CallStore(db_path(db), readonly=True) as store:
        n = store.export(output)
    typer.echo(f"{n} calls -> {output}")


def store_verify(db: Path | None = typer.Argument(None, help=DB_HELP),
                 as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """SQLite's integrity check, then re-hash every record; exit 1 on damage or mismatches."""
    from ..judges.store import CallStore

    db = db_path(db)
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


def store_runs(db: Path | None = typer.Argument(None, help=DB_HELP),
               as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The run log: one line per run (when, status, counts, spend, command)."""
    from ..judges.store import CallStore

    with CallStore(db_path(db), readonly=True) as store:
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
               db: Path | None = typer.Option(None, "--db", "-d", help=DB_HELP),
               as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """One call: its record, the exact prompt text sent, and the run that made it."""
    from ..judges.store import CallStore

    with CallStore(db_path(db), readonly=True) as store:
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


def register(app: typer.Typer) -> None:
    """Add the ``store`` group to the root app."""
    store_app.command("path")(store_path)
    store_app.command("stats")(store_stats)
    store_app.command("runs")(store_runs)
    store_app.command("show")(store_show)
    store_app.command("export")(store_export)
    store_app.command("verify")(store_verify)
    app.add_typer(store_app, name="store")
