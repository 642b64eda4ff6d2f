"""``multicrop bench synth`` and ``multicrop eval carousel`` from the command line."""

from __future__ import annotations

import json

from multicrop.cli import main as cli_main


def test_bench_synth_then_eval(tmp_path, carousel_labels, capsys):
    data = tmp_path / "synth"
    rc = cli_main.main(["bench", "synth", "--out", str(data), "--labels", str(carousel_labels),
                        "--seed", "0", "--max-side", "128", "--limit", "3", "--no-progress"])
    assert rc == 0
    assert "3 images" in capsys.readouterr().out
    assert len(list((data / "dataset").glob("*.jpg"))) == 3
    assert (data / "hard_failures.txt").is_file()

    rep = tmp_path / "rep"
    rc = cli_main.main(["eval", "carousel", str(data), "--method", "slices", "-o", str(rep),
                        "--no-progress", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "slices"
    assert [r["subset"] for r in out["rows"]][0] == "all"
    assert out["rows"][0]["n_images"] == 3
    for f in ("results.jsonl", "table.csv", "table.json", "per_image.csv", "report.html"):
        assert (rep / f).is_file()

    # Rerun: everything resumes; the table is printed.
    rc = cli_main.main(["eval", "carousel", str(data), "-m", "slices", "-s", "ok", "-o", str(rep), "--no-progress"])
    captured = capsys.readouterr()
    assert rc == 0
    assert "kIoU@0.5:0.95" in captured.out and "slices" in captured.out


def test_unknown_method_is_one_line(tmp_path, small_synth, capsys):
    rc = cli_main.main(["eval", "carousel", str(small_synth), "--method", "slicez", "-o", str(tmp_path),
                        "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith("multicrop: error: unknown carousel method 'slicez'; did you mean 'slices'")
    assert err.count("\n") == 1


def test_not_a_dataset_is_one_line(tmp_path, capsys):
    rc = cli_main.main(["eval", "carousel", str(tmp_path), "-o", str(tmp_path / "r"), "--no-progress"])
    assert rc == 1
    assert "no 'dataset/' folder" in capsys.readouterr().err


def test_bad_subset_is_one_line(tmp_path, small_synth, capsys):
    rc = cli_main.main(["eval", "carousel", str(small_synth), "-m", "slices", "-s", "good",
                        "-o", str(tmp_path), "--no-progress"])
    assert rc == 1
    assert "subset must be one of all, ok, failures" in capsys.readouterr().err


def test_rerun_with_other_ratios_is_one_line_not_a_stale_table(tmp_path, small_synth, capsys):
    rep = tmp_path / "rep"
    assert cli_main.main(["eval", "carousel", str(small_synth), "-m", "slices", "-o", str(rep), "--limit", "2",
                          "--no-progress", "--no-thumbnails"]) == 0
    capsys.readouterr()
    rc = cli_main.main(["eval", "carousel", str(small_synth), "-m", "slices", "-o", str(rep), "--limit", "2",
                        "--ratio", "1:1", "--no-progress"])
    captured = capsys.readouterr()
    assert rc == 1 and "resuming" not in captured.err and captured.out == ""
    assert "holds results for ratios 2:3,3:2; use another report directory for ratios 1:1" in captured.err
    assert captured.err.count("\n") == 1


def test_an_image_that_ends_in_an_error_is_said_beside_the_table(tmp_path, small_synth, capsys):
    import shutil

    root = tmp_path / "ds"
    shutil.copytree(small_synth, root)
    (root / "dataset" / "Hockey_players.jpg").write_bytes(b"")
    assert cli_main.main(["eval", "carousel", str(root), "-m", "slices", "-o", str(tmp_path / "rep"),
                          "--no-progress", "--no-thumbnails"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "1 of 4 images ended in an error and count with no crop (kIoU 0); a rerun tries them again:"
    assert err[1].startswith("  Hockey_players: ImageLoadError: ") and "empty file" in err[1]
