"""The command line of this invocation, as typed (logged with each judge run)."""

from __future__ import annotations

__all__ = ["command_line", "set_command_line"]

_COMMAND_LINE: list[str] = []


def set_command_line(argv: list[str]) -> None:
    """Remember the command line of this invocation (``multicrop.cli.main.main`` sets it)."""
    _COMMAND_LINE[:] = argv


def command_line() -> list[str]:
    """The command line :func:`set_command_line` was given (empty when the CLI was not run by ``main``)."""
    return list(_COMMAND_LINE)
