"""The commands' one progress bar (:mod:`multicrop.cli.progress`), drawn on a stand-in terminal."""

from __future__ import annotations

import io
import sys

import pytest

from multicrop.cli.progress import ProgressBar


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch):
    """A stand-in terminal as stderr; set in the test's own phase (pytest's capture resets sys.stderr between)."""
    term = _Terminal()
    monkeypatch.setenv("COLUMNS", "120")
    yield lambda: monkeypatch.setattr(sys, "stderr", term) or term


def test_a_resumed_count_starts_at_what_was_done_and_rates_only_the_new_work(terminal):
    terminal = terminal()
    with ProgressBar("partition on all", unit="images", failures=False) as bar:
        bar.start(10, done=4)
        bar.advance()
        bar.echo("resuming: 4 of 10 images already in results.jsonl")
        task = bar.bar.tasks[0]
        assert bar.shown and (task.completed, task.total, task.description) == (5, 10, "partition on all")
    assert bar.n == 1  # the rate counts the one image done now, not the four read back
    out = terminal.getvalue()
    assert "resuming: 4 of 10 images already in results.jsonl" in out and "5/10" in out


def test_stages_name_the_step_and_the_share_of_the_job(terminal):
    terminal = terminal()
    with ProgressBar("judge protocol", unit=None, transient=False) as bar:
        bar.stage("bootstrap over images", 0.3)
        bar.stage("robustness over fold partitions", 1.7)  # a share past the end is the end
        task = bar.bar.tasks[0]
        assert (task.completed, task.total, task.description) == (1.0, 1.0, "robustness over fold partitions")
    assert "robustness over fold partitions" in terminal.getvalue() and "100%" in terminal.getvalue()


def test_a_description_is_text_not_markup(terminal):
    terminal = terminal()
    with ProgressBar("[bold]x[/bold] on all", unit="images") as bar:
        bar.start(1)
        bar.advance()
    assert "[bold]x[/bold] on all" in terminal.getvalue()


def test_without_a_terminal_stages_are_kept_but_nothing_is_drawn(capsys):
    bar = ProgressBar("judge protocol", unit=None)
    with bar:
        bar.stage("out-of-fold H+P with gb", 0.25)
    assert not bar.shown and (bar.what, bar.fraction) == ("out-of-fold H+P with gb", 0.25)
    assert capsys.readouterr().err == ""
