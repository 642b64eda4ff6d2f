"""The root command: version, help, and library errors as one line."""

import pytest

import multicrop
from multicrop.cli import main as cli_main
from multicrop.errors import InvalidParameterError


def test_version(capsys):
    assert cli_main.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"multicrop {multicrop.__version__}"


def test_unknown_option_fails(capsys):
    assert cli_main.main(["--no-such-flag"]) != 0


def test_library_error_becomes_one_line_and_exit_1(monkeypatch, capsys):
    def boom(*args, **kwargs):
        raise InvalidParameterError("k must be >= 1, got 0")

    monkeypatch.setattr(cli_main, "app", boom)
    assert cli_main.main(["anything"]) == 1
    err = capsys.readouterr().err
    assert err == "multicrop: error: k must be >= 1, got 0\n"


@pytest.mark.parametrize("group", ["eval", "bench"])
def test_groups_are_attached(group, capsys):
    assert cli_main.main([group, "--help"]) == 0
    assert "Usage" in capsys.readouterr().out
