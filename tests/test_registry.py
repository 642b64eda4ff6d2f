"""Tests of the one registry mechanism every pluggable kind uses."""

import pytest

from multicrop.errors import RegistryError, UnknownNameError
from multicrop.registry import Registry


def test_register_and_get_as_decorator_and_call():
    reg = Registry("thing")

    @reg.register("alpha")
    def alpha():
        return 1

    reg.register("beta", 2)
    assert reg.get("alpha") is alpha
    assert reg.get("beta") == 2
    assert reg.names() == ["alpha", "beta"]
    assert "alpha" in reg and "gamma" not in reg
    assert len(reg) == 2
    assert reg.items() == [("alpha", alpha), ("beta", 2)]


def test_duplicate_name_is_an_error_not_an_assertion():
    reg = Registry("thing")
    reg.register("a", 1)
    with pytest.raises(RegistryError, match="'a' is already registered"):
        reg.register("a", 2)
    assert reg.get("a") == 1


@pytest.mark.parametrize("bad", ["", None, 3])
def test_names_must_be_non_empty_strings(bad):
    with pytest.raises(RegistryError):
        Registry("thing").register(bad, 1)


def test_unknown_name_suggests_close_matches():
    reg = Registry("saliency backend")
    reg.register("u2netp", 1)
    reg.register("spectral", 2)
    with pytest.raises(UnknownNameError) as info:
        reg.get("u2net")
    msg = str(info.value)
    assert "unknown saliency backend 'u2net'" in msg
    assert "did you mean 'u2netp'" in msg
    assert "Available: spectral, u2netp" in msg
    # Also a KeyError, for callers that treat registries like mappings.
    assert isinstance(info.value, KeyError)


def test_unknown_name_without_close_match_lists_what_exists():
    reg = Registry("thing")
    reg.register("alpha", 1)
    with pytest.raises(UnknownNameError, match=r"unknown thing 'zzz'\. Available: alpha$"):
        reg.get("zzz")


def test_unregister():
    reg = Registry("thing")
    reg.register("a", 1)
    reg.unregister("a")
    assert "a" not in reg
    with pytest.raises(UnknownNameError):
        reg.unregister("a")


def test_entry_points_are_loaded_lazily(monkeypatch):
    import multicrop.registry as mod

    class FakeEP:
        name = "plugin"

        def load(self):
            return "loaded"

    calls = []

    def fake_entry_points(group):
        calls.append(group)
        return [FakeEP()]

    monkeypatch.setattr(mod.importlib.metadata, "entry_points", fake_entry_points)
    reg = Registry("thing", entry_point_group="multicrop.things")
    reg.register("builtin", 1)
    assert calls == []
    assert reg.names() == ["builtin", "plugin"]
    assert reg.get("plugin") == "loaded"
    assert calls == ["multicrop.things"]


def test_entry_point_shadowing_a_builtin_is_an_error_naming_the_distribution(monkeypatch):
    import multicrop.registry as mod

    class FakeDist:
        name = "evil-plugin"

    class FakeEP:
        name = "builtin"
        value = "evil.mod:thing"
        dist = FakeDist()

        def load(self):  # pragma: no cover - must not be loaded
            raise AssertionError("a clashing entry point must not be loaded")

    monkeypatch.setattr(mod.importlib.metadata, "entry_points", lambda group: [FakeEP()])
    reg = Registry("thing", entry_point_group="multicrop.things")
    reg.register("builtin", 1)
    for lookup in (lambda: reg.get("builtin"), reg.names):
        with pytest.raises(RegistryError, match=r"'builtin' from distribution evil-plugin \(evil.mod:thing\)"):
            lookup()
