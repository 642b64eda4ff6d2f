"""Which rows a scene of carousel-synth counts in: its metadata says whether it holds the thin subject."""

from __future__ import annotations

import json
import shutil

from multicrop.datasets.carousel import load_carousel
from multicrop.evaluation.scoreboard.run import THIN_SUBJECT, _holds_thin_subject


def test_a_scene_holds_the_thin_subject_when_its_metadata_names_it(small_synth, tmp_path):
    items = load_carousel(small_synth).items
    said = {i.name: THIN_SUBJECT in json.loads((small_synth / "dataset" / f"{i.name}_metadata.json").read_text())
            ["subjects"] for i in items}
    assert set(said.values()) == {True, False}  # both kinds among the four scenes
    assert {i.name: _holds_thin_subject(i) for i in items} == said
    # a set rendered before the metadata named its subjects (carousel-synth-1): counted in no such row
    old = tmp_path / "old"
    shutil.copytree(small_synth, old)
    for meta in (old / "dataset").glob("*_metadata.json"):
        data = json.loads(meta.read_text())
        del data["subjects"]
        meta.write_text(json.dumps(data))
    assert {_holds_thin_subject(i) for i in load_carousel(old).items} == {None}
