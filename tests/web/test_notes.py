"""The crop wing's notes about cut crops, as the page says them (written by the library itself, so they cannot
drift)."""

from __future__ import annotations

import pytest

from multicrop.crop.direct.notes import counted, fill_cut, zoom_notes
from multicrop.crop.direct.rules import NoSlicedBody
from multicrop.web.notes import note_items


@pytest.mark.parametrize(("cut", "portrait", "who", "said"), [
    (1, 0, "1 elephant", "Crop 2 cuts through an elephant: no crop of these ratios frames the group of 3 people "
                         "without a cut."),
    (3, 1, "2 people and 1 dog", "Crop 2 cuts through 2 people and a dog: no crop of these ratios frames the group "
                                 "of 3 people without a cut."),
    (3, 0, "", "Crop 2 cuts through 3 people, animals or vehicles: no crop of these ratios frames the group of 3 "
               "people without a cut."),
    (0, 1, "", "Crop 2 is a portrait, ending at the chest, waist or thighs: no crop of these ratios holds the group "
               "of 3 people whole."),
    (0, 3, "", "Crop 2 is a group portrait of 3 people, ending at their chests, waists or thighs: no crop of these "
               "ratios holds the group of 3 people whole."),
])
def test_a_cut_crop_is_said_plainly_and_goes_stale_with_the_crop(cut, portrait, who, said):
    note = NoSlicedBody.note(2, cut, portrait, "group of 3 people", who)
    assert note_items(None, [note]) == [{"text": said, "kind": "crops"}]


def test_a_crop_that_cuts_no_one_has_no_note():
    assert NoSlicedBody.note(1, 0, 0, "dog") is None


@pytest.mark.parametrize(("n", "who", "what"), [(1, "", "a person, animal or vehicle"),
                                                (2, "", "2 people, animals or vehicles"),
                                                (2, counted(["sheep", "sheep"]), "2 sheep"),
                                                (2, counted(["person", "umbrella"]), "a person and an umbrella")])
def test_a_force_k_fill_that_slices_is_said_plainly(n, who, what):
    said = note_items(None, [fill_cut(4, n, who)])
    assert said == [{"text": f"Crop 4 cuts through {what}: it only fills the carousel up to the number of crops "
                             "asked.", "kind": "crops"}]


def test_close_ups_portraits_and_zooms_are_told_apart():
    """A portrait after the wide shot is said as one, on the page too (before direct-17's k auto portraits every
    close-up note said "close-up")."""
    said = [item["text"] for item in note_items(None, zoom_notes(1, 3, 2))]
    assert said == ["2 crops zoom in on someone another crop shows whole.",
                    "1 crop zooms in on someone another crop shows whole, ending at the chest or waist.",
                    "2 crops show a subject of another crop closer or wider."]
    assert zoom_notes(0, 0, 0) == []
    closer = note_items(None, zoom_notes(0, 0, 0, 1))
    assert closer == [{"text": "1 crop looks closer inside the first.", "kind": "crops"}]


def test_every_note_pattern_has_a_known_kind():
    """Each pattern carries its kind beside it; a misspelt kind would hide the note from the page's filters."""
    from multicrop.web.notes import _NOTES, NOTE_KINDS

    assert [kind for _, kind, _ in _NOTES if kind not in NOTE_KINDS] == []
    assert {kind for _, kind, _ in _NOTES} == set(NOTE_KINDS) - {"photo"}  # "photo" is the fallback


def test_a_short_carousel_counts_its_portraits_apart():
    from multicrop.crop.direct.notes import short_note

    note = short_note(1, 5, force=False, close=2, portraits=1, zooms=1, why="nothing else")
    assert note == ("this photo has 1 distinct subject and 1 close-up and 1 portrait and 1 zoom worth a crop; "
                    "wrote 4 crops, asked for 5 (nothing else)")
    assert note_items(None, [note])[0]["text"] == ("This photo has 1 distinct subject and 1 close-up and 1 portrait "
                                                   "and 1 zoom, so it gets 4 crops instead of 5: nothing else.")


def test_a_photo_with_no_subject_is_said_plainly_with_how_many_views_and_why_fewer():
    from multicrop.crop.direct.views import NO_SUBJECT

    said = note_items(None, [f"{NO_SUBJECT}: one view of the scene and 1 closer view inside it",
                             f"{NO_SUBJECT}: 2 views of the scene, asked for 4 (no other view slicing nothing "
                             "differs enough from these)"])
    assert [n["kind"] for n in said] == ["count", "count"]
    assert said[0]["text"].endswith("its crops are views of the scene: the widest first, then closer inside it.")
    assert said[1]["text"].endswith("only 2 of the 4 asked for differ enough.")
    assert not any("no subject found" in n["text"] for n in said)  # the library's wording stays in the record


def test_a_wide_view_and_a_subject_no_crop_frames_are_said_plainly():
    from multicrop.crop.direct.notes import unframed
    from multicrop.crop.subjects import Subject
    from multicrop.geometry import Box
    from multicrop.ratios import parse_ratios

    ratios = parse_ratios("2:3,3:2")
    band = Subject("salient", Box(0, 0, 10, 10), 1.0, 1.0, "saliency", "salient")
    train = Subject("vehicle", Box(0, 0, 10, 10), 0.9, 1.0, "detector", "train")
    said = note_items(None, zoom_notes(0, 0, 0, wide=1)
                      + [unframed(band, ratios, False), unframed(train, ratios, True, at=2)])
    assert said == [
        {"text": "Crop 1 shows together, wider, the subjects the other crops show one by one.", "kind": "crops"},
        {"text": "The salient thing is wider or taller than any crop of 2:3 or 3:2: crop 1 shows as much of it as "
                 "fits.", "kind": "crops"},
        {"text": "Every crop of 2:3 or 3:2 that holds the train whole would cut through someone, a face or another "
                 "subject: crop 2 shows the largest part of it.", "kind": "crops"}]


def test_the_parts_of_a_subject_wider_than_every_crop_are_said_plainly():
    from multicrop.crop.direct.notes import short_note, unframed
    from multicrop.crop.subjects import Subject
    from multicrop.geometry import Box
    from multicrop.ratios import parse_ratios

    band = Subject("salient", Box(0, 0, 10, 10), 1.0, 1.0, "saliency", "salient")
    said = note_items(None, [unframed(band, parse_ratios("4:5"), False, at=[1, 2, 3]),
                             unframed(band, parse_ratios("2:3"), False, at=[2, 3], across=False),
                             short_note(1, 9, force=False, parts=5, why="no other part along it differs enough "
                                                                         "from these"),
                             short_note(1, 9, force=True, parts=2)])
    assert said == [
        {"text": "The salient thing is wider or taller than any crop of 4:5: crops 1–3 show it in parts, left to "
                 "right. For slides that join edge to edge, choose Seamless panorama at the top.", "kind": "crops"},
        {"text": "The salient thing is wider or taller than any crop of 2:3: crops 2–3 show it in parts, top to "
                 "bottom. For slides that join edge to edge, choose Seamless panorama at the top.", "kind": "crops"},
        {"text": "This photo has 1 distinct subject, in 6 parts, so it gets 6 crops instead of 9: no other part "
                 "along it differs enough from these.", "kind": "count"},
        {"text": "This photo has 1 distinct subject; the carousel is filled up to 9 crops, 6 of them showing nothing "
                 "new.", "kind": "count"}]
