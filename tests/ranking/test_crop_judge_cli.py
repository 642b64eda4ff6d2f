"""`multicrop crop --judge`: the record's "ranking" (calls, spend), the summary line, reruns, errors."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from multicrop.cli import main as cli_main
from multicrop.ranking import measured_panel_path

from .conftest import two_copies

FAST = ["-s", "direct", "-k", "auto", "--saliency", "spectral", "--no-faces", "-r", "1:1"]


@pytest.fixture(scope="module")
def photo(tmp_path_factory):
    path = tmp_path_factory.mktemp("judge") / "two.png"
    Image.fromarray(two_copies()).save(path)
    return path


def _run(argv, capsys):
    rc = cli_main.main([str(a) for a in argv])
    cap = capsys.readouterr()
    return rc, [json.loads(line) for line in cap.out.splitlines() if line.startswith("{")], cap.err


def test_judge_writes_ranking_with_calls_and_spend_and_a_rerun_costs_nothing(photo, tmp_path, capsys):
    store = tmp_path / "store" / "calls.sqlite"
    argv = ["crop", photo, "-o", tmp_path / "out", *FAST, "--judge", measured_panel_path(), "--shortlist", "3",
            "--judge-store", store, "--json", "--no-preview"]
    rc, (rec,), err = _run(argv, capsys)
    assert rc == 0, err
    r = rec["ranking"]
    n = sum(len(c["alternatives"]) for c in r["crops"])
    assert len(r["crops"]) == rec["k"] and all(len(c["alternatives"]) <= 3 for c in r["crops"])
    assert (r["alternatives"], r["calls_made"], r["calls_reused"], r["spend_usd"]) == (n, n, 0, 0.0)
    assert (r["shortlist"], r["top"]) == (3, None)
    assert r["panel"]["families"] == [{"name": "measured", "backend": "measured", "model": "measured-v1"}]
    assert [c["box"] for c in rec["crops"]] == [c["alternatives"][c["chosen"]]["box"] for c in r["crops"]]
    line = f"judged {n} alternatives of {rec['k']} crop{'s' * (rec['k'] != 1)} with panel panel.measured.toml: " \
           f"{n} calls, 0 reused, $0.0000"
    assert line in err and store.is_file()
    rc, (again,), err = _run(argv, capsys)
    assert rc == 0 and (again["ranking"]["calls_made"], again["ranking"]["calls_reused"]) == (0, n)
    assert f"0 calls, {n} reused" in err and again["crops"] == rec["crops"]
    # "measured" names the shipped panel (the --help says so): the same panel, the same calls, all reused
    rc, (named,), err = _run([a if a != measured_panel_path() else "measured" for a in argv], capsys)
    assert rc == 0 and named["ranking"]["calls_reused"] == n and named["crops"] == rec["crops"]


def test_without_judge_the_record_has_no_ranking(photo, capsys):
    rc, (rec,), _ = _run(["crop", photo, *FAST, "--dry-run"], capsys)
    assert rc == 0 and "ranking" not in rec


@pytest.mark.parametrize(("extra", "message"), [
    (["--shortlist", "3"], "--shortlist needs --judge PANEL.toml"),
    (["--judge-store", "x.sqlite"], "--judge-store needs --judge PANEL.toml"),
    (["--judge", "missing.toml"], "panel file missing.toml does not exist"),
    (["--judge", "PANEL", "--shortlist", "0"], "--shortlist must be a positive integer, got 0"),
])
def test_bad_judge_options_fail_in_one_line(photo, tmp_path, capsys, extra, message):
    extra = [str(measured_panel_path()) if a == "PANEL" else a for a in extra]
    rc, recs, err = _run(["crop", photo, *FAST, "-o", tmp_path / "out", "--json", *extra], capsys)
    assert rc != 0 and not recs
    assert err.strip() == f"multicrop: error: {message}"
    assert not (tmp_path / "out").exists()


def test_dry_run_with_judge_is_refused_before_any_call(photo, tmp_path, capsys):
    store = tmp_path / "calls.sqlite"
    rc, recs, err = _run(["crop", photo, *FAST, "--dry-run", "--judge", measured_panel_path(),
                          "--judge-store", store], capsys)
    assert rc != 0 and not recs and not store.exists()
    assert err.strip() == ("multicrop: error: --dry-run cannot be used with --judge: the panel makes judge calls "
                           "(possibly paid) and writes the call store; drop --dry-run or --judge")


def test_another_strategy_is_warned_that_the_panel_cannot_choose(photo, tmp_path, capsys):
    rc, (rec,), err = _run(["crop", photo, "-s", "partition", "-k", "1", "--saliency", "spectral", "--no-faces",
                            "-r", "1:1", "-o", tmp_path, "--json", "--no-preview", "--judge", measured_panel_path()],
                           capsys)
    assert rc == 0 and "strategy partition lists each crop alone" in err
    assert all(len(c["alternatives"]) == 1 and c["chosen"] == 0 for c in rec["ranking"]["crops"])
