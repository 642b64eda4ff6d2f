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


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter has imported after running ``code`` (stdout silenced)."""
    import subprocess
    import sys

    prog = ("import contextlib, io, sys\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    {code}\n"
            "print('\\n'.join(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=120, check=True)
    return set(out.stdout.split())


#: What `import multicrop` and the help pages must never import: the array, image and model stacks,
#: the judge tables, and rich (its help renderer alone costs as much as Typer).
_HEAVY = ("numpy", "PIL", "cv2", "onnxruntime", "pillow_heif", "pandas", "scipy", "sklearn", "rich")


def test_import_multicrop_imports_nothing_heavy():
    mods = _modules_after("import multicrop")
    assert not [m for m in _HEAVY if m in mods]
    assert not [m for m in mods if m.startswith("multicrop.") and m not in ("multicrop.serialize",)]


def test_root_help_imports_no_command_module():
    mods = _modules_after("from multicrop.cli.main import main; main(['--help'])")
    assert not [m for m in _HEAVY if m in mods]
    commands = {m.split(".")[2] for m in mods if m.startswith("multicrop.cli.") and m.count(".") == 2}
    assert commands == {"main", "lazy", "invocation"}


@pytest.mark.parametrize(("args", "modules"), [(["crop", "--help"], {"crop", "crop_steps"}),
                                               (["batch", "crop", "--help"], {"batch"}),
                                               (["eval", "probe", "--help"], {"eval_judges"})])
def test_a_command_imports_only_its_own_modules(args, modules):
    mods = _modules_after(f"from multicrop.cli.main import main; main({args!r})")
    # pydantic: typer 0.29 builds a pydantic TypeAdapter per option parsed (why pyproject pins typer<0.29)
    assert not [m for m in ("numpy", "PIL", "cv2", "onnxruntime", "pillow_heif", "pandas", "pydantic") if m in mods]
    own = {m.split(".")[2] for m in mods if m.startswith("multicrop.cli.") and m.count(".") == 2}
    assert own - {"main", "lazy", "invocation", "options", "progress"} == modules


def _commands_of(group, prefix=()):
    """(path, Lazy entry, the loaded Click command) of every command under a lazy group, recursively."""
    import click  # noqa: F401 - typer's vendored click is what the group returns

    from multicrop.cli.lazy import LazyGroup

    for name, entry in group.table.items():
        cmd = group.get_command(None, name)
        yield (*prefix, name), entry, cmd
        if isinstance(cmd, LazyGroup):
            yield from _commands_of(cmd, (*prefix, name))


def test_the_help_table_says_what_each_command_says():
    import typer

    group = typer.main.get_command(cli_main.app)
    seen = list(_commands_of(group))
    assert len(seen) >= 15
    for path, entry, cmd in seen:
        assert cmd is not None, path
        own = cmd.short_help or (cmd.help or "").split("\n\n")[0].replace("\n", " ").strip()
        assert entry.help == own, path


def test_help_lists_every_command_in_table_order(capsys):
    assert cli_main.main(["--help"]) == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.startswith("  ")]
    assert listed == list(cli_main.COMMANDS)


def test_a_mistyped_command_is_suggested(capsys):
    assert cli_main.main(["cropp"]) == 2
    assert "Did you mean 'crop'?" in capsys.readouterr().err


def test_the_process_s_own_command_freezes_the_collector_before_exit_and_a_caller_s_does_not(tmp_path):
    """``run()`` (the ``multicrop`` script, ``python -m multicrop``) freezes the garbage collector as it returns,
    so the interpreter's last collection skips what the command made; ``main()`` from a program leaves it."""
    import gc
    import subprocess
    import sys
    import tomllib
    from pathlib import Path

    frozen = gc.get_freeze_count()
    assert cli_main.main(["--version"]) == 0 and gc.get_freeze_count() == frozen
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["multicrop"] == "multicrop.cli.main:run"
    prog = ("import gc, sys\nfrom multicrop.cli.main import run\nsys.argv = ['multicrop', '--version']\n"
            "code = run()\nprint(code, gc.get_freeze_count() > 0)")
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert out.stdout.splitlines()[-1] == "0 True"
    bad = subprocess.run([sys.executable, "-c", prog.replace("'--version'", "'--no-such-flag'")],
                         capture_output=True, text=True, cwd=tmp_path)
    assert bad.stdout.splitlines()[-1] == "2 True"  # an error exits through it too


@pytest.mark.parametrize("rel", ["afile/x.jpg", "afile/sub/x.jpg"])
def test_an_output_below_a_file_names_the_file(tmp_path, rel, capsys):
    (tmp_path / "afile").write_text("x")
    assert cli_main.main(["example", str(tmp_path / rel)]) == 1
    assert capsys.readouterr().err == (f"multicrop: error: cannot make a folder at {tmp_path / 'afile'}: it is a "
                                       "file, not a folder\n")
