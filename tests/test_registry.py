"""Tests of the one registry mechanism every pluggable kind uses."""

import importlib

import pytest

from multicrop import registry
from multicrop.errors import RegistryError, UnknownNameError
from multicrop.registry import KINDS, Registry, available, create, registry_of


def entry(name, *, version="1", description="a test entry"):
    """A registrable class named ``name`` whose instances remember their options."""

    def __init__(self, **options):
        self.options = options

    return type(f"Entry_{name}", (), {"name": name, "version": version, "description": description,
                                     "__init__": __init__})


def test_register_as_decorator_get_and_create():
    reg = Registry("thing")

    @reg.register
    class Alpha:
        name, version, description = "alpha", "1", "first"

        def __init__(self, *, size=1):
            self.size = size

    beta = reg.register(entry("beta"))
    assert reg.get("alpha") is Alpha and reg.get("beta") is beta
    assert reg.create("alpha", size=3).size == 3
    assert reg.create("beta", x=1).options == {"x": 1}
    assert reg.names() == ["alpha", "beta"] and list(reg) == ["alpha", "beta"]
    assert "alpha" in reg and "gamma" not in reg and len(reg) == 2
    assert reg.items() == [("alpha", Alpha), ("beta", beta)]


def test_unknown_options_fail_in_the_constructor():
    reg = Registry("thing")

    @reg.register
    class Strict:
        name, version, description = "strict", "1", ""

        def __init__(self, *, size=1):
            self.size = size

    with pytest.raises(TypeError, match="colour"):
        reg.create("strict", colour="red")


def test_duplicate_name_is_an_error_not_an_assertion():
    reg = Registry("thing")
    first = reg.register(entry("a"))
    with pytest.raises(RegistryError, match="'a' is already registered"):
        reg.register(entry("a"))
    assert reg.get("a") is first


@pytest.mark.parametrize("bad", ["", None, 3])
def test_names_must_be_non_empty_strings(bad):
    with pytest.raises(RegistryError, match="non-empty string"):
        Registry("thing").register(entry(bad))


def test_entries_are_classes_with_name_version_and_description():
    reg = Registry("thing")
    with pytest.raises(RegistryError, match="only classes"):
        reg.register(entry("a")())
    no_version = type("NoVersion", (), {"name": "v", "description": ""})
    with pytest.raises(RegistryError, match="NoVersion lacks version"):
        reg.register(no_version)


def test_unknown_name_suggests_close_matches():
    reg = Registry("saliency")
    reg.register(entry("u2netp"))
    reg.register(entry("spectral"))
    with pytest.raises(UnknownNameError) as info:
        reg.get("u2net")
    msg = str(info.value)
    assert "unknown saliency 'u2net'" in msg
    assert "did you mean 'u2netp'" in msg
    assert "Available: spectral, u2netp" in msg
    # Also a KeyError, for callers that treat registries like mappings.
    assert isinstance(info.value, KeyError)


def test_unknown_name_without_close_match_lists_what_exists():
    reg = Registry("thing")
    reg.register(entry("alpha"))
    with pytest.raises(UnknownNameError, match=r"unknown thing 'zzz'\. Available: alpha$"):
        reg.get("zzz")


def test_unregister():
    reg = Registry("thing")
    reg.register(entry("a"))
    reg.unregister("a")
    assert "a" not in reg
    with pytest.raises(UnknownNameError):
        reg.unregister("a")


def test_entry_points_are_loaded_lazily(monkeypatch):
    plugin = entry("plugin")

    class FakeEP:
        name = "plugin"
        value = "plug.mod:Plugin"

        def load(self):
            return plugin

    calls = []

    def fake_entry_points(group):
        calls.append(group)
        return [FakeEP()]

    monkeypatch.setattr(registry.importlib.metadata, "entry_points", fake_entry_points)
    reg = Registry("thing", entry_point_group="multicrop.things")
    reg.register(entry("builtin"))
    assert calls == []
    assert reg.names() == ["builtin", "plugin"]
    assert reg.get("plugin") is plugin
    assert calls == ["multicrop.things"]


