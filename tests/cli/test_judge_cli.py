"""``multicrop judge``, ``judges list`` and ``store stats|export|verify``."""

import json
import sys
import sqlite3

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from multicrop.cli import main as cli_main
from multicrop.judges.runner import TABLE_COLUMNS


@pytest.fixture
def photos(tmp_path):
    rng = np.random.default_rng(0)
    paths = []
    for i in range(2):
        p = tmp_path / f"p{i}.jpg"
        Image.fromarray((rng.random((40, 56, 3)) * 255).astype(np.uint8)).save(p)
        paths.append(p)
    return paths


def run(argv, capsys):
    code = cli_main.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_judge_offline_writes_the_tidy_table_and_resumes(tmp_path, photos, capsys):
    db, table = tmp_path / "runs.sqlite", tmp_path / "t.csv"
    code, out, err = run(["judge", *photos, "--db", db, "-o", table], capsys)
    assert code == 0, err
    # 20 rows per photo, 6 calls (measured is deterministic: one call per prompt)
    assert "40 calls planned: 0 already" in out and "12 performed" in out
    assert "28 repetitions of deterministic judges answered by one call" in out
    df = pd.read_csv(table)
    assert tuple(df.columns) == TABLE_COLUMNS and len(df) == 40
    assert set(df.family) == {"measured"} and set(df.image) == {str(p) for p in photos}
    code, out, _ = run(["judge", *photos, "--db", db, "--json", "-o", tmp_path / "t.parquet"], capsys)
    info = json.loads(out)
    assert code == 0 and info["already_done"] == 40 and info["performed"] == 0
    assert tuple(pd.read_parquet(tmp_path / "t.parquet").columns) == TABLE_COLUMNS


def test_judge_reads_a_csv_of_images_and_repetition_overrides(tmp_path, photos, capsys):
    listing = tmp_path / "list.csv"
    listing.write_text("image,rating\n" + "".join(f"{p.name},5\n" for p in photos))
    code, out, err = run(["judge", listing, "--db", tmp_path / "r.sqlite", "--holistic-repetitions", "25",
                          "--dimension-repetitions", "1", "-o", tmp_path / "t.csv"], capsys)
    assert code == 0, err
    df = pd.read_csv(tmp_path / "t.csv")
    assert set(df.image) == {p.name for p in photos}
    assert (df.prompt_kind == "holistic").sum() == 2 * 25 and (df.prompt_kind == "dimension").sum() == 2 * 5


def test_judge_with_panel_against_loopback_server(tmp_path, photos, capsys):
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "fake_openai_server_cli", Path(__file__).resolve().parents[1] / "judges" / "fake_openai_server.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with mod.FakeOpenAIServer() as srv:
        panel = tmp_path / "panel.toml"
        panel.write_text(
            "holistic_repetitions = 2\ndimension_repetitions = 1\n"
            '[[families]]\nname = "vlm"\nbackend = "openai-compatible"\nmodel = "ok"\n'
            f'options = {{ base_url = "{srv.base_url}", api_key_env = "", max_side = 64 }}\n'
            '[[families]]\nname = "broken"\nbackend = "openai-compatible"\nmodel = "500:always"\n'
            f'options = {{ base_url = "{srv.base_url}", api_key_env = "" }}\n'
        )
        code, out, err = run(["judge", *photos, "-p", panel, "-d", tmp_path / "r.sqlite", "--retries", "1",
                              "-o", tmp_path / "t.csv"], capsys)
    assert code == 1
    assert err.count("\n") == 1 and "14 calls failed after retries" in err and "run the same command again" in err
    df = pd.read_csv(tmp_path / "t.csv")
    assert set(df.family) == {"vlm"} and len(df) == 14


