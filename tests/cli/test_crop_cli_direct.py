"""`multicrop crop` options of the direct strategy: --k auto, --max-k, --force-k, --one-ratio, and its notes."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from multicrop.cli import main as cli_main
from multicrop.datasets.photos import sample_photo


@pytest.fixture(scope="module")
def portrait(tmp_path_factory):
    path = tmp_path_factory.mktemp("direct") / "astronaut.jpg"
    Image.fromarray(sample_photo("astronaut")).save(path, quality=92)
    return path


def _records(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_a_k_larger_than_the_subjects_writes_only_distinct_crops_and_says_so(portrait, tmp_path, capsys):
    rc = cli_main.main(["crop", str(portrait), "-o", str(tmp_path), "-s", "direct", "-k", "5", "--no-preview",
                        "--json"])
    cap = capsys.readouterr()
    assert rc == 0
    (rec,) = _records(cap.out)
    assert 1 <= rec["k"] < 5
    assert f"wrote {rec['k']} crop" in cap.err and "asked for 5" in cap.err
    assert sorted(p.name for p in tmp_path.glob("astronaut_*.jpg")) == [f"astronaut_{i}.jpg" for i in
                                                                       range(1, rec["k"] + 1)]


def test_force_k_writes_k_crops(portrait, tmp_path, capsys):
    rc = cli_main.main(["crop", str(portrait), "-o", str(tmp_path), "-s", "direct", "-k", "3", "--force-k",
                        "--no-preview", "--json"])
    assert rc == 0
    (rec,) = _records(capsys.readouterr().out)
    assert rec["k"] == 3


def test_k_auto_respects_max_k(portrait, tmp_path, capsys):
    rc = cli_main.main(["crop", str(portrait), "-o", str(tmp_path), "-s", "direct", "-k", "auto", "--max-k", "1",
                        "--dry-run"])
    assert rc == 0
    (rec,) = _records(capsys.readouterr().out)
    assert rec["k"] == 1 and not list(tmp_path.iterdir())


def test_one_ratio_gives_every_crop_the_same_ratio(portrait, tmp_path, capsys):
    rc = cli_main.main(["crop", str(portrait), "-o", str(tmp_path), "-s", "direct", "-k", "3", "--force-k",
                        "-p", "instagram", "--one-ratio", "--dry-run"])
    assert rc == 0
    (rec,) = _records(capsys.readouterr().out)
    assert len({c["ratio"] for c in rec["crops"]}) == 1


@pytest.mark.parametrize("bad", ["0", "-2", "two", "1.5"])
def test_bad_k_is_one_line(bad, portrait, tmp_path, capsys):
    assert cli_main.main(["crop", str(portrait), "-o", str(tmp_path), "-k", bad]) == 1
    assert capsys.readouterr().err == f"multicrop: error: --k must be a positive integer or auto, got {bad!r}\n"


def test_k_auto_needs_the_direct_strategy(portrait, tmp_path, capsys):
    assert cli_main.main(["crop", str(portrait), "-o", str(tmp_path), "-k", "auto", "-s", "partition"]) == 1
    assert "k='auto' needs strategy 'direct'" in capsys.readouterr().err


def _head(path, k=3):
    import numpy as np

    from multicrop.embeddings import EMBEDDING
    from multicrop.judges.heads import Head, HeadTarget, save_head

    coef = np.zeros(EMBEDDING.dim, np.float32)
    coef[k] = 1.0
    save_head(Head(EMBEDDING.id, (HeadTarget("overall", "score", (-50.0, 50.0), coef, 0.0, 1.0, 10, 0.0),)), path)
    return path


def test_head_rates_the_framings_and_the_record_names_the_learned_scorer(portrait, tmp_path, capsys):
    head = _head(tmp_path / "head.json")
    rc = cli_main.main(["crop", str(portrait), "-o", str(tmp_path / "a"), "--no-preview", "--json",
                        "--head", str(head), "--head-weight", "0"])
    (zero,) = _records(capsys.readouterr().out)
    rc2 = cli_main.main(["crop", str(portrait), "-o", str(tmp_path / "b"), "--no-preview", "--json"])
    (plain,) = _records(capsys.readouterr().out)
    assert rc == rc2 == 0
    assert zero["versions"]["scorer"].startswith("learned/1+composition/") and "+w0+" in zero["versions"]["scorer"]
    assert plain["versions"]["scorer"].startswith("composition/")
    assert [c["box"] for c in zero["crops"]] == [c["box"] for c in plain["crops"]]   # weight 0: the base scorer's


@pytest.mark.parametrize("args, message", [
    (["--head-weight", "1"], "--head-weight needs --head"),
    (["--head", "missing.json"], "missing.json: no such file"),
    (["--head", "HEAD", "--layout", "seamless"], "takes no --judge, --focus, --head, -k, --max-k or --force-k"),
])
def test_head_options_refused_in_one_line(args, message, portrait, tmp_path, capsys):
    head = str(_head(tmp_path / "head.json"))
    args = [head if a == "HEAD" else str(tmp_path / a) if a.endswith(".json") else a for a in args]
    rc = cli_main.main(["crop", str(portrait), "-o", str(tmp_path / "o"), "--no-preview"] + args)
    err = capsys.readouterr().err
    assert rc != 0 and message in err and "Traceback" not in err


@pytest.mark.parametrize("args, message", [
    (["-k", "3", "--max-k", "4"], "--max-k applies to -k auto (this run crops k=3)"),
    (["-s", "partition", "-k", "3", "--force-k"], "--force-k applies to strategy direct with a fixed k (this run: "
                                                  "strategy partition, k=3)"),
    (["-k", "auto", "--force-k"], "--force-k applies to strategy direct with a fixed k (this run: strategy direct, "
                                  "k=auto)"),
    (["--layout", "seamless", "-k", "3"], "it takes no --judge, --focus, --head, -k, --max-k or --force-k (--slides"),
    (["--layout", "seamless", "--max-k", "3"], "it takes no --judge, --focus, --head, -k, --max-k or --force-k"),
    (["--layout", "seamless", "--force-k"], "it takes no --judge, --focus, --head, -k, --max-k or --force-k"),
])
def test_an_option_that_would_change_nothing_is_refused_not_ignored(portrait, tmp_path, args, message, capsys):
    assert cli_main.main(["crop", str(portrait), "-o", str(tmp_path / "o"), *args]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and not (tmp_path / "o").exists()
