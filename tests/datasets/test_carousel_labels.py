"""The shipped Carousel label geometry: written back out as the real LabelMe files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from multicrop.datasets.carousel import load_carousel
from multicrop.datasets.carousel_labels import (
    FORMAT,
    dumps,
    hard_failure_names,
    label_names,
    write_labelme,
)
from multicrop.errors import DatasetError, InvalidParameterError


def _tree_digest(root: Path) -> tuple[int, str]:
    """(number of files, SHA-256 over their relative paths and bytes, in sorted order)."""
    h = hashlib.sha256()
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    for f in files:
        h.update(f.encode() + b"\0" + (root / f).read_bytes() + b"\0")
    return len(files), h.hexdigest()


def test_written_files_are_the_real_files_byte_for_byte(carousel_labels):
    # The same digest, computed over the real shared/data/carousel (170 label files, 170 metadata
    # files, hard_failures.txt) when the data file was built.
    assert _tree_digest(carousel_labels) == (341, "9176798fb883c00eca35a0ae1a5d81c5447e5891e0472db2c6839b3e97e0e84f")


def test_the_loader_reads_them_unchanged(carousel_labels):
    ds = load_carousel(carousel_labels, require_images=False)
    assert ds.skipped == () and len(ds) == 170
    assert tuple(i.name for i in ds) == label_names()
    assert ds.hard_failures == frozenset(hard_failure_names()) and len(hard_failure_names()) == 45
    hockey = ds["Hockey_players"]
    assert hockey.metadata.licence and hockey.metadata.url.startswith("http")
    assert any("clipped" in n for n in hockey.notes)  # the -0.78 px corner is kept as written


def test_a_subset_lists_only_its_hard_failures(tmp_path):
    names = ["090717-N-4234E-473", "Hockey_players"]
    root = write_labelme(tmp_path / "two", names=names)
    assert sorted(p.name for p in (root / "dataset").iterdir()) == sorted(
        [f"{n}.json" for n in names] + [f"{n}_metadata.json" for n in names])
    assert (root / "hard_failures.txt").read_text(encoding="utf-8") == "090717-N-4234E-473\n"
    ds = load_carousel(root, require_images=False)
    assert [i.name for i in ds] == names and ds["090717-N-4234E-473"].hard_failure


def test_unknown_names_and_foreign_data_are_refused(tmp_path):
    with pytest.raises(InvalidParameterError, match="names not in the Carousel labels: nope"):
        write_labelme(tmp_path, names=["Hockey_players", "nope"])
    with pytest.raises(DatasetError, match="format must be 'multicrop-carousel-labels-1', got 'other'"):
        write_labelme(tmp_path, data={"format": "other", "items": [], "hard_failures": []})


def test_dumps_gives_one_json_document_with_one_item_per_line():
    data = {"format": FORMAT, "hard_failures": ["b"],
            "items": [{"name": "a", "metadata": {"title": "Fußball"}}, {"name": "b"}]}
    text = dumps(data)
    assert json.loads(text) == data
    assert text.splitlines()[3:6] == ['"items": [', '{"name":"a","metadata":{"title":"Fußball"}},', '{"name":"b"}']
