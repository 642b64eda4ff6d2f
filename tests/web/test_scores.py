"""Judge scores of each crop (the offline measured judge), through the API."""

from __future__ import annotations

import io

import numpy as np
from fastapi.testclient import TestClient
from PIL import Image

from multicrop.judges import measures
from multicrop.judges.rubric import DIMENSION_IDS

from .conftest import photo_bytes


def test_scores_equal_the_measured_judge_on_the_same_crops(make_app):
    data = photo_bytes(900, 400)
    with TestClient(make_app()) as c:
        pid = c.post("/api/photos", files=[("files", ("two.jpg", data, "image/jpeg"))]).json()["photos"][0]["id"]
        crops = c.post(f"/api/photos/{pid}/crops", json={"k": 2, "ratios": "2:3,3:2"}).json()["crops"]
        r = c.post(f"/api/photos/{pid}/scores", json={"k": 2, "ratios": "2:3,3:2"})
        assert r.status_code == 200, r.text
        body = r.json()
        edited = [{"x": 0, "y": 0, "w": 300, "h": 300, "ratio": "1:1"}]
        r2 = c.post(f"/api/photos/{pid}/scores", json={"boxes": edited}).json()
        assert c.post("/api/photos/nope/scores", json={}).status_code == 404
    assert body["judge"]["backend"] == "measured" and body["judge"]["version"] == measures.VERSION
    assert [s["box"] for s in body["crops"]] == [x["box"] for x in crops]  # the suggested carousel, in order
    full = Image.open(io.BytesIO(data)).convert("RGB")
    for s in body["crops"] + r2["crops"]:
        b = s["box"]
        m = measures.measure(np.asarray(full.crop((b["x"], b["y"], b["x"] + b["w"], b["y"] + b["h"]))))
        assert s["dimensions"] == measures.rubric_scores(m) and s["holistic"] == measures.holistic_score(m)
        assert sorted(s["dimensions"]) == sorted(DIMENSION_IDS) and len(s["dimensions"]) == 5
        assert all(1 <= v <= 5 for v in s["dimensions"].values()) and 1 <= s["holistic"] <= 10
        assert s["proxies"] == ["distinctiveness", "emotional_impact"]
    assert r2["crops"][0]["box"] == {"x": 0, "y": 0, "w": 300, "h": 300}  # the page's edited box is scored
    assert body["crops"][0]["dimensions"] != r2["crops"][0]["dimensions"]


def test_a_served_panel_scores_through_the_judge_runner(make_app, tmp_path):
    from multicrop.judges.panel import load_panel
    from multicrop.judges.quick import score_summary
    from multicrop.judges.runner import judge_images, scores_table
    from multicrop.judges.store.store import CallStore
    from multicrop.judges.types import ImageRef

    toml = tmp_path / "panel.toml"
    toml.write_text('[[families]]\nname = "m512"\nbackend = "measured"\nmodel = "measured-v1"\n'
                    'options = { max_side = 512 }\n', encoding="utf-8")
    panel = load_panel(toml)
    data = photo_bytes(900, 400)
    edited = [{"x": 0, "y": 0, "w": 300, "h": 300, "ratio": "1:1"}, {"x": 500, "y": 50, "w": 200, "h": 300, "ratio": "2:3"}]
    with TestClient(make_app(panel=panel)) as c:
        pid = c.post("/api/photos", files=[("files", ("two.jpg", data, "image/jpeg"))]).json()["photos"][0]["id"]
        body = c.post(f"/api/photos/{pid}/scores", json={"boxes": edited}).json()
    assert body["judge"] == {"panel": ["m512"]}
    full = Image.open(io.BytesIO(data)).convert("RGB")
    refs = [ImageRef(np.asarray(full.crop((b["x"], b["y"], b["x"] + b["w"], b["y"] + b["h"]))), label=f"c{i}")
            for i, b in enumerate(edited)]
    store = CallStore(tmp_path / "calls.sqlite")
    _, plan = judge_images(refs, panel, store)
    want = score_summary(scores_table(plan, store)).to_dict("records")
    store.close()
    assert len(body["crops"]) == 2
    for got, row in zip(body["crops"], want):
        assert got["family"] == row["family"] == "m512" and [f["family"] for f in got["families"]] == ["m512"]
        assert got["holistic"] == row["holistic"]
        assert got["dimensions"] == {d: row[d] for d in DIMENSION_IDS}
        assert got["proxies"] == ["distinctiveness", "emotional_impact"]
        assert "mean" not in got  # one family: no panel mean
