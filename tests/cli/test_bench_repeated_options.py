"""``multicrop bench subjects``: an option value given twice is one method, measured once."""

from __future__ import annotations

import json

import pytest

from multicrop.cli import main as cli_main

from .test_bench_cli import _outlined


def test_repeated_values_are_measured_once_in_first_order(tmp_path, capsys):
    src = _outlined(tmp_path / "set")
    rc = cli_main.main(["bench", "subjects", str(src), "-s", "direct", "-s", "direct", "-k", "2", "-k", "auto",
                        "-k", "2", "--no-progress"])
    assert rc == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{src}: 1 photos with >= 2 objects of >= 3 % of the frame"
    rows = [line.split() for line in out[2:]]
    assert [r[:3] for r in rows] == [["direct", "k=2", "1"], ["direct", "k=auto", "1"]]  # method, photos


def test_repeated_values_keep_the_json_counts(tmp_path, capsys):
    src = _outlined(tmp_path / "set")
    rc = cli_main.main(["bench", "subjects", str(src), "-s", "partition", "-s", "partition", "-k", "2", "-k", "2",
                        "--no-progress", "--json"])
    assert rc == 0
    (method,) = json.loads(capsys.readouterr().out)["methods"]
    assert method["name"] == "partition k=2"
    assert (method["summary"]["photos"], method["summary"]["crops"]) == (1, 2)


def test_a_repeated_peer_is_one_row(tmp_path, capsys):
    pytest.importorskip("smartcrop")
    src = _outlined(tmp_path / "set")
    rc = cli_main.main(["bench", "subjects", str(src), "-s", "direct", "-k", "2", "--peer", "smartcrop",
                        "--peer", "smartcrop", "--no-progress", "--json"])
    assert rc == 0
    methods = json.loads(capsys.readouterr().out)["methods"]
    assert [(m["name"], m["summary"]["photos"]) for m in methods] == [("direct k=2", 1), ("smartcrop", 1)]
