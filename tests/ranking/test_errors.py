"""rank_crops refuses, in one line naming what is wrong: bad panels, combiners, top, results."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from multicrop.errors import InvalidParameterError
from multicrop.ranking import JudgeSettings, rank_crops


def test_a_missing_or_malformed_panel_file(spoiled_first, tmp_path):
    with pytest.raises(InvalidParameterError, match="panel file .*nope.toml does not exist"):
        rank_crops(spoiled_first, tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[[families]\n")
    with pytest.raises(InvalidParameterError, match="not valid TOML"):
        rank_crops(spoiled_first, bad)
    bad.write_text('[[families]]\nname = "m"\nbackend = "nosuch"\nmodel = "x"\n')
    with pytest.raises(InvalidParameterError, match="unknown judge backend 'nosuch'"):
        rank_crops(spoiled_first, bad)


def test_a_panel_without_holistic_prompts_cannot_be_averaged(spoiled_first, tmp_path):
    p = tmp_path / "dims.toml"
    p.write_text('holistic_repetitions = 0\ndimension_repetitions = 1\n'
                 '[[families]]\nname = "m"\nbackend = "measured"\nmodel = "measured-v1"\n')
    with pytest.raises(InvalidParameterError, match="holistic_repetitions is 0"):
        rank_crops(spoiled_first, p)


def test_a_combiner_that_does_not_match_the_panels_features(spoiled_first, measured_panel):
    import pandas as pd

    from multicrop.fusion.combiners import RidgeCombiner

    three = RidgeCombiner().fit(np.eye(3), [0.0, 1.0, 2.0])
    with pytest.raises(InvalidParameterError, match=r"fitted on 3 features, but this panel of 1 family gives 1"):
        rank_crops(spoiled_first, measured_panel, combiner=three)
    other = RidgeCombiner().fit(pd.DataFrame({"H:gpt": [1.0, 2.0]}), [0.0, 1.0])
    with pytest.raises(InvalidParameterError, match="fitted on feature.* H:gpt that this panel does not give"):
        rank_crops(spoiled_first, measured_panel, combiner=other)
    with pytest.raises(InvalidParameterError, match="not fitted"):
        rank_crops(spoiled_first, measured_panel, combiner=RidgeCombiner())


@pytest.mark.parametrize("top", [0, -1, 1.5, True])
def test_top_must_be_a_positive_integer(spoiled_first, measured_panel, top):
    with pytest.raises(InvalidParameterError, match="top must be a positive integer"):
        rank_crops(spoiled_first, measured_panel, top=top)


def test_a_result_without_its_image(spoiled_first, measured_panel):
    with pytest.raises(InvalidParameterError, match="holds no image"):
        rank_crops(replace(spoiled_first, image=None), measured_panel)


@pytest.mark.parametrize("n", [0, -2])
def test_shortlist_must_be_positive(measured_panel, n):
    with pytest.raises(InvalidParameterError, match=f"--shortlist must be a positive integer, got {n}"):
        JudgeSettings.create(measured_panel, shortlist=n)


def test_a_store_path_that_is_a_directory(measured_panel, tmp_path):
    with pytest.raises(InvalidParameterError, match="--judge-store .*: is a directory"):
        JudgeSettings.create(measured_panel, store=tmp_path)
