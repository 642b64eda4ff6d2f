"""carousel-synth written again into the same folder: the folder holds exactly the new set."""

from __future__ import annotations

import json

from multicrop.cli import main as cli_main
from multicrop.datasets.carousel import load_carousel
from multicrop.datasets.carousel_labels import label_names


def _synth(out, n, capsys):
    rc = cli_main.main(["bench", "synth", "-o", str(out), "-n", str(n), "--max-side", "64", "--no-progress"])
    assert rc == 0 and f"{n} images" in capsys.readouterr().out


def test_a_smaller_set_removes_the_earlier_sets_other_items(tmp_path, capsys):
    out = tmp_path / "synth"
    _synth(out, 4, capsys)
    before = {p.name: p.read_bytes() for p in (out / "dataset").iterdir()}
    _synth(out, 4, capsys)  # the same set again: every item is rewritten, none removed
    assert {p.name: p.read_bytes() for p in (out / "dataset").iterdir()} == before
    _synth(out, 2, capsys)
    names = sorted(label_names()[:2])
    stems = sorted(p.name for p in (out / "dataset").iterdir())
    assert stems == sorted(f"{n}{s}" for n in names for s in (".jpg", ".json", "_metadata.json"))
    assert json.loads((out / "synth_info.json").read_text())["n_images"] == 2
    assert sorted(i.name for i in load_carousel(out).items) == names  # what `eval carousel` counts


def test_files_the_writer_did_not_write_are_kept(tmp_path, capsys):
    out = tmp_path / "synth"
    _synth(out, 3, capsys)
    ddir = out / "dataset"
    mine = {"mine.jpg": b"\xff\xd8 not ours", "mine.json": b"{}",
            "mine_metadata.json": json.dumps({"creator": "Jane Doe"}).encode(),
            "notes.txt": b"keep me", "broken_metadata.json": b"{not json"}
    for name, data in mine.items():
        (ddir / name).write_bytes(data)
    _synth(out, 1, capsys)
    assert {p.name: p.read_bytes() for p in ddir.iterdir() if p.name in mine} == mine
    assert sorted(p.stem for p in ddir.glob("*.jpg")) == sorted(["mine", label_names()[0]])