def test_an_unreadable_image_is_skipped_with_one_line_and_exit_1(tmp_path, photos, capsys):
    (tmp_path / "notes.jpg").write_text("not an image")
    db = tmp_path / "r.sqlite"
    code, out, err = run(["judge", tmp_path, "--db", db, "-o", tmp_path / "t.csv"], capsys)
    assert code == 1
    lines = err.splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"multicrop: skipping unreadable image {tmp_path / 'notes.jpg'}: "
                                                   "not an image")
    assert lines[1] == "multicrop: error: 1 unreadable image(s) skipped (listed above)"
    assert "12 performed" in out and "6 skipped" in out
    assert set(pd.read_csv(tmp_path / "t.csv").image) == {str(p) for p in photos}
    code, out, _ = run(["judge", *photos, "--db", db, "--json"], capsys)  # the good ones are all done
    assert code == 0 and json.loads(out)["performed"] == 0


def test_two_families_making_the_same_calls_are_an_error(tmp_path, photos, capsys):
    panel = tmp_path / "dup.toml"
    panel.write_text('[[families]]\nname = "a"\nbackend = "measured"\nmodel = "measured-v1"\n'
                     '[[families]]\nname = "b"\nbackend = "measured"\nmodel = "measured-v1"\n')
    code, _, err = run(["judge", photos[0], "-p", panel, "--db", tmp_path / "r.sqlite"], capsys)
    assert code == 1 and err.count("\n") == 1 and "families 'a' and 'b' are the same judge" in err
    assert not (tmp_path / "r.sqlite").exists()


@pytest.mark.parametrize("argv, fragment", [
    (["judge", "missing.jpg"], "does not exist"),
    (["judge", "{photo}", "-o", "t.xlsx"], ".csv or .parquet"),
    (["judge", "{photo}", "-p", "nope.toml"], "panel file"),
    (["store", "stats", "nope.sqlite"], "no such store"),
])
def test_errors_are_one_line_and_exit_1(tmp_path, photos, capsys, monkeypatch, argv, fragment):
    monkeypatch.chdir(tmp_path)
    code, _, err = run([a.format(photo=photos[0]) for a in argv], capsys)
    assert code == 1 and err.startswith("multicrop: error:") and fragment in err and err.count("\n") == 1


def test_missing_credentials_message(tmp_path, photos, capsys, monkeypatch):
    monkeypatch.delenv("MULTICROP_CLI_TEST_KEY", raising=False)
    panel = tmp_path / "panel.toml"
    panel.write_text('[[families]]\nname = "x"\nbackend = "openai-compatible"\nmodel = "gpt-x"\n'
                     'options = { api_key_env = "MULTICROP_CLI_TEST_KEY" }\n')
    code, _, err = run(["judge", photos[0], "-p", panel, "-d", tmp_path / "r.sqlite"], capsys)
    assert code == 1 and "export MULTICROP_CLI_TEST_KEY=" in err
    assert not (tmp_path / "r.sqlite").exists()  # nothing created before the key is checked


def test_judges_list(capsys):
    code, out, _ = run(["judges", "list", "--json"], capsys)
    rows = {r["name"]: r for r in json.loads(out)}
    assert code == 0 and set(rows) >= {"measured", "openai-compatible"}
    assert rows["measured"]["needs_network"] is False and rows["openai-compatible"]["supports_json_schema"]
    code, out, _ = run(["judges", "list"], capsys)
    assert "openai-compatible (v2)" in out and "api_key_env='OPENAI_API_KEY'" in out


def test_store_stats_export_verify(tmp_path, photos, capsys):
    db = tmp_path / "r.sqlite"
    assert run(["judge", photos[0], "--db", db], capsys)[0] == 0
    code, out, _ = run(["store", "stats", db, "--json"], capsys)
    st = json.loads(out)
    assert code == 0 and st["n_calls"] == 6 and st["per_family"] == {"measured": 6} and st["schema_version"] == 4
    code, out, _ = run(["store", "export", db, "-o", tmp_path / "all.csv"], capsys)
    assert code == 0 and len(pd.read_csv(tmp_path / "all.csv")) == 6
    code, out, _ = run(["store", "verify", db], capsys)
    assert code == 0 and "6 calls checked, 0 mismatches" in out
    con = sqlite3.connect(db)
    try:
        with con:
            con.execute("UPDATE calls SET score = score + 1 WHERE rowid % 2 = 0")  # 3 of the 6 rows
    finally:
        con.close()
    code, out, err = run(["store", "verify", db], capsys)
    assert code == 1 and out.count("MISMATCH") == 3 and "3 records fail verification" in err


