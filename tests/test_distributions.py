"""multicrop.distributions answers as importlib.metadata does, or says it cannot be sure."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import multicrop
from multicrop.distributions import may_declare, version_on_path


def dist_info(root: Path, folder: str, *, version: str | None = "1.0", entry_points: str | None = None,
              metadata_file: str = "METADATA") -> Path:
    d = root / folder
    d.mkdir(parents=True)
    if version is not None:
        (d / metadata_file).write_text(f"Metadata-Version: 2.1\nName: {folder.split('-')[0]}\nVersion: {version}\n\n"
                                       "Version: 9.9 (the body, not a header)\n")
    if entry_points is not None:
        (d / "entry_points.txt").write_text(entry_points)
    return d


@pytest.mark.parametrize("name", ["multicrop", "numpy", "Pillow", "pillow", "onnxruntime", "typer", "pytest",
                                  "typing_extensions", "typing-extensions"])
def test_installed_versions_are_what_importlib_metadata_reads(name):
    assert version_on_path(name, sys.path, sys.meta_path) == importlib.metadata.version(name)


def test_the_package_version_is_the_installed_one():
    assert multicrop.package_version() == importlib.metadata.version("multicrop")


def test_a_folder_of_distributions_reads_like_importlib_metadata(tmp_path):
    dist_info(tmp_path, "My_Plug-2.0.dist-info", version="2.0.post1")
    dist_info(tmp_path, "old-0.5.egg-info", version="0.5", metadata_file="PKG-INFO")
    egg = tmp_path / "eggy-3.1-py3.11.egg"
    dist_info(egg, "EGG-INFO", version="3.1", metadata_file="PKG-INFO")
    path = [str(tmp_path), str(egg)]
    for name in ("my-plug", "My.Plug", "old", "eggy"):
        expected = next(importlib.metadata.distributions(name=name, path=path)).version
        assert version_on_path(name, path) == expected
    assert (version_on_path("my-plug", path), version_on_path("eggy", path)) == ("2.0.post1", "3.1")
    assert version_on_path("absent", path) is None


def test_the_first_distribution_on_the_path_wins(tmp_path):
    dist_info(tmp_path / "a", "plug-1.0.dist-info", version="1.0")
    dist_info(tmp_path / "b", "plug-2.0.dist-info", version="2.0")
    path = [str(tmp_path / "b"), str(tmp_path / "a"), str(tmp_path / "missing")]
    assert version_on_path("plug", path) == "2.0" == next(importlib.metadata.distributions(name="plug", path=path)).version


def test_metadata_without_a_version_header_asks_importlib_metadata(tmp_path):
    d = dist_info(tmp_path, "plug-1.0.dist-info", version=None)
    (d / "METADATA").write_text("Metadata-Version: 2.1\nName: plug\n\nVersion: 1.0\n")
    assert version_on_path("plug", [str(tmp_path)]) is None


def test_a_group_is_declared_only_where_an_entry_points_file_names_it(tmp_path):
    dist_info(tmp_path, "plug-1.0.dist-info", entry_points="[multicrop.saliency]\nfake = plug:Fake\n")
    dist_info(tmp_path, "other-1.0.dist-info", entry_points="[console_scripts]\nother = other:main\n")
    dist_info(tmp_path, "bare-1.0.dist-info")
    path = [str(tmp_path)]
    for group in ("multicrop.saliency", "console_scripts", "multicrop.detectors"):
        found = [ep for d in importlib.metadata.distributions(path=path) for ep in d.entry_points if ep.group == group]
        assert may_declare(group, path) is bool(found)
    assert may_declare("multicrop.detectors", path) is False
    assert may_declare("multicrop.saliency", [str(tmp_path / "missing")]) is False


def test_an_egg_declares_its_groups(tmp_path):
    egg = tmp_path / "plug-1.0.egg"
    dist_info(egg, "EGG-INFO", entry_points="[multicrop.scorers]\nx = plug:X\n")
    assert may_declare("multicrop.scorers", [str(egg)]) is True
    assert may_declare("multicrop.scorers", [str(tmp_path)]) is False  # the egg is an entry of the path, not a child


def test_places_only_importlib_metadata_reads_are_unsure(tmp_path):
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("plug-1.0.dist-info/METADATA", "Name: plug\nVersion: 1.0\n")
    assert may_declare("multicrop.saliency", [str(archive)]) is True
    assert version_on_path("plug", [str(archive)]) is None

    class Finder:
        def find_distributions(self, context=None):  # pragma: no cover - never called here
            return iter(())

    assert may_declare("multicrop.saliency", [], [Finder()]) is True
    assert may_declare("multicrop.saliency", [str(tmp_path).encode()]) is True  # bytes on sys.path
    assert version_on_path("multicrop", sys.path, [Finder()]) is None


def test_an_unreadable_entry_points_file_is_unsure(tmp_path, monkeypatch):
    d = dist_info(tmp_path, "plug-1.0.dist-info", entry_points="[x]\n")
    assert may_declare("multicrop.saliency", [str(tmp_path)]) is False   # readable, and names another group
    real = open

    def refusing(path, *args, **kwargs):  # what open() raises on a file of mode 000 for a user (root may read it)
        if str(path).endswith("entry_points.txt"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", refusing)
    assert may_declare("multicrop.saliency", [str(tmp_path)]) is True
    assert (d / "entry_points.txt").is_file()


PROBE = """
import sys
from multicrop.registry import available
print(available("saliency"), "importlib.metadata" in sys.modules)
"""


def _probe(extra: Path | None) -> str:
    env = dict(os.environ)
    src = str(Path(multicrop.__file__).parents[1])
    env["PYTHONPATH"] = os.pathsep.join([str(extra)] * (extra is not None) + [src])
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    return proc.stdout.strip()


def test_a_registry_reads_importlib_metadata_only_when_a_plugin_exists(tmp_path):
    builtin = _probe(None)
    assert builtin.endswith("] False") and "'u2netp'" in builtin and "'fake'" not in builtin
    (tmp_path / "plug.py").write_text("class Fake:\n    name, version, description = 'fake', '1', 'a plugin'\n")
    dist_info(tmp_path, "plug-1.0.dist-info", entry_points="[multicrop.saliency]\nfake = plug:Fake\n")
    with_plugin = _probe(tmp_path)
    assert with_plugin.endswith("] True") and "'fake'" in with_plugin and "'u2netp'" in with_plugin
