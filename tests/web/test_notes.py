"""The crop wing's notes about cut crops, as the page says them (written by the rule itself, so they cannot drift)."""

from __future__ import annotations

import pytest

from multicrop.crop.direct.rules import NoSlicedBody
from multicrop.web.notes import note_items


@pytest.mark.parametrize(("cut", "portrait", "said"), [
    (1, 0, "Crop 2 cuts through someone: no crop of these ratios holds the group of 3 people whole."),
    (3, 1, "Crop 2 cuts through 3 people or animals: no crop of these ratios holds the group of 3 people whole."),
    (0, 1, "Crop 2 is a portrait, ending at the waist or chest: no crop of these ratios holds the group of 3 "
           "people whole."),
    (0, 3, "Crop 2 is a group portrait of 3 people, ending at their waists or chests: no crop of these ratios "
           "holds the group of 3 people whole."),
])
def test_a_cut_crop_is_said_plainly_and_goes_stale_with_the_crop(cut, portrait, said):
    note = NoSlicedBody.note(2, cut, portrait, "group of 3 people")
    assert note_items(None, [note]) == [{"text": said, "kind": "crops"}]


def test_a_crop_that_cuts_no_one_has_no_note():
    assert NoSlicedBody.note(1, 0, 0, "dog") is None
