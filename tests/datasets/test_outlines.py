"""Outlined-photo folders: YOLO-segmentation polygons and COCO JSON (polygons, RLE)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from PIL import Image

from multicrop.datasets import outlines_yolo
from multicrop.datasets.outlines import (
    Polygons,
    RunLength,
    decode_rle,
    load_coco_outlines,
    load_outlines,
    load_yolo_outlines,
    polygon_mask,
    read_class_names,
    rle_counts_from_string,
    split_rings,
)
from multicrop.errors import DatasetError


def _photo(path, width, height):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (width, height), (90, 120, 150)).save(path)
    return path


def _yolo_folder(tmp_path, lines, *, size=(40, 20), classes="# ids\n1: person\n18: dog\n"):
    root = tmp_path / "set"
    _photo(root / "images" / "a.jpg", *size)
    (root / "labels").mkdir(parents=True)
    (root / "labels" / "a.txt").write_text("\n".join(lines) + "\n")
    if classes is not None:
        (root / "classes.txt").write_text(classes)
    return root


# ----------------------------------------------------------------------------- rasterising


def test_polygon_mask_takes_the_pixels_mostly_inside():
    # Corner coordinates (COCO): the rectangle (1,1)-(5,4) covers pixels x 1..4, y 1..3 exactly.
    m = polygon_mask([(1, 1, 5, 1, 5, 4, 1, 4)], width=8, height=6)
    expected = np.zeros((6, 8), bool)
    expected[1:4, 1:5] = True
    assert (m == expected).all()
    # 0.3..3.7 on both axes: pixels 0 and 3 are 70 % inside, so 4x4 = 16 pixels; pycocotools'
    # rasteriser gives the same 12 and 16 pixels for these two polygons (checked with pycocotools 2.0).
    assert polygon_mask([(0.3, 0.3, 3.7, 0.3, 3.7, 3.7, 0.3, 3.7)], width=8, height=6).sum() == 16
    # A quarter of a pixel: not inside; three quarters: inside (the edge is placed to a quarter pixel).
    assert polygon_mask([(0, 0, 1.25, 0, 1.25, 1, 0, 1)], width=4, height=4).sum() == 1
    assert polygon_mask([(0.75, 0, 3, 0, 3, 1, 0.75, 1)], width=4, height=4).sum() == 2
    assert polygon_mask([(0, 0, 1.75, 0, 1.75, 1, 0, 1)], width=4, height=4).sum() == 2


def test_polygon_mask_joins_parts_and_clips_to_the_frame():
    parts = [(0, 0, 2, 0, 2, 2, 0, 2), (1, 1, 3, 1, 3, 3, 1, 3), (8, 8, 20, 8, 20, 20, 8, 20)]
    m = polygon_mask(parts, width=10, height=10)
    # two overlapping 2x2 squares (7 pixels: the overlap stays filled) and the 2x2 corner inside the frame
    assert m.sum() == 4 + 4 - 1 + 4
    assert m[1, 1] and m[9, 9] and not m[0, 2]


def test_split_rings_at_each_returning_first_point():
    line = [0, 0, 4, 0, 4, 4, 0, 0, 5, 5, 9, 5, 9, 9, 5, 5]
    assert split_rings(line) == ((0, 0, 4, 0, 4, 4, 0, 0), (5, 5, 9, 5, 9, 9, 5, 5))
    assert split_rings([0, 0, 4, 0, 4, 4]) == ((0, 0, 4, 0, 4, 4),)  # an open YOLO polygon: one ring
    assert split_rings([0, 0, 1, 1, 0, 0]) == ()  # two distinct points are no area
    with pytest.raises(DatasetError, match="x y pairs"):
        split_rings([0, 0, 1])


# ----------------------------------------------------------------------------- RLE


def test_compressed_rle_matches_pycocotools():
    # Strings written by pycocotools 2.0 (mask.encode of these masks, Fortran order).
    m = np.zeros((6, 8), bool)
    m[1:4, 2:6] = True
    m[5, 0] = m[0, 7] = True
    assert (decode_rle("5172L000005NM", height=6, width=8) == m).all()
    b = np.zeros((20, 30), bool)
    b[2:18, 3:9] = True
    b[:, 20] = True
    counts = rle_counts_from_string("n1`04000000000j64fN")
    # runs longer than 31 take two characters; later runs are written as differences
    assert counts == (62, 16, 4, 16, 4, 16, 4, 16, 4, 16, 4, 16, 222, 20, 180)
    assert (decode_rle(counts, height=20, width=30) == b).all()


def test_uncompressed_rle_is_column_major_zeros_first():
    # 3 zeros, 2 ones, 1 zero down the columns of a 2x3 mask
    assert decode_rle([3, 2, 1], height=2, width=3).astype(int).tolist() == [[0, 0, 1], [0, 1, 0]]
    assert decode_rle([0, 6], height=2, width=3).all()
    with pytest.raises(DatasetError, match="a 3x2 mask has 6"):
        decode_rle([3, 2], height=2, width=3)
    with pytest.raises(DatasetError, match="outside COCO's encoding"):
        rle_counts_from_string("5 2")


def test_run_length_resized_to_another_size():
    rl = RunLength((3, 2, 1), (2, 3))
    assert rl.mask(3, 2).sum() == 2
    assert rl.mask(6, 4).sum() == 8  # nearest neighbour: each pixel becomes 2x2


# ----------------------------------------------------------------------------- YOLO


def test_yolo_folder_to_masks_at_the_photo_size(tmp_path):
    # a person 0.25..0.75 x 0.25..0.75 of a 40x20 photo (20x10 pixels) and a dog in two parts
    root = _yolo_folder(tmp_path, [
        "1 0.25 0.25 0.75 0.25 0.75 0.75 0.25 0.75",
        "18 0 0 0.1 0 0.1 0.5 0 0 0.9 0.5 1 0.5 1 1 0.9 0.5",
    ])
    ds = load_yolo_outlines(root)
    assert ds.format == "yolo" and len(ds) == 1 and ds.skipped == ()
    assert ds.classes == {1: "person", 18: "dog"}
    photo = ds.photos[0]
    assert (photo.id, photo.size, photo.categories) == ("a", (40, 20), (1, 18))
    assert [o.name for o in photo.objects] == ["person", "dog"]
    assert isinstance(photo.objects[1].shape, Polygons) and len(photo.objects[1].shape.rings) == 2
    masks = photo.masks()
    assert masks.shape == (2, 20, 40) and masks.dtype == bool
    assert masks[0].sum() == 200 and masks[0][5:15, 10:30].all()
    # two right triangles of 4x10 pixels: 20 pixels each plus the ones cut in half on the diagonal
    assert 40 <= masks[1].sum() <= 50 and masks[1][:, 5:35].sum() == 0
    assert load_outlines(root).photos == ds.photos


def test_yolo_without_classes_and_labels_without_photos(tmp_path):
    root = _yolo_folder(tmp_path, ["3 0 0 1 0 1 1"], classes=None)
    (root / "labels" / "b.txt").write_text("1 0 0 1 0 1 1\n")
    ds = load_yolo_outlines(root)
    assert ds.classes == {} and ds.photos[0].objects[0].name == ""
    assert [s[0] for s in ds.skipped] == ["b"] and "no photo b.jpg" in ds.skipped[0][1]


@pytest.mark.parametrize("line, message", [
    ("1 0.1 0.1 0.5", "x y pairs"),
    ("1 0 0 2 0 2 2", "normalised to 0-1"),
    ("one 0 0 1 0 1 1", "class x1 y1"),
    ("1 0 0 1 1", "at least three points"),
])
def test_yolo_bad_lines_name_the_file_and_line(tmp_path, line, message):
    root = _yolo_folder(tmp_path, ["1 0 0 1 0 1 1", line])
    with pytest.raises(DatasetError, match=rf"a\.txt:2: .*{message}"):
        load_yolo_outlines(root)


def test_class_names_file_errors(tmp_path):
    p = tmp_path / "classes.txt"
    p.write_text("1: person\nnot a line\n")
    with pytest.raises(DatasetError, match="classes.txt:2: expected 'id: name'"):
        read_class_names(p)


def test_a_label_file_that_is_a_fifo_is_refused_not_read(tmp_path):
    root = _yolo_folder(tmp_path, ["1 0 0 1 0 1 1"])
    label = root / "labels" / "a.txt"
    label.unlink()
    os.mkfifo(label)  # nobody writes to it: an unbounded read would block for ever
    with pytest.raises(DatasetError, match=r"^YOLO label file .*a\.txt: is a FIFO \(named pipe\), not a regular file$"):
        load_yolo_outlines(root)


def test_an_oversized_label_file_is_refused(tmp_path, monkeypatch):
    root = _yolo_folder(tmp_path, ["1 0 0 1 0 1 1"])  # 14 bytes with its newline
    monkeypatch.setattr(outlines_yolo, "LABEL_LIMIT", 13)
    with pytest.raises(DatasetError, match=r"a\.txt: 14 bytes is larger than the 13 bytes allowed"):
        load_yolo_outlines(root)
    monkeypatch.setattr(outlines_yolo, "LABEL_LIMIT", 14)
    assert len(load_yolo_outlines(root).photos[0].objects) == 1


def test_a_classes_file_that_is_a_directory_or_too_large_is_refused(tmp_path, monkeypatch):
    (tmp_path / "dir.txt").mkdir()
    with pytest.raises(DatasetError, match=r"^YOLO classes file .*dir\.txt: is a directory, not a regular file$"):
        read_class_names(tmp_path / "dir.txt")
    p = tmp_path / "classes.txt"
    p.write_text("1: person\n")
    monkeypatch.setattr(outlines_yolo, "CLASSES_LIMIT", 5)
    with pytest.raises(DatasetError, match=r"classes\.txt: 10 bytes is larger than the 5 bytes allowed"):
        read_class_names(p)


# ----------------------------------------------------------------------------- COCO


def _coco(tmp_path, annotations, *, folder="images"):
    _photo(tmp_path / folder / "p1.jpg", 8, 6)
    data = {
        "images": [{"id": 7, "file_name": "p1.jpg", "width": 8, "height": 6},
                   {"id": 8, "file_name": "missing.jpg", "width": 8, "height": 6}],
        "annotations": annotations,
        "categories": [{"id": 1, "name": "person"}, {"id": 17, "name": "cat"}],
    }
    path = tmp_path / "annotations" / "instances_val.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_coco_polygons_and_both_rle_forms(tmp_path):
    path = _coco(tmp_path, [
        {"id": 1, "image_id": 7, "category_id": 1, "iscrowd": 0, "segmentation": [[1, 1, 5, 1, 5, 4, 1, 4]]},
        {"id": 2, "image_id": 7, "category_id": 17, "iscrowd": 0,
         "segmentation": {"size": [6, 8], "counts": "5172L000005NM"}},
        {"id": 3, "image_id": 7, "category_id": 1, "iscrowd": 1,
         "segmentation": {"size": [6, 8], "counts": [40, 8]}},
    ])
    ds = load_coco_outlines(path)
    assert ds.format == "coco" and [p.id for p in ds.photos] == ["p1"]
    assert [s[0] for s in ds.skipped] == ["missing"]
    photo = ds.photos[0]
    assert photo.size == (8, 6) and photo.categories == (1, 17, 1)
    assert [o.crowd for o in photo.objects] == [False, False, True]
    assert [o.name for o in photo.objects] == ["person", "cat", "person"]
    masks = photo.masks()
    assert masks[0].sum() == 12 and masks[0][1:4, 1:5].all()
    assert masks[1].sum() == 14 and masks[1][1:4, 2:6].all() and masks[1][5, 0] and masks[1][0, 7]
    # the last 8 of 48 pixels in column order: all of column 7 and the bottom two of column 6
    assert masks[2].sum() == 8 and masks[2][:, 7].all() and masks[2][4:, 6].all()
    # the folder holding annotations/instances_*.json loads the same photos
    assert load_outlines(tmp_path).photos == ds.photos


@pytest.mark.parametrize("segmentation, message", [
    ({"size": [6, 8], "counts": [3, 2]}, "add up to 5 pixels"),
    ([[1, 1, 2, 2]], "at least three points"),
    ("polygon", "list of polygons or an RLE dict"),
])
def test_coco_bad_segmentations(tmp_path, segmentation, message):
    path = _coco(tmp_path, [{"id": 9, "image_id": 7, "category_id": 1, "segmentation": segmentation}])
    with pytest.raises(DatasetError, match=f"annotation 9: .*{message}"):
        load_coco_outlines(path)


def test_not_an_outline_folder(tmp_path):
    with pytest.raises(DatasetError, match="neither labels/"):
        load_outlines(tmp_path)
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(DatasetError, match="'images' and 'annotations'"):
        load_outlines(tmp_path / "x.json")