def test_csv_inputs_are_deduplicated_by_file_and_label_clashes_are_errors(tmp_path, photos, capsys):
    import shutil

    for d in ("A", "B"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "l.csv").write_text("image\nx.jpg\n")
    shutil.copy(photos[0], tmp_path / "A" / "x.jpg")
    shutil.copy(photos[1], tmp_path / "B" / "x.jpg")
    db = tmp_path / "r.sqlite"
    # two different files, both labelled x.jpg: B/x.jpg must not be silently dropped
    code, _, err = run(["judge", tmp_path / "A" / "l.csv", tmp_path / "B" / "l.csv", "--db", db], capsys)
    assert code == 1 and err.count("\n") == 1 and "would both be labelled 'x.jpg'" in err
    assert str(tmp_path / "B" / "x.jpg") in err and not db.exists()
    # the same file named twice (CSV and path) is judged once
    code, out, err = run(["judge", tmp_path / "A" / "l.csv", tmp_path / "A" / "x.jpg", "--db", db, "--json"], capsys)
    info = json.loads(out)
    assert code == 0, err
    assert info["images"] == 1 and info["planned"] == 20


def test_judge_option_defaults_are_run_configs():
    import inspect

    from multicrop.cli.judge import judge_command
    from multicrop.judges.config import RunConfig

    params = inspect.signature(judge_command).parameters
    defaults = RunConfig()
    assert params["concurrency"].default.default == defaults.concurrency == 16
    assert params["timeout"].default.default == defaults.timeout_s == 60.0
    assert params["retries"].default.default == defaults.max_retries == 5


def _fake_server_module():
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "fake_openai_server_cli2", Path(__file__).resolve().parents[1] / "judges" / "fake_openai_server.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_DATA_HOME moves the user data dir on Linux only")
def test_quick_run_with_a_model_prints_scores_and_uses_the_user_data_store(tmp_path, photos, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    with _fake_server_module().FakeOpenAIServer() as srv:
        code, out, err = run(["judge", *photos, "-m", "ok", "--base-url", srv.base_url, "--api-key-env", "",
                              "--holistic-repetitions", "2", "--dimension-repetitions", "1"], capsys)
        requests = srv.requests
    assert code == 0, err
    store = tmp_path / "xdg" / "multicrop" / "runs.sqlite"
    lines = out.splitlines()
    assert lines[0].split() == ["image", "family", "holistic", "technical_quality", "composition",
                                "colour_and_tone", "distinctiveness", "emotional_impact"]
    assert [ln.split()[:2] for ln in lines[1:3]] == [[str(p), "ok"] for p in photos]
    assert all(1 <= float(v) <= 10 for ln in lines[1:3] for v in ln.split()[2:])
    assert f"14 performed" in lines[3] and str(store) in lines[3] and requests == 14
    assert store.is_file() and not (tmp_path / "runs.sqlite").exists()
    code, out, _ = run(["store", "path"], capsys)
    assert code == 0 and out.strip() == str(store)
    code, out, _ = run(["store", "runs"], capsys)
    assert code == 0 and out.startswith("run 1 ") and "finished" in out and "14 performed" in out
    assert "multicrop judge" in out and "-m ok" in out
    code, out, _ = run(["store", "stats", "--json"], capsys)
    assert code == 0 and json.loads(out)["per_family"] == {"ok": 14}


def test_credentials_in_an_endpoint_url_never_reach_the_store(tmp_path, photos, capsys):
    db = tmp_path / "r.sqlite"
    with _fake_server_module().FakeOpenAIServer() as srv:
        url = srv.base_url.replace("http://", "http://alice:s3cr3t-pw@")
        code, out, err = run(["judge", photos[0], "-m", "ok", "--base-url", url, "--api-key-env", "", "--db", db,
                              "--holistic-repetitions", "1", "--dimension-repetitions", "0"], capsys)
        assert code == 0, err
        assert srv.requests == 1
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("r.sqlite"))
    assert b"s3cr3t-pw" not in data and b"alice" not in data
    code, out, _ = run(["store", "export", db, "-o", tmp_path / "e.jsonl"], capsys)
    assert code == 0 and srv.base_url in (tmp_path / "e.jsonl").read_text()  # the endpoint, without user-info


