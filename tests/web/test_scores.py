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
