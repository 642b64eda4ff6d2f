"""Which rows a scene of carousel-synth counts in: its metadata says whether it holds the thin subject."""

from __future__ import annotations

import json
import shutil

from multicrop.datasets.carousel import load_carousel
from multicrop.evaluation.scoreboard.sets import THIN_SUBJECT, holds_thin_subject


def test_a_scene_holds_the_thin_subject_when_its_metadata_names_it(small_synth, tmp_path):
    items = load_carousel(small_synth).items
    said = {i.name: THIN_SUBJECT in json.loads((small_synth / "dataset" / f"{i.name}_metadata.json").read_text())
            ["subjects"] for i in items}
    assert set(said.values()) == {True, False}  # both kinds among the four scenes
    assert {i.name: holds_thin_subject(i) for i in items} == said
    # a set rendered before the metadata named its subjects (carousel-synth-1): counted in no such row
    old = tmp_path / "old"
    shutil.copytree(small_synth, old)
    for meta in (old / "dataset").glob("*_metadata.json"):
        data = json.loads(meta.read_text())
        del data["subjects"]
        meta.write_text(json.dumps(data))
    assert {holds_thin_subject(i) for i in load_carousel(old).items} == {None}


def test_a_frame_is_empty_when_it_holds_no_outlined_object_large_enough_to_count():
    import numpy as np

    from multicrop.evaluation.scoreboard.sets import frame_is_empty

    masks = np.zeros((2, 100, 200), bool)
    masks[0, 10:60, 20:80] = True          # a person of 15 % of the frame
    masks[1, 90:92, 190:195] = True        # a speck of 0.05 %
    assert not frame_is_empty(masks, (1, 3), (200, 100))
    assert frame_is_empty(masks[1:], (3,), (200, 100))         # the speck alone is too small to be held
    assert frame_is_empty(np.zeros((0, 100, 200), bool), (), (200, 100))
