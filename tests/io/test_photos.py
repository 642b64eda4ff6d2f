"""io.list_photos: the one photo-list rule (folders by FORMATS' suffixes, no dot-files, globs, stdin)."""

from __future__ import annotations

import io

import pytest

from multicrop.errors import InvalidParameterError
from multicrop.io import SUPPORTED_SUFFIXES, list_photos


@pytest.fixture
def folder(tmp_path):
    for name in ("b.jpg", "a.GIF", "c.webp", ".hidden.jpg", "notes.txt"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.png").write_bytes(b"")
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "e.jpg").write_bytes(b"")
    return tmp_path


def test_a_folder_gives_its_photos_of_every_format_gifs_included(folder):
    assert ".gif" in SUPPORTED_SUFFIXES
    assert [p.name for p in list_photos([folder])] == ["a.GIF", "b.jpg", "c.webp"]


def test_recursive_adds_subfolders_but_never_dot_folders(folder):
    assert [p.relative_to(folder).as_posix() for p in list_photos([folder], recursive=True)] == [
        "a.GIF", "b.jpg", "c.webp", "sub/d.png"]


def test_stdin_globs_and_duplicates(folder):
    stdin = io.StringIO(f"# a comment\n\n{folder / 'b.jpg'}\n{folder / 'sub'}\n")
    got = list_photos(["-", str(folder / "*.webp"), folder / "b.jpg"], stdin=stdin)
    assert [p.name for p in got] == ["b.jpg", "d.png", "c.webp"]


def test_a_folder_without_photos_is_one_clear_error(tmp_path):
    (tmp_path / "notes.txt").write_bytes(b"")
    with pytest.raises(InvalidParameterError, match="folder holds no photo .*-R also searches"):
        list_photos([tmp_path])
    with pytest.raises(InvalidParameterError, match="given twice"):
        list_photos(["-", "-"], stdin=io.StringIO("x.jpg\n"))
