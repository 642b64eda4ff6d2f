"""``multicrop eval judges`` / ``eval probe`` through the real entry point."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from multicrop.cli.main import main
from multicrop.datasets.ratings import ratings_from_frame
from multicrop.evaluation.judges.probe import probe_headroom
from multicrop.datasets.simulate import simulate_study


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


def test_jobs_do_not_change_a_byte(files, tmp_path):
    """n_jobs does not change results, so it must not enter summary.json / index.html either."""
    assert _judges(files, tmp_path / "j1", "-j", "1") == 0
    assert _judges(files, tmp_path / "j2", "-j", "2") == 0
    names = sorted(p.name for p in (tmp_path / "j1").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "j2").iterdir()) and "summary.json" in names
    for name in names:
        assert (tmp_path / "j1" / name).read_bytes() == (tmp_path / "j2" / name).read_bytes(), name


def test_probe(files, capsys):
    rc = main(["eval", "probe", "-s", str(files / "judges.csv"), "-r", str(files / "ratings.csv"),
               "-B", "200", "--splits", "7", "--json"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    # the CLI is the library call with the same options
    ref = probe_headroom(pd.read_csv(files / "judges.csv"), ratings_from_frame(pd.read_csv(files / "ratings.csv")),
                         n_resamples=200, n_splits=7)
    assert res == json.loads(json.dumps(ref.to_dict()))
    assert res["ceiling"]["n_splits"] == 7 and res["repetitions"] == 5
    # planted: holistic fidelity 0.6 with shared off-target noise -> best rho about 0.45, far below the
    # ceiling (about 0.94): the EVA side of the bands
    assert res["verdict"] == "panel" and res["headroom"] < 0.62
    sim_h = pd.read_csv(files / "ratings.csv").groupby("image")["score"].mean()
    t = pd.read_csv(files / "judges.csv")
    fam = res["best"]
    mean5 = t[(t.family == fam) & (t.prompt_kind == "holistic")].groupby("image")["score"].mean().loc[sim_h.index]
    assert res["best_rho"]["estimate"] == pytest.approx(stats.spearmanr(mean5, sim_h).statistic, abs=1e-12)


def test_a_zero_noise_ceiling(files, tmp_path, capsys):
    """Anti-correlated raters (as /tmp/review_b/neg.py): the report says n/a, the probe refuses in one line."""
    imgs = sorted(pd.read_csv(files / "ratings.csv")["image"].unique())
    rng = np.random.default_rng(1)
    while True:
        a, b = rng.normal(size=(2, len(imgs)))
        if stats.spearmanr(a, b).statistic < -0.1:
            break
    neg = tmp_path / "neg.csv"
    pd.DataFrame({"image": imgs * 2, "rater": ["r1"] * len(imgs) + ["r2"] * len(imgs),
                  "score": np.concatenate([a, b])}).to_csv(neg, index=False)
    rc = main(["eval", "judges", "-s", str(files / "judges.csv"), "-r", str(neg), "-o", str(tmp_path / "o"),
               "-B", "200", "--partitions", "0", "--splits", "5", "-c", "ridge"])
    assert rc == 0
    assert "headroom: n/a" in (tmp_path / "o" / "index.html").read_text()
    capsys.readouterr()
    rc = main(["eval", "probe", "-s", str(files / "judges.csv"), "-r", str(neg), "-B", "200", "--splits", "5"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "noise ceiling is 0.000" in err[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "evx"], "unknown ratings format 'evx'; did you mean 'eva'?"),
        (["--folds", "1"], "--folds must be >= 2, got 1"),
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


def test_output_that_is_a_file_fails_before_any_work(files, tmp_path, capsys, monkeypatch):
    import multicrop.evaluation.judges.report as jr

    target = tmp_path / "report.txt"
    target.write_text("keep me")

    def boom(*a, **k):  # the protocol must not even start
        raise AssertionError("evaluate_judges ran")

    monkeypatch.setattr(jr, "evaluate_judges", boom)
    assert _judges(files, target) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("multicrop: error: report directory") and "existing file" in err[0]
    assert target.read_text() == "keep me"
    assert _judges(files, target / "sub") == 1
    assert "existing file" in capsys.readouterr().err


def test_json_summary_is_serialised_once_not_read_back(files, tmp_path, capsys, monkeypatch):
    from pathlib import Path

    real = Path.read_text

    def guarded(self, *a, **k):
        if self.name == "summary.json":
            raise AssertionError("summary.json was read back from disk")
        return real(self, *a, **k)

    monkeypatch.setattr(Path, "read_text", guarded)
    assert _judges(files, tmp_path / "j", "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["config"]["robustness_arms"] == ["H+P_ridge"]
    assert json.loads(real(tmp_path / "j" / "summary.json")) == summary


def test_probe_reports_repetitions_actually_used(files, capsys):
    rc = main(["eval", "probe", "-s", str(files / "judges.csv"), "-r", str(files / "ratings.csv"), "-n", "99",
               "-B", "200", "--splits", "5", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert rc == 0 and res["repetitions"] == 99
    n = pd.read_csv(files / "judges.csv").query("prompt_kind == 'holistic'").repetition.nunique()
    assert res["repetitions_used"] == {"family0": n, "family1": n}
    rc = main(["eval", "probe", "-s", str(files / "judges.csv"), "-r", str(files / "ratings.csv"), "-n", "99",
               "-B", "200", "--splits", "5"])
    assert rc == 0 and f"only {n} of 99 holistic repetitions available" in capsys.readouterr().out


def test_option_defaults_are_the_config_defaults():
    """One home for every default: the CLI reads them from JudgesReportConfig and ProbeConfig."""
    import dataclasses
    import inspect

    from multicrop.cli.eval_judges import judges, probe
    from multicrop.evaluation.judges.config import JudgesReportConfig, ProbeConfig

    def defaults(command):
        return {name: p.default.default for name, p in inspect.signature(command).parameters.items()}

    report = {f.name: f.default for f in dataclasses.fields(JudgesReportConfig)}
    got = defaults(judges)
    assert {"seed": got["seed"], "n_resamples": got["resamples"], "n_folds": got["folds"],
            "n_partitions": got["partitions"], "n_splits": got["splits"], "confidence": got["confidence"],
            "combiners": tuple(got["combiner"]), "n_jobs": got["jobs"], "image_key": got["image_key"]} == {
        k: report[k] for k in ("seed", "n_resamples", "n_folds", "n_partitions", "n_splits", "confidence",
                               "combiners", "n_jobs", "image_key")}
    assert (got["resamples"], got["combiner"]) == (10_000, ["gb", "ridge"])
    got = defaults(probe)
    assert (got["repetitions"], got["seed"], got["resamples"], got["splits"], got["confidence"], got["image_key"]) == (
        ProbeConfig.repetitions, ProbeConfig.seed, ProbeConfig.n_resamples, ProbeConfig.n_splits,
        ProbeConfig.confidence, ProbeConfig.image_key)


def test_judges_warns_on_stderr_about_a_single_family_panel_and_prints_arm_intervals(tmp_path, capsys):
    sim = simulate_study(60, n_families=1, rng=np.random.default_rng(5))
    sim.judge_table.to_csv(tmp_path / "j.csv", index=False)
    sim.ratings.to_csv(tmp_path / "r.csv", index=False)
    rc = main(["eval", "judges", "-s", str(tmp_path / "j.csv"), "-r", str(tmp_path / "r.csv"), "-o",
               str(tmp_path / "rep"), "-B", "100", "--partitions", "0", "--splits", "5", "-c", "ridge"])
    cap = capsys.readouterr()
    assert rc == 0
    warns = [ln for ln in cap.err.splitlines() if ln.startswith("warning: ")]
    assert len(warns) == 2 and "one family (family0): panel_mean is the best single member" in warns[0]
    assert "12 held-out images per fold" in warns[1]
    assert "member:family0     n=60 rho=" in cap.out
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert [w["code"] for w in summary["warnings"]] == ["single_family", "few_images"]
    assert "<h2 class='warn'>Warnings</h2>" in (tmp_path / "rep" / "index.html").read_text()


@pytest.mark.parametrize("kind, skipped, arms", [
    ("holistic", "no dimension rows: P and H+P arms skipped", {"H_ridge", "Hsplit_ridge"}),
    ("dimension", "no holistic rows: the H, H+P and Hsplit arms are skipped", {"P_ridge"}),
])
def test_judges_on_one_prompt_kind_builds_what_it_can_and_says_what_it_skipped(files, tmp_path, capsys, kind,
                                                                                skipped, arms):
    t = pd.read_csv(files / "judges.csv")
    t[t["prompt_kind"] == kind].to_csv(tmp_path / "j.csv", index=False)
    rc = main(["eval", "judges", "-s", str(tmp_path / "j.csv"), "-r", str(files / "ratings.csv"), "-o",
               str(tmp_path / "rep"), "-B", "100", "--partitions", "0", "--splits", "5", "-c", "ridge"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "80 images; best single member:family" in cap.out and "Traceback" not in cap.err
    assert any(ln.startswith("warning: " + skipped) for ln in cap.err.splitlines())
    table = pd.read_csv(tmp_path / "rep" / "arms.csv")
    got = set(table.loc[table["kind"] != "baseline", "arm"])
    assert got == {"member:family0", "member:family1", "panel_mean", *arms}
    extra = set(table.loc[table["kind"] == "baseline", "arm"])  # ablations need no more input than the table
    assert ({"rounded:family0", "rounded:family1"} <= extra) == (kind == "holistic")


def test_judges_lists_ratings_far_outside_their_inferred_scale(files, tmp_path, capsys):
    r = pd.read_csv(files / "ratings.csv")
    r["score"] = np.clip(np.round(3 + r["score"]), 1, 5)
    r.loc[r.index % 5 == 0, "score"] = 99
    r.to_csv(tmp_path / "r.csv", index=False)
    rc = main(["eval", "judges", "-s", str(files / "judges.csv"), "-r", str(tmp_path / "r.csv"), "-o",
               str(tmp_path / "rep"), "-B", "100", "--partitions", "0", "--splits", "5", "-c", "ridge"])
    cap = capsys.readouterr()
    assert rc == 0
    n_bad = int((r.index % 5 == 0).sum())
    assert f"warning: r.csv: {n_bad} rating rows lie outside their scale (first: score 99 outside [1, 5])" in cap.err
    head = [ln for ln in cap.out.splitlines() if "headroom" in ln]
    assert head and float(head[0].split("headroom ")[1].rstrip("%")) < 100
    skipped = pd.read_csv(tmp_path / "rep" / "skipped_ratings.csv")
    assert len(skipped) == n_bad and skipped["line"].iloc[0] == 2


def test_the_photos_folders_follow_the_one_photo_rule(tmp_path):
    """--photos: a macOS ``._`` resource fork, a non-photo and a dot-folder are skipped, a GIF and a WebP are
    taken, as ``multicrop crop -R`` lists them (the fork would otherwise be embedded, or fail to open)."""
    from multicrop.cli.eval_judges import _photo_files
    from multicrop.io import list_photos

    (tmp_path / ".cache").mkdir()
    (tmp_path / "sub").mkdir()
    for p in ("a.jpg", "._a.jpg", "notes.txt", "b.GIF", "c.webp", ".cache/d.jpg", "sub/e.png", "sub/._e.png"):
        (tmp_path / p).write_bytes(b"x")
    found = [p.relative_to(tmp_path).as_posix() for p in _photo_files([tmp_path])]
    assert found == ["a.jpg", "b.GIF", "c.webp", "sub/e.png"]
    assert found == [p.relative_to(tmp_path).as_posix() for p in list_photos([tmp_path], recursive=True)]
