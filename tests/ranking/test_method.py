"""The carousel method ``direct-measured``: registered, keyed on the panel, and its crops are the ranked ones."""

from __future__ import annotations

import numpy as np

from multicrop.evaluation.carousel.methods import METHODS
from multicrop.ranking import shortlists


def test_its_version_extends_direct_auto_and_changes_with_the_ranking(monkeypatch):
    m = METHODS.create("direct-measured")
    auto = METHODS.create("direct-auto").version
    assert m.version.startswith(auto + "+") and m.version != auto
    before = m.version
    monkeypatch.setattr(shortlists, "RANKING_VERSION", "test")
    assert m.version != before


def test_its_version_changes_with_the_panel(monkeypatch, tmp_path):
    import multicrop.ranking.settings as settings

    m = METHODS.create("direct-measured")
    before = m.version
    other = tmp_path / "panel.toml"
    other.write_text(settings.measured_panel_path().read_text().replace("holistic_repetitions = 1",
                                                                        "holistic_repetitions = 2"))
    monkeypatch.setattr(settings, "measured_panel_path", lambda: other)
    assert m.version != before


def test_it_predicts_the_panels_choice(monkeypatch):
    import multicrop.ranking.shortlists as sl

    img = np.full((300, 900, 3), 40, np.uint8)
    img[100:200, 100:200] = 230
    img[100:200, 700:800] = 230
    seen = []
    real = sl.rank_crops

    def spy(result, panel, **kw):
        out = real(result, panel, **kw)
        seen.append(out)
        return out

    monkeypatch.setattr(sl, "rank_crops", spy)
    res = METHODS.create("direct-measured").predict(img, 2, "1:1")
    (ranked,) = seen
    assert res.boxes == tuple(c.box for c in ranked.crops)
    assert ranked.ranking["panel"]["families"][0]["backend"] == "measured"
    assert all(len(c["alternatives"]) <= 4 for c in ranked.ranking["crops"])
