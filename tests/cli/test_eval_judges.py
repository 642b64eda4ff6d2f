"""``multicrop eval judges`` / ``eval probe`` through the real entry point."""

import json

import numpy as np
import pytest

from multicrop.cli.main import main
from multicrop.stats.simulate import simulate_study


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("judges_cli")
    sim = simulate_study(80, n_families=2, rng=np.random.default_rng(3))
    sim.judge_table.to_csv(d / "judges.csv", index=False)
    sim.ratings.to_csv(d / "ratings.csv", index=False)
    return d


def _judges(files, out, *extra):
    return main(["eval", "judges", "--scores", str(files / "judges.csv"), "--ratings", str(files / "ratings.csv"),
                 "--format", "csv", "-o", str(out), "-B", "200", "--partitions", "2", "--splits", "5",
                 "-c", "ridge", *extra])


def test_judges_writes_report_and_is_reproducible(files, tmp_path, capsys):
    assert _judges(files, tmp_path / "a") == 0
    out = capsys.readouterr().out
    assert "best single member:family" in out and "index.html" in out
    assert _judges(files, tmp_path / "b", "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n_images"] == 80 and summary["config"]["combiners"] == ["ridge"]
    for name in ("arms.csv", "comparisons.csv", "summary.json", "index.html", "forest.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_probe(files, capsys):
    rc = main(["eval", "probe", "-s", str(files / "judges.csv"), "-r", str(files / "ratings.csv"),
               "-B", "200", "--json"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    assert res["verdict"] in {"panel", "single", "uncertain"} and res["repetitions"] == 5
    assert res["headroom"] == pytest.approx(res["best_rho"]["estimate"] / res["ceiling"]["ceiling"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "evx"], "unknown ratings format 'evx'; did you mean 'eva'?"),
        (["--folds", "1"], "n_folds must be >= 2, got 1"),
        (["--transfer-scores", "x.csv"], "--transfer-scores and --transfer-ratings must be given together"),
    ],
)
def test_errors_are_one_line_and_nonzero(files, tmp_path, capsys, args, message):
    assert _judges(files, tmp_path / "r", *args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"multicrop: error: {message}")


def test_missing_scores_file(files, tmp_path, capsys):
    rc = main(["eval", "judges", "-s", str(tmp_path / "none.csv"), "-r", str(files / "ratings.csv"),
               "-o", str(tmp_path / "o")])
    assert rc == 1
    assert "does not exist" in capsys.readouterr().err
