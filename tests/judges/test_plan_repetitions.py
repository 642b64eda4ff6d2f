"""The plan refuses a panel that asks a prompt more than MAX_REPETITIONS times."""

from __future__ import annotations

import numpy as np
import pytest

from multicrop.errors import InvalidParameterError
from multicrop.judges.panel import Panel, default_panel
from multicrop.judges.plan import MAX_REPETITIONS, check_repetitions, plan_calls
from multicrop.judges.types import ImageRef


def _panel(holistic, dimension):
    return Panel(default_panel().families, holistic_repetitions=holistic, dimension_repetitions=dimension)


def test_the_bound_is_planned_and_one_more_is_refused():
    panel = default_panel()
    backends = {f.name: f.create() for f in panel.families}
    image = [ImageRef(np.zeros((8, 8, 3), np.uint8))]
    assert len(plan_calls(image, _panel(MAX_REPETITIONS, 0), backends)) == MAX_REPETITIONS == 100
    for holistic, dimension, name in [(MAX_REPETITIONS + 1, 0, "holistic_repetitions"),
                                      (1, 10**20, "dimension_repetitions")]:
        with pytest.raises(InvalidParameterError, match=rf"^panel: {name} must be an integer in \[0, 100\], got "):
            plan_calls(image, _panel(holistic, dimension), backends)


@pytest.mark.parametrize("value", [-1, 101, 1.5, True, "3"])
def test_check_repetitions_names_the_option(value):
    with pytest.raises(InvalidParameterError, match=r"^--x must be an integer in \[0, 100\], got "):
        check_repetitions(value, name="--x")
    assert check_repetitions(0, name="--x") == 0 and check_repetitions(100, name="--x") == 100