@pytest.mark.parametrize("argv, line", [
    (["--timeout", "0"], "--timeout must be a number of seconds > 0, got 0"),
    (["--concurrency", "0"], "--concurrency must be an integer >= 1, got 0"),
    (["--retries", "-1"], "--retries must be an integer >= 0, got -1"),
    (["--base-url", "http://x/v1"], "--base-url and --api-key-env go with --model (a panel file sets them per family)"),
    (["-m", "x", "-p", "p.toml"], "give one of --panel, --model and --head, not --panel and --model"),
])
def test_run_settings_are_named_as_the_options_are(tmp_path, photos, capsys, argv, line):
    code, _, err = run(["judge", photos[0], "--db", tmp_path / "r.sqlite", *argv], capsys)
    assert code == 1 and err == f"multicrop: error: {line}\n"
    assert "timeout_s" not in err and not (tmp_path / "r.sqlite").exists()


def test_verify_and_export_report_a_damaged_store_in_one_line(tmp_path, photos, capsys):
    db = tmp_path / "r.sqlite"
    assert run(["judge", *photos, "--db", db, "-o", tmp_path / "t.csv"], capsys)[0] == 0
    with open(db, "r+b") as fh:
        for page in range(2, db.stat().st_size // 4096, 2):
            fh.seek(page * 4096 + 64)
            fh.write(b"\x00\xff" * 1500)
    code, out, err = run(["store", "verify", db], capsys)
    assert code == 1 and out == "" and err.count("\n") == 1
    assert err.startswith(f"multicrop: error: {db}: the store is damaged: SQLite's integrity check says ")
    code, out, err = run(["store", "export", db, "-o", tmp_path / "e.csv"], capsys)
    assert code == 1 and err.count("\n") == 1 and "damaged" in err and not (tmp_path / "e.csv").exists()


def test_store_show_prints_the_record_prompt_and_run(tmp_path, photos, capsys):
    from multicrop.judges.store import CallStore

    db = tmp_path / "r.sqlite"
    assert run(["judge", photos[0], "--db", db, "--json"], capsys)[0] == 0
    with CallStore(db, readonly=True) as store:
        key = next(r.call_key for r in store.iter_records() if r.prompt_kind == "dimension")
    code, out, err = run(["store", "show", key[:16], "--db", db], capsys)
    assert code == 0, err
    assert f"call_key: {key}" in out and "prompt_kind: dimension" in out
    assert "run: 1 (" in out and "multicrop judge" in out
    assert out.split("prompt:\n", 1)[1].strip().startswith("You are")
    code, out, _ = run(["store", "show", key, "--db", db, "--json"], capsys)
    info = json.loads(out)
    assert code == 0 and info["call_key"] == key and info["run"]["status"] == "finished" and info["prompt"]
    code, _, err = run(["store", "show", "sha256:" + "f" * 64, "--db", db], capsys)
    assert code == 1 and err.count("\n") == 1 and "no call" in err


def test_judge_fit_then_judge_with_the_head(tmp_path, capsys):
    """`judge fit` on a folder of rated photos (sub-folders included), then `judge --head` on them."""
    from pathlib import Path

    rng = np.random.default_rng(0)
    rows = ["image,score,composition"]
    for i in range(30):
        level = rng.uniform(0.1, 0.9)
        sub = tmp_path / "photos" / f"s{i % 3}"
        sub.mkdir(parents=True, exist_ok=True)
        arr = (np.clip(rng.normal(level, 0.1, size=(40, 56, 3)), 0, 1) * 255).astype(np.uint8)
        Image.fromarray(arr).save(sub / f"p{i}.png")
        rows.append(f"p{i}.png,{1 + 4 * level:.3f},{5 - 4 * level:.3f}")
    (tmp_path / "r.csv").write_text("\n".join(rows) + "\n")
    head = tmp_path / "head.json"
    code, out, err = run(["judge", "fit", tmp_path / "r.csv", "--images", tmp_path / "photos", "-o", head,
                          "--cache", tmp_path / "c.npz"], capsys)
    assert code == 0, err
    assert "overall: fitted on 30 photos (score), out-of-fold Spearman rho" in out
    assert "composition: fitted on 30 photos (composition)" in out and head.is_file()
    code, out, err = run(["judge", tmp_path / "photos", "--head", head, "--db", tmp_path / "r.sqlite",
                          "-o", tmp_path / "t.csv"], capsys)
    assert code == 1 and "no images to judge" in err  # the photos are in sub-folders: -R
    code, out, err = run(["judge", tmp_path / "photos", "-R", "--head", head, "--db", tmp_path / "r.sqlite",
                          "-o", tmp_path / "t.csv"], capsys)
    assert code == 0, err
    df = pd.read_csv(tmp_path / "t.csv")
    assert len(df) == 30 * 20 and set(df.family) == {"embedding"}
    assert "180 performed" in out  # 6 calls per photo: deterministic
    hol = df[df.prompt_kind == "holistic"].groupby("image").score.mean()
    truth = {f"p{i}.png": v for i, v in enumerate(float(r.split(",")[1]) for r in rows[1:])}
    from multicrop.stats import spearman

    assert spearman(hol.to_numpy(), np.array([truth[Path(i).name] for i in hol.index])) > 0.8
    code, out, err = run(["judge", "fit", tmp_path / "r.csv", "--images", tmp_path / "photos", "-o",
                          tmp_path / "h.txt"], capsys)
    assert code == 1 and "--output must end in .json" in err
    # an output that cannot be written is said before the fit (which embeds every photo), not after it
    (tmp_path / "afile").write_text("x")
    for bad, why in ((tmp_path / "afile" / "h.json", "is not a writable folder"), (tmp_path / "photos.json", None)):
        if why is None:
            bad.mkdir()
        code, out, err = run(["judge", "fit", tmp_path / "r.csv", "--images", tmp_path / "photos", "-o", bad,
                              "--cache", tmp_path / "c2.npz"], capsys)
        assert code == 1 and (why or "is a folder") in err and "nothing was fitted" in err
        assert not (tmp_path / "c2.npz").exists()


def test_folders_of_images_follow_the_one_photo_rule(tmp_path):
    """A macOS ``._`` resource fork, a non-photo and a dot-folder are skipped, a GIF and a WebP are taken;
    as ``multicrop crop`` (-R) lists them.  A file named explicitly is taken whatever its name."""
    from multicrop.cli.judge_inputs import paths_of
    from multicrop.io import list_photos

    sub = tmp_path / "sub"
    (tmp_path / ".cache").mkdir()
    sub.mkdir()
    for p in ("a.jpg", "._a.jpg", "notes.txt", "b.GIF", "c.webp", ".cache/d.jpg", "sub/e.png", "sub/._e.png"):
        (tmp_path / p).write_bytes(b"x")
    names = [p.relative_to(tmp_path).as_posix() for p, _ in paths_of(tmp_path)]
    assert names == ["a.jpg", "b.GIF", "c.webp"]
    deep = [p.relative_to(tmp_path).as_posix() for p, _ in paths_of(tmp_path, recursive=True)]
    assert deep == ["a.jpg", "b.GIF", "c.webp", "sub/e.png"]
    assert deep == [p.relative_to(tmp_path).as_posix() for p in list_photos([tmp_path], recursive=True)]
    assert paths_of(tmp_path / "._a.jpg") == [(tmp_path / "._a.jpg", str(tmp_path / "._a.jpg"))]