def test_two_threads_looking_up_at_once_load_the_plugins_once_and_both_find_them(monkeypatch):
    """``multicrop crop`` analyses two photos at a time: their first lookups of a kind come together.  The
    plugin registers once, and the thread that arrives while it loads waits for it (before, it found the
    plugin registered already, or not yet)."""
    import threading

    plugin = entry("plugin")
    loading, go_on = threading.Event(), threading.Event()

    class SlowEP:
        name = "plugin"
        value = "plug.mod:Plugin"

        def load(self):
            loading.set()
            assert go_on.wait(60)
            return plugin

    monkeypatch.setattr(registry.importlib.metadata, "entry_points", lambda group: [SlowEP()])
    reg = Registry("thing", entry_point_group="multicrop.things")
    got, errors = [], []

    def look() -> None:
        try:
            got.append(reg.get("plugin"))
        except Exception as exc:  # noqa: BLE001 - the test reports it
            errors.append(exc)

    first = threading.Thread(target=look)
    first.start()
    assert loading.wait(60)               # the first lookup is inside the plugin's load
    second = threading.Thread(target=look)
    second.start()
    go_on.set()
    first.join(60)
    second.join(60)
    assert errors == [] and got == [plugin, plugin] and reg.names() == ["plugin"]


def test_entry_point_name_must_match_the_class_name(monkeypatch):
    class FakeEP:
        name = "alias"
        value = "plug.mod:Plugin"

        def load(self):
            return entry("plugin")

    monkeypatch.setattr(registry.importlib.metadata, "entry_points", lambda group: [FakeEP()])
    reg = Registry("thing", entry_point_group="multicrop.things")
    with pytest.raises(RegistryError, match="'alias'.*'plugin'"):
        reg.names()


def test_entry_point_shadowing_a_builtin_is_an_error_naming_the_distribution(monkeypatch):
    class FakeDist:
        name = "evil-plugin"

    class FakeEP:
        name = "builtin"
        value = "evil.mod:thing"
        dist = FakeDist()

        def load(self):  # pragma: no cover - must not be loaded
            raise AssertionError("a clashing entry point must not be loaded")

    monkeypatch.setattr(registry.importlib.metadata, "entry_points", lambda group: [FakeEP()])
    reg = Registry("thing", entry_point_group="multicrop.things")
    reg.register(entry("builtin"))
    for lookup in (lambda: reg.get("builtin"), reg.names):
        with pytest.raises(RegistryError, match=r"'builtin' from distribution evil-plugin \(evil.mod:thing\)"):
            lookup()


# --- every kind of the project, through the module-level functions -------------------------


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_has_one_shape(kind):
    module, attribute = KINDS[kind].split(":")
    reg = registry_of(kind)
    assert reg is getattr(importlib.import_module(module), attribute)
    assert reg.kind == kind
    names = available(kind)
    assert names and names == reg.names()
    for name, cls in reg.items():
        assert isinstance(cls, type) and cls.name == name
        assert isinstance(cls.description, str) and cls.description
        assert cls.version  # a class attribute or a property


def test_module_level_create_builds_registered_classes():
    assert create("combiner", "gb", random_state=3).get_params()["random_state"] == 3
    assert create("ratings-format", "csv").name == "csv"
    assert create("saliency", "u2netp", threads=1).threads == 1
    assert create("judge-backend", "measured", model="m", max_side=64).options.max_side == 64
    with pytest.raises(UnknownNameError, match="unknown combiner 'rigde'; did you mean 'ridge'"):
        create("combiner", "rigde")
    with pytest.raises(UnknownNameError, match="unknown kind 'scorers'; did you mean 'scorer'"):
        available("scorers")


def test_the_kinds_with_real_plugins_read_entry_points_and_the_others_do_not():
    groups = {kind: registry_of(kind).entry_point_group for kind in KINDS}
    assert groups == {
        "saliency": "multicrop.saliency",
        "detector": "multicrop.detectors",
        "scorer": "multicrop.scorers",
        "judge-backend": "multicrop.judge_backends",
        "combiner": None,
        "carousel-method": None,
        "ratings-format": None,
    }
