"""``multicrop judge``: its usage line is the command typed, and repetitions are at most 100 (MAX_REPETITIONS)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from multicrop.cli import main as cli_main


@pytest.fixture
def photo(tmp_path):
    p = tmp_path / "p.jpg"
    Image.fromarray((np.random.default_rng(0).random((40, 56, 3)) * 255).astype(np.uint8)).save(p)
    return p


def run(argv, capsys):
    code = cli_main.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_help_and_usage_errors_name_the_command_as_typed(capsys):
    # The program name before "judge" is argv[0] (multicrop when installed; python -m ... under pytest).
    code, out, _ = run(["judge", "--help"], capsys)
    assert code == 0 and out.splitlines()[0].endswith(" judge [OPTIONS] {inputs}...")
    code, _, err = run(["judge"], capsys)
    usage, hint = err.splitlines()[:2]
    assert code == 2 and usage.endswith(" judge [OPTIONS] {inputs}...") and hint.endswith(" judge --help' for help.")
    assert " run " not in err and " run'" not in err
    code, out, _ = run(["judge", "fit", "--help"], capsys)  # the sub-command keeps its own name
    assert code == 0 and out.splitlines()[0].endswith(" judge fit [OPTIONS] {ratings}")
    code, _, err = run(["judge", "fit"], capsys)
    assert code == 2 and err.splitlines()[1].endswith(" judge fit --help' for help.")


@pytest.mark.parametrize("option", ["--holistic-repetitions", "--dimension-repetitions"])
@pytest.mark.parametrize("value", ["99999999999999999999", "1000000", "-1"])
def test_repetitions_beyond_the_bound_are_refused_before_anything_runs(tmp_path, photo, capsys, option, value):
    db = tmp_path / "r.sqlite"
    code, out, err = run(["judge", photo, "--db", db, "--no-progress", option, value], capsys)
    key = option[2:].replace("-", "_")
    assert code == 1 and out == ""
    assert err == f"multicrop: error: {option} (the panel's {key}) must be an integer in [0, 100], got {value}\n"
    assert not db.exists()


def test_the_bound_is_planned_and_one_more_is_not(tmp_path, photo, capsys):
    db = tmp_path / "r.sqlite"
    code, out, err = run(["judge", photo, "--db", db, "--no-progress",
                          "--holistic-repetitions", "100", "--dimension-repetitions", "0"], capsys)
    assert code == 0, err
    assert "1 image, 100 calls planned" in out and "99 repetitions of deterministic judges" in out
    code, out, err = run(["judge", photo, "--db", db, "--no-progress",
                          "--holistic-repetitions", "101", "--dimension-repetitions", "0"], capsys)
    expected = "--holistic-repetitions (the panel's holistic_repetitions) must be an integer in [0, 100], got 101"
    assert code == 1 and expected in err


def test_a_panel_file_beyond_the_bound_is_refused_before_the_store_is_opened(tmp_path, photo, capsys):
    panel = tmp_path / "big.toml"
    panel.write_text('holistic_repetitions = 1000000\n[[families]]\nname = "m"\nbackend = "measured"\n'
                     'model = "measured-v1"\n', encoding="utf-8")
    db = tmp_path / "r.sqlite"
    code, _, err = run(["judge", photo, "--db", db, "--no-progress", "--panel", panel], capsys)
    assert code == 1 and err == (f"multicrop: error: {panel}: holistic_repetitions must be an integer in [0, 100], "
                                 "got 1000000\n")
    assert not db.exists()
