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


def _dims_panel(tmp_path, holistic, dimension):
    p = tmp_path / f"h{holistic}d{dimension}.toml"
    p.write_text(f'holistic_repetitions = {holistic}\ndimension_repetitions = {dimension}\n'
                 '[[families]]\nname = "measured"\nbackend = "measured"\nmodel = "measured-v1"\n')
    return p


def test_a_combiner_needs_the_prompts_its_features_come_from(spoiled_first, tmp_path):
    import pandas as pd

    from multicrop.fusion.combiners import RidgeCombiner
    from multicrop.schema import DIMENSION_IDS

    cols = ["H:measured"] + [f"P:measured:{d}" for d in DIMENSION_IDS]
    hp = RidgeCombiner().fit(pd.DataFrame(np.arange(2.0 * len(cols)).reshape(2, -1), columns=cols), [0.0, 1.0])
    h = RidgeCombiner().fit(pd.DataFrame({"H:measured": [1.0, 2.0]}), [0.0, 1.0])
    h_array = RidgeCombiner().fit(np.array([[1.0], [2.0]]), [0.0, 1.0])
    # H+P columns on a panel without dimension prompts: refused, not silently unscored
    with pytest.raises(InvalidParameterError, match=r"fitted on feature\(s\) P:measured:\w+.* that this panel does "
                                                    r"not give \(the panel's dimension_repetitions is 0\); "
                                                    r"the panel gives H:measured$"):
        rank_crops(spoiled_first, _dims_panel(tmp_path, 1, 0), combiner=hp)
    # H columns on a panel without holistic prompts
    with pytest.raises(InvalidParameterError, match=r"fitted on feature\(s\) H:measured that this panel does not "
                                                    r"give \(the panel's holistic_repetitions is 0\)"):
        rank_crops(spoiled_first, _dims_panel(tmp_path, 0, 1), combiner=h)
    with pytest.raises(InvalidParameterError, match="fitted on an array of 1 features .* holistic_repetitions is 0"):
        rank_crops(spoiled_first, _dims_panel(tmp_path, 0, 1), combiner=h_array)
    # the same H combiner on a panel with holistic prompts scores every alternative
    r = rank_crops(spoiled_first, _dims_panel(tmp_path, 1, 0), combiner=h).ranking
    assert all(a["panel_score"] is not None for a in r["crops"][0]["alternatives"])


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
