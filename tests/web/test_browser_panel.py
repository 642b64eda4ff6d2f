"""In headless Chromium: every family of a served panel on the crop cards, and a HEIC upload."""

from __future__ import annotations

import importlib.util
import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from multicrop.judges.rubric import DIMENSION_IDS

from .conftest import LiveServer, photo_bytes

VLM = "qwen2.5-vl-72b"  # a long family name: cut short on the card, in full in its tooltip
ABBR = {"technical_quality": "tech", "composition": "comp", "colour_and_tone": "col",
        "distinctiveness": "dist", "emotional_impact": "emo"}


@pytest.fixture
def fake_openai():
    """The loopback OpenAI-compatible server of tests/judges (imported by path)."""
    path = Path(__file__).resolve().parents[1] / "judges" / "fake_openai_server.py"
    spec = importlib.util.spec_from_file_location("fake_openai_server_web", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with mod.FakeOpenAIServer() as srv:
        yield srv


def _card_tables(page):
    """Per card, its score table as {row name: [cell texts]}, the header row under "judge"."""
    return page.eval_on_selector_all(".card", """cards => cards.map(c => Object.fromEntries(
        [...c.querySelectorAll('table.scores tr')].map(tr => [tr.children[0].textContent,
                                                              [...tr.children].slice(1).map(x => x.textContent)])))""")


def _shown(text: str) -> tuple[float, bool]:
    """A cell's number and whether it is marked as a proxy."""
    m = re.fullmatch(r"([0-9]+\.[0-9])(\*?)", text)
    assert m, text
    return float(m.group(1)), m.group(2) == "*"


def test_every_panel_family_and_their_mean_on_each_card(browser, make_app, fake_openai, tmp_path, shots):
    from multicrop.judges.panel import parse_panel

    panel = parse_panel({"holistic_repetitions": 1, "dimension_repetitions": 1, "families": [
        {"name": "measured", "backend": "measured", "model": "measured-v1"},
        {"name": "qwen2.5-vl-72b", "backend": "openai-compatible", "model": "ok",
         "options": {"base_url": fake_openai.base_url, "api_key_env": "", "max_side": 64}},
        # replies without a completion: this family gives no score, its row shows dashes, the mean leaves it out
        {"name": "silent", "backend": "openai-compatible", "model": "nochoices",
         "options": {"base_url": fake_openai.base_url, "api_key_env": ""}}]})
    src = tmp_path / "two.jpg"
    src.write_bytes(photo_bytes(900, 400))
    with LiveServer(make_app(panel=panel)) as srv:
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(srv.url)
        page.select_option("#k", "3")
        page.set_input_files("#files", [str(src)])
        page.wait_for_selector(".card >> nth=2")
        with page.expect_response(lambda r: r.url.endswith("/scores")) as resp:
            page.check("#showScores")
        body = resp.value.json()
        page.wait_for_function("[...document.querySelectorAll('.card')].every(c => c.querySelectorAll('table.scores tr').length === 5)")
        page.screenshot(path=str(shots / "panel_1_scores.png"), full_page=True)
        page.locator("#strip").screenshot(path=str(shots / "panel_2_cards.png"))
        tables = _card_tables(page)
        # the table fits its card: no cell is cut off or spills over the card's edge
        overflow = page.eval_on_selector_all(".card", "cs => cs.map(c => c.querySelector('table').scrollWidth - c.clientWidth)")
        assert all(o <= 0 for o in overflow), overflow
        assert errors == []

    assert body["judge"] == {"panel": ["measured", VLM, "silent"]} and fake_openai.answered > 0
    assert len(body["crops"]) == len(tables) == 3
    for crop, table in zip(body["crops"], tables):
        fams = {f["family"]: f for f in crop["families"]}
        assert list(fams) == ["measured", VLM, "silent"]  # the panel's order
        assert list(table) == ["judge", "measured", VLM, "silent", "mean"]
        assert fams["silent"]["holistic"] is None and set(fams["silent"]["dimensions"].values()) == {None}
        assert table["silent"] == ["–"] * 6
        assert table["judge"] == ["hol"] + [ABBR[d] for d in DIMENSION_IDS]
        mean = crop["mean"]
        assert mean["families"] == 2
        for name in ("measured", VLM):
            f = fams[name]
            want = [f["holistic"]] + [f["dimensions"][d] for d in DIMENSION_IDS]
            shown = [_shown(t) for t in table[name]]
            assert [v for v, _ in shown] == pytest.approx(want, abs=0.05 + 1e-9)
            proxies = [p for (_, p), d in zip(shown[1:], DIMENSION_IDS) if p]
            assert len(proxies) == len(f["proxies"]) and not shown[0][1]
            assert [d for (_, p), d in zip(shown[1:], DIMENSION_IDS) if p] == \
                   [d for d in DIMENSION_IDS if d in f["proxies"]]
        assert fams["measured"]["proxies"] == ["distinctiveness", "emotional_impact"] and fams[VLM]["proxies"] == []
        # the mean row is the plain mean of the two families, as the API reports it
        for key, got in [("holistic", mean["holistic"])] + [(d, mean["dimensions"][d]) for d in DIMENSION_IDS]:
            pair = [f["holistic"] if key == "holistic" else f["dimensions"][key] for f in (fams["measured"], fams[VLM])]
            assert got == pytest.approx(sum(pair) / 2)
        shown_mean = [_shown(t) for t in table["mean"]]
        # a mean over a proxy (the measured family's) is marked as one too
        assert [d for (_, p), d in zip(shown_mean[1:], DIMENSION_IDS) if p] == ["distinctiveness", "emotional_impact"]
        assert [v for v, _ in shown_mean] == pytest.approx([mean["holistic"]] + [mean["dimensions"][d] for d in DIMENSION_IDS],
                                           abs=0.05 + 1e-9)
        assert table["measured"] != table[VLM]  # two families, not one shown twice


def _heic(path: Path, width: int, height: int) -> Path:
    """The two-subject photo as HEIC (HEVC, written by pillow-heif), with a camera make and a GPS tag."""
    pillow_heif = pytest.importorskip("pillow_heif", reason="the heif extra (pillow-heif) is not installed")
    im = Image.open(io.BytesIO(photo_bytes(width, height, fmt="PNG"))).convert("RGB")
    ex = Image.Exif()
    ex[0x010F] = "TestCam"  # Make
    ex[0x8825] = {1: "N", 2: (48.0, 51.0, 30.0), 3: "E", 4: (2.0, 17.0, 40.0)}
    pillow_heif.from_pillow(im).save(str(path), quality=90, exif=ex.tobytes())
    assert path.read_bytes()[4:12] in (b"ftypheic", b"ftypheix", b"ftypmif1")
    from multicrop.io.formats import register_heif

    register_heif()  # the opener the server registers when a file may be HEIF (test order must not matter)
    with Image.open(path) as back:
        assert back.format == "HEIF" and back.size == (width, height) and 0x8825 in back.getexif()
    return path


def test_a_heic_upload_gets_its_crops(browser, make_app, tmp_path, shots):
    src = _heic(tmp_path / "two.heic", 900, 400)
    with LiveServer(make_app()) as srv:
        page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(srv.url)
        # The limit line is written once the page's settings request has answered.
        page.wait_for_function("document.getElementById('limit').textContent.includes('.heic')")
        page.select_option("#k", "2")
        with page.expect_response(lambda r: r.url.endswith("/crops")) as resp:
            page.set_input_files("#files", [str(src)])
        record = resp.value.json()
        page.wait_for_selector(".card >> nth=1")
        page.wait_for_function("document.getElementById('photo').naturalWidth > 0")
        page.wait_for_function("document.querySelectorAll('.card canvas').length === 2")
        page.screenshot(path=str(shots / "heic_1_crops.png"), full_page=True)
        status = page.inner_text("#status")
        boxes = page.eval_on_selector_all(
            "#overlay rect.crop-box", "els => els.map(e => ['x','y','width','height'].map(a => +e.getAttribute(a)))")
        # each crop card's thumbnail, averaged: the subject it was cut around
        colours = page.eval_on_selector_all(".card canvas", """cs => cs.map(c => {
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            const s = [0, 0, 0];
            for (let i = 0; i < d.length; i += 4) { s[0] += d[i]; s[1] += d[i + 1]; s[2] += d[i + 2]; }
            return s.map(v => v / (d.length / 4)); })""")
        with page.expect_download() as dl:
            page.click("#dlFull")
        zpath = tmp_path / "heic.zip"
        dl.value.save_as(zpath)
        assert errors == [] and page.inner_text("#err-upload") == ""
    # the zip: JPEG crops (a HEIC source gives JPEG, as in the CLI) of the boxes' sizes, without the GPS tag
    z = zipfile.ZipFile(zpath)
    assert sorted(z.namelist()) == ["two.json", "two_1.jpg", "two_2.jpg"]
    saved = json.loads(z.read("two.json"))
    for i, crop in enumerate(saved["crops"], 1):
        with z.open(f"two_{i}.jpg") as f:
            im = Image.open(f)
            assert im.format == "JPEG" and im.size == (crop["box"]["w"], crop["box"]["h"])
            assert 0x8825 not in im.getexif()
    assert [c["box"] for c in saved["crops"]] == [c["box"] for c in record["crops"]]
    assert status.startswith("two.heic: 900×400 px") and len(boxes) == 2
    assert record["size"] == [900, 400] and len(record["crops"]) == 2
    want = [[c["box"][a] for a in ("x", "y", "w", "h")] for c in record["crops"]]
    assert sorted(boxes) == sorted(want)
    for x, y, w, h in boxes:
        assert 0 <= x and 0 <= y and x + w <= 900 and y + h <= 400
    # the two subjects are yellow (left) and blue (right): one crop shows each
    mean = np.array(colours)
    assert sorted(("yellow" if r > b else "blue") for r, _, b in mean) == ["blue", "yellow"]
    assert all(abs(r - b) > 20 for r, _, b in mean)
