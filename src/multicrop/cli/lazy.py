"""Command groups whose commands are imported only when one of them runs.

``multicrop --help`` lists every command from a table of names and one-line
help texts (:class:`Lazy`) without importing a single command module;
``multicrop crop ...`` imports :mod:`multicrop.cli.crop` and nothing of the
judge, batch or evaluation commands.  Each command module keeps its
``register(app)``: the group calls it on a scratch Typer app the first time
one of the module's commands is looked up, and keeps every command it added.

Help is plain (Click's layout, no rich markup): rich's help renderer costs
about as much to import as Typer itself (0.12 s), on every ``--help``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import Any

import typer
from typer import _click
from typer.core import TyperGroup

__all__ = ["Lazy", "LazyGroup", "lazy_group", "plain_app"]


@dataclass(frozen=True)
class Lazy:
    """One command of a lazy group: the module that registers it, or a lazy sub-group of its own.

    ``help`` is the one line ``--help`` lists for it (checked against the
    command's own by ``tests/cli/test_main.py``); ``module`` names a module of
    :mod:`multicrop.cli` whose ``register(app)`` adds the command; ``commands``
    makes it a group of further lazy commands instead.
    """

    help: str
    module: str | None = None
    commands: Mapping[str, Lazy] = field(default_factory=dict)


def plain_app(**options: Any) -> typer.Typer:
    """A Typer app with plain help (no rich markup: rich is imported only for progress bars)."""
    return typer.Typer(rich_markup_mode=None, **options)


def _module_commands(module: str) -> dict[str, _click.Command]:
    """Every command ``multicrop.cli.<module>.register`` adds, as Click commands."""
    mod = importlib.import_module(f"{__package__}.{module}")
    holder = plain_app()
    holder.callback()(lambda: None)  # a group, even when the module adds one command
    mod.register(holder)
    return dict(typer.main.get_command(holder).commands)  # type: ignore[attr-defined]


class LazyGroup(TyperGroup):
    """A Typer group whose commands come from :attr:`table`, each imported on first use."""

    #: name -> Lazy, in the order ``--help`` lists them (set by :func:`lazy_group`).
    table: Mapping[str, Lazy] = {}

    def list_commands(self, ctx: _click.Context) -> list[str]:  # noqa: D102
        return [*self.table, *(n for n in self.commands if n not in self.table)]

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:  # noqa: D102
        if cmd_name not in self.commands and cmd_name in self.table:
            entry = self.table[cmd_name]
            if entry.module is not None:
                loaded = _module_commands(entry.module)
                self.commands.update({n: c for n, c in loaded.items() if n in self.table})
            else:
                self.commands[cmd_name] = lazy_group(entry.commands)(
                    name=cmd_name, help=entry.help, no_args_is_help=True, rich_markup_mode=None)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: _click.Context, args: list[str]):  # noqa: D102
        try:
            return super().resolve_command(ctx, args)
        except _click.exceptions.UsageError as exc:
            if self.suggest_commands and args and "Did you mean" not in exc.message:
                matches = get_close_matches(args[0], self.list_commands(ctx))
                if matches:
                    exc.message = f"{exc.message.rstrip('.')}. Did you mean {', '.join(map(repr, matches))}?"
            raise

    def format_commands(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        """The command list from the table's help lines: no command module is imported to list it."""
        rows = [(name, self.table[name].help if name in self.table else
                 self.commands[name].get_short_help_str(formatter.width))
                for name in self.list_commands(ctx)
                if name in self.table or not self.commands[name].hidden]
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, _click.utils.make_default_short_help(text, limit)) for name, text in rows])


def lazy_group(table: Mapping[str, Lazy]) -> type[LazyGroup]:
    """A :class:`LazyGroup` class over ``table`` (Typer builds groups from a class: ``Typer(cls=...)``)."""
    return type("LazyGroup", (LazyGroup,), {"table": dict(table)})
