from __future__ import annotations

import pandas as pd
import pytest

from multicrop.batch.sources import Photo, list_photos, output_stems
from multicrop.errors import InvalidParameterError


def test_folder_tree_lists_images_recursively_with_relative_paths(tree):
    root, good, bad = tree
    photos = list_photos(root)
    assert sorted(p.rel for p in photos) == sorted(str(p.relative_to(root)) for p in good + bad)
    assert all(p.is_local and p.size > 0 and p.modified for p in photos)
    assert [p.path for p in photos] == sorted(p.path for p in photos)


def test_glob_keeps_paths_relative_to_its_fixed_part(tree):
    root, good, _ = tree
    photos = list_photos(f"{root}/set1/*.jpg")
    expected = [p.name for p in good if p.parent.name == "set1" and p.suffix == ".jpg"]
    assert sorted(p.rel for p in photos) == sorted(expected)


def test_csv_and_parquet_manifests_resolve_relative_entries(tree, tmp_path):
    root, good, _ = tree
    csv = root / "list.csv"
    pd.DataFrame({"path": [str(good[0].relative_to(root)), str(good[1])]}).to_csv(csv, index=False)
    assert [p.path for p in list_photos(csv)] == sorted(str(g.resolve()) for g in good[:2])
    pq = tmp_path / "list.parquet"
    pd.DataFrame({"uri": [str(good[2])]}).to_parquet(pq)
    assert [p.path for p in list_photos(pq)] == [str(good[2])]


def test_manifest_without_a_path_column_is_one_clear_error(tmp_path):
    csv = tmp_path / "m.csv"
    pd.DataFrame({"file": ["a.jpg"]}).to_csv(csv, index=False)
    with pytest.raises(InvalidParameterError, match="needs a column path or uri or image"):
        list_photos(csv)


def test_missing_source_and_empty_folder_are_errors(tmp_path):
    with pytest.raises(InvalidParameterError, match="no such file"):
        list_photos(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidParameterError, match="no photos found"):
        list_photos(tmp_path / "empty")


def test_stems_that_collide_in_one_folder_keep_their_extension():
    ps = [Photo("/r/x.jpg", "x.jpg"), Photo("/r/x.png", "x.png"), Photo("/r/d/x.jpg", "d/x.jpg")]
    assert output_stems(ps) == {"/r/x.jpg": "x-jpg", "/r/x.png": "x-png", "/r/d/x.jpg": "d/x"}


def test_folders_globs_and_manifests_follow_the_one_photo_rule(tmp_path):
    """A macOS ``._`` resource fork and a non-photo are skipped, a GIF and a WebP are taken: as ``multicrop crop``."""
    from multicrop.io import list_photos as crop_list

    for name in ("a.jpg", "._a.jpg", "notes.txt", "b.GIF", "c.webp"):
        (tmp_path / name).write_bytes(b"x")
    assert [p.rel for p in list_photos(tmp_path)] == ["a.jpg", "b.GIF", "c.webp"]
    assert [p.name for p in crop_list([tmp_path])] == ["a.jpg", "b.GIF", "c.webp"]
    assert [p.rel for p in list_photos(f"{tmp_path}/*a.jpg")] == ["a.jpg"]
    csv = tmp_path / "list.csv"
    pd.DataFrame({"path": ["a.jpg", "._a.jpg", "notes.txt", "c.webp"]}).to_csv(csv, index=False)
    refused = {p.rel: p.refused for p in list_photos(csv)}
    assert refused["a.jpg"] is None and refused["c.webp"] is None
    assert refused["._a.jpg"].startswith("a dot-file (._a.jpg")
    assert refused["notes.txt"].startswith("not an image name (.txt;")


def test_nothing_inside_a_dot_folder_is_listed_as_crop_lists_it(tmp_path):
    """``.git``, ``.thumbnails``, ``.Trash``: skipped by a folder and by a ``**`` glob below it, as by
    ``multicrop crop -R``; a dot-folder named as the source itself is read."""
    from multicrop.io import list_photos as crop_list

    for rel in ("a.jpg", "sub/b.jpg", ".thumbnails/a.jpg", "sub/.git/c.jpg"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"x")
    assert [p.rel for p in list_photos(tmp_path)] == ["a.jpg", "sub/b.jpg"]
    assert sorted(p.relative_to(tmp_path).as_posix() for p in crop_list([tmp_path], recursive=True)) == \
        ["a.jpg", "sub/b.jpg"]
    assert [p.rel for p in list_photos(f"{tmp_path}/**/*.jpg")] == ["a.jpg", "sub/b.jpg"]
    assert [p.rel for p in list_photos(tmp_path / ".thumbnails")] == ["a.jpg"]
    assert [p.rel for p in list_photos(f"{tmp_path}/.thumbnails/*.jpg")] == ["a.jpg"]


def test_an_earlier_run_s_crops_under_the_source_are_not_photos_as_crop_lists_them(tmp_path):
    """``out/a_1.jpg`` written by an earlier run (its record ``out/a.json`` lists it) is not cropped again by a
    crop batch of the folder or a glob; a photo the record does not list is, and a judge batch rates them all."""
    import json

    from multicrop.batch.runner import run_crop_batch
    from multicrop.batch.sources import without_outputs
    from multicrop.crop.config import CropConfig, OutputConfig
    from multicrop.io import list_photos as crop_list

    dst, tmp_path = tmp_path / "dst", tmp_path / "src"
    for rel in ("a.jpg", "out/a_1.jpg", "out/a_preview.jpg", "out/b_1.jpg"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"x")
    (tmp_path / "out/a.json").write_text(json.dumps({"stem": "a", "written": {"a_1.jpg": "x", "a_preview.jpg": "x"}}))
    expected = ["a.jpg", "out/b_1.jpg"]
    assert [p.rel for p in without_outputs(list_photos(tmp_path))] == expected
    assert sorted(p.relative_to(tmp_path).as_posix() for p in crop_list([tmp_path], recursive=True)) == expected
    assert [p.rel for p in without_outputs(list_photos(f"{tmp_path}/**/*.jpg"))] == expected
    assert len(list_photos(tmp_path)) == 4  # what a judge batch lists
    cfg = CropConfig(saliency="spectral", faces=False, detectors=())
    for source in (tmp_path, f"{tmp_path}/**/*.jpg"):  # the crop batch: 2 photos listed (both unreadable bytes)
        s = run_crop_batch(source, dst, crop=cfg, output=OutputConfig(preview=False), workers=1)
        assert s.total == 2
