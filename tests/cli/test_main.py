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


def _run_without(blocked: str, args: list[str], tmp_path):
    """Run the CLI in a fresh interpreter where importing ``blocked`` fails as if it were not installed."""
    import subprocess
    import sys

    code = (f"import sys; sys.modules[{blocked!r}] = None\n"
            "from multicrop.cli.main import main\n"
            f"sys.exit(main({args!r}))\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)


def test_a_missing_extra_names_the_pip_command(tmp_path):
    (tmp_path / "s.csv").write_text("image,family,prompt_kind,dimension,repetition,score\n")
    (tmp_path / "r.csv").write_text("image,rater,score\n")
    out = _run_without("pandas", ["eval", "judges", "-s", "s.csv", "-r", "r.csv", "-o", "rep"], tmp_path)
    assert out.returncode == 1, out.stderr
    assert out.stderr == ("multicrop: error: `multicrop eval judges` needs the optional package 'pandas', which is not "
                          "installed; install it with: pip install 'multicrop[eval]'\n")
    assert not (tmp_path / "rep").exists()


def test_a_missing_package_of_no_extra_is_not_disguised():
    err = ModuleNotFoundError("No module named 'nope'", name="nope")
    assert cli_main.missing_extra(err, ["crop", "x.jpg"]) is None
    pandas = ModuleNotFoundError("No module named 'pandas'", name="pandas")
    assert str(cli_main.missing_extra(pandas, ["judge", "photos/"])).startswith("`multicrop judge` needs")
    assert "multicrop[judges]" in str(cli_main.missing_extra(pandas, ["judge", "photos/"]))
    assert "multicrop[eval]" in str(cli_main.missing_extra(pandas, ["eval", "probe"]))
