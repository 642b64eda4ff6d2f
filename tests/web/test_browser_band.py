"""Issue 30, points 5, 7 and 12 as a photographer walks them, in headless Chromium at 1440x900 and at
390x844 with touch: the seamless band dragged, resized and nudged (the slides follow; JPEG slides cut
losslessly), snapping to the thirds and the subjects, drag to reorder the strip, thumbnails from the
full-resolution photo at the screen's pixel ratio, and the phone's photo and strip on one screen."""

from __future__ import annotations

import io
import json
import zipfile
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from PIL import Image

from .conftest import LiveServer, photo_bytes
from .test_browser_editor import _drag, _screen
from .test_browser_paths import SIZES, _close_contexts, _open_photo, _page, _ready, _settle  # noqa: F401 - the fixture closes _page's contexts


def _pano_jpeg(path):
    """A 3000x1000 JPEG panorama (4:2:0, a 16 px block grid): texture and three bright subjects."""
    rng = np.random.default_rng(7)
    img = (rng.random((1000, 3000, 3)) * 60 + 50).astype(np.uint8)
    for x0 in (350, 1400, 2450):
        img[300:700, x0:x0 + 200] = (235, 205, 80)
    Image.fromarray(img).save(path, quality=90, subsampling=2)
    return path


def _luma(data):
    im = Image.open(io.BytesIO(data) if isinstance(data, bytes) else data)
    im.draft("L", im.size)  # the decoder's Y channel, no colour conversion
    return np.asarray(im.convert("L")).astype(int)


def _touch(page):
    """One finger: touch(points) moves it along points (source px of the overlay) and lifts it."""
    cdp = page.context.new_cdp_session(page)

    def go(points):
        for k, (x, y) in enumerate(points):
            kind = "touchStart" if k == 0 else "touchMove"
            cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": [{"x": x, "y": y, "id": 1}]})
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    return go


def _path(a, b, steps=6):
    return [(a[0] + (b[0] - a[0]) * k / steps, a[1] + (b[1] - a[1]) * k / steps) for k in range(steps + 1)]


def _band_settled(page):
    page.wait_for_function("cur() && cur().seam && !cur().loading && editor.boxes.length === 1 && !editor.drag")
    return page.evaluate("cur().seam"), page.evaluate("editor.boxes[0]")


def _slides_of(seam):
    w = seam["slide_size"][0]
    return [(b["x"], b["y"], b["w"], b["h"]) for b in seam["boxes"]], w


@pytest.mark.parametrize("size", list(SIZES))
def test_the_panorama_band_is_dragged_resized_and_nudged_and_its_jpeg_slides_are_cut_losslessly(
        browser, make_app, tmp_path, shots, size):
    src = _pano_jpeg(tmp_path / "pano.jpg")
    with LiveServer(make_app()) as srv:
        page, errors = _page(browser, size)
        _ready(page, srv)
        page.select_option("#ratios", "4:5")
        page.check("input[name=mode][value=seamless]")
        page.select_option("#slides", "3")
        page.set_input_files("#files", str(src))
        seam, band = _band_settled(page)
        assert seam["slides"] == 3 and seam["ratio"] == "4:5" and seam["block"] == [16, 16]
        assert band["ratio"] == "12:5" and band["slides"] == 3  # one box of three 4:5 slides
        assert page.locator("#overlay line.seam").count() == 2  # the two seams drawn on the band
        at = _screen(page)
        # resize: the bottom-right handle dragged up and left; the ratio stays, the top-left corner stays
        o = page.locator("#overlay").bounding_box()
        unit = 3000 / o["width"]  # source px per CSS px
        corner = at(band["x"] + band["w"] - 2 * unit, band["y"] + band["h"] - 2 * unit)  # on the handle, in the photo
        end = (corner[0] - 0.3 * band["w"] / unit, corner[1] - 0.3 * band["h"] / unit)
        if size == "phone":
            _touch(page)(_path(corner, end))
        else:
            _drag(page, corner, end)
        seam, band2 = _band_settled(page)
        assert abs(band2["w"] / band2["h"] - 2.4) < 1e-6 and band2["w"] < 0.8 * band["w"]
        assert abs(band2["x"] - band["x"]) <= 16 and abs(band2["y"] - band["y"]) <= 16
        slides, w = _slides_of(seam)
        assert slides == [(slides[0][0] + i * w, slides[0][1], w, round(w * 5 / 4)) for i in range(3)]
        assert slides[0][0] % 16 == 0 and slides[0][1] % 16 == 0 and w % 16 == 0  # on the JPEG block grid
        # move: the band dragged right and down by (120, 60) CSS px (the road at the bottom is kept)
        mid = at(band2["x"] + band2["w"] / 2, band2["y"] + band2["h"] / 2)
        to = (mid[0] + 120, mid[1] + 60)
        if size == "phone":
            _touch(page)(_path(mid, to))
        else:
            page.keyboard.down("Alt")  # no snapping: the band goes exactly where it is dragged
            _drag(page, mid, to)
            page.keyboard.up("Alt")
        seam, band3 = _band_settled(page)
        slack = 16 + (6 * unit if size == "phone" else 0)  # the block grid (and a snap, with a finger)
        assert abs(band3["x"] - (band2["x"] + 120 * unit)) <= slack
        assert abs(band3["y"] - min(band2["y"] + 60 * unit, 1000 - band2["h"])) <= slack
        assert band3["w"] == band2["w"]
        page.screenshot(path=str(shots / f"band_moved_{size}.png"))
        # arrows: a press moves it a screen pixel or, when that is less, one block of the JPEG grid (so that the
        # slides stay on it); Shift ten times as far
        before = band3["x"]
        page.locator("#overlay").focus()
        page.keyboard.press("Shift+ArrowRight")
        page.wait_for_function(f"cur().seam.band.x !== {before} && !cur().loading")
        seam, band4 = _band_settled(page)
        assert band4["x"] - before == 10 * max(round(unit), 16) and band4["x"] % 16 == 0
        page.keyboard.press("ArrowLeft")  # one press: one block of the grid (a screen pixel would be snapped back)
        page.wait_for_function(f"cur().seam.band.x === {band4['x'] - 16} && !cur().loading")
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"cur().seam.band.x === {band4['x']} && !cur().loading")
        seam, band4 = _band_settled(page)
        # the strip follows: one card per slide, each drawn from the server's render of that slide
        slides, w = _slides_of(seam)
        page.wait_for_function("[...document.querySelectorAll('#strip canvas')].every(c => c.dataset.full)")
        cut = page.eval_on_selector_all("#strip canvas", "cs => cs.map(c => c.dataset.src)")
        assert [tuple(int(parse_qs(urlparse(u).query)[k][0]) for k in "xywh") for u in cut] == slides
        page.screenshot(path=str(shots / f"band_nudged_{size}.png"))
        # undo and redo step through the band's placements (the slides cut again each time)
        for x in (band4["x"] - 16, band4["x"], band3["x"]):  # the last three placements, one undo each
            page.keyboard.press("Control+z")
            page.wait_for_function(f"cur().seam.band.x === {x} && !cur().loading")
        assert _band_settled(page)[1] == band3
        assert not page.is_disabled("#redo")
        page.keyboard.press("Control+Shift+z")
        page.wait_for_function(f"cur().seam.band.x === {band4['x']} && !cur().loading")
        seam, band5 = _band_settled(page)
        assert band5 == band4 and _slides_of(seam)[0] == slides
        with page.expect_download() as dl:
            page.click("#dlFull")
        dl.value.save_as(tmp_path / "pano.zip")
        assert "corners moved" not in page.inner_text("#status")
        assert errors == []
    z = zipfile.ZipFile(tmp_path / "pano.zip")
    rec = json.loads(z.read("pano.json"))
    assert [tuple(c["box"][k] for k in "xywh") for c in rec["crops"]] == slides
    assert [c["lossless"] for c in rec["crops"]] == [True, True, True]
    x0, y0, _, h = slides[0]
    joined = np.concatenate([_luma(z.read(f"pano_{i}.jpg")) for i in (1, 2, 3)], axis=1)
    assert np.array_equal(joined, _luma(str(src))[y0:y0 + h, x0:x0 + 3 * w])  # luma pixel for pixel


def _targets(page):
    """The snap targets as the page has them: the photo's thirds and the subjects' edges (source px)."""
    return page.evaluate("editor._snapTargets()")


@pytest.mark.parametrize("size", list(SIZES))
def test_a_dragged_crop_snaps_to_the_thirds_and_to_a_subjects_edge_and_alt_turns_it_off(
        browser, make_app, tmp_path, shots, size):
    (tmp_path / "p.jpg").write_bytes(photo_bytes(900, 400))
    with LiveServer(make_app()) as srv:
        page, errors = _open_photo(browser, srv, size, tmp_path / "p.jpg")
        t = _targets(page)
        subjects = page.evaluate("snapSubjects(cur())")
        assert subjects and {300, 600} <= {round(v) for v in t["xs"]}  # the thirds of 900 px, and subjects
        page.click("#add")  # a crop in the middle, selected
        i = page.evaluate("editor.selected")
        b = page.evaluate(f"editor.boxes[{i}]")
        at = _screen(page)
        unit = page.evaluate("editor.unit()")
        # drag it so that its left edge comes 3 CSS px right of the first third
        dx = (300 + 3 * unit - b["x"]) / unit
        start = at(b["x"] + b["w"] / 2, b["y"] + b["h"] / 2)
        end = (start[0] + dx, start[1])
        raw = b["x"] + dx * unit
        near = min((v for v in t["xs"] for off in (0, b["w"]) if abs(v - (raw + off)) <= 6 * unit),
                   key=lambda v: min(abs(v - raw), abs(v - raw - b["w"])))
        want = near if abs(near - raw) <= abs(near - raw - b["w"]) else near - b["w"]
        if size == "phone":
            _touch(page)(_path(start, end))
        else:
            page.mouse.move(*start)
            page.mouse.down()
            page.mouse.move(*end, steps=6)
            assert page.locator("#overlay line.snap-guide").count() >= 1  # the line it snapped to, while dragging
            page.screenshot(path=str(shots / f"snap_guide_{size}.png"))
            page.mouse.up()
        got = page.evaluate(f"editor.boxes[{i}]")
        assert abs(got["x"] - want) < 1e-6 and abs(want - raw) <= 6 * unit  # on the target, not where dropped
        if size == "desktop":  # with Alt held the crop goes exactly where it is dropped
            page.keyboard.press("Control+z")
            b = page.evaluate(f"editor.boxes[{i}]")
            page.keyboard.down("Alt")
            _drag(page, start, end)
            page.keyboard.up("Alt")
            got = page.evaluate(f"editor.boxes[{i}]")
            assert abs(got["x"] - raw) <= unit and abs(got["x"] - want) > 2 * unit
        # resize by the right edge's handle to 4 CSS px short of a subject's right edge: it lands on that edge
        b = page.evaluate(f"editor.boxes[{i}]")
        lone = lambda v: all(u == v or abs(u - v) > 12 * unit for u in t["xs"])  # noqa: E731 (no other target near)
        edges = sorted(s["x"] + s["w"] for s in subjects if b["x"] + b["w"] + 20 * unit < s["x"] + s["w"]
                       < 900 - 20 * unit and lone(s["x"] + s["w"]))
        assert edges, (subjects, b)
        target = edges[0]
        handle = at(b["x"] + b["w"], b["y"] + b["h"] / 2)
        end = (handle[0] + (target - 4 * unit - b["x"] - b["w"]) / unit, handle[1])
        if size == "phone":
            _touch(page)(_path(handle, end))
        else:
            _drag(page, handle, end)
        got = page.evaluate(f"editor.boxes[{i}]")
        assert abs(got["x"] + got["w"] - target) < 1e-6 and abs(got["x"] - b["x"]) < 1e-6  # on the subject's edge
        assert abs(got["w"] / got["h"] - b["w"] / b["h"]) < 1e-9  # the ratio kept
        page.screenshot(path=str(shots / f"snap_{size}.png"))
        assert errors == []


@pytest.mark.parametrize("size", list(SIZES))
def test_a_card_dragged_to_the_end_of_the_strip_moves_its_slide_there(browser, make_app, tmp_path, shots, size):
    from multicrop.datasets.examples import example_photo

    src = example_photo(tmp_path / "wide.jpg")
    with LiveServer(make_app()) as srv:
        page, errors = _open_photo(browser, srv, size, src, k="3")
        boxes = page.evaluate("cur().boxes")
        assert len(boxes) == 3
        first = page.locator("#strip .card").nth(0)
        if size == "phone":  # a finger on the card's grip ⠿; the strip shows every card small while it moves
            page.click("#controls > summary")  # settings folded again: the strip under the photo
            grip = first.locator(".grip").bounding_box()
            assert grip["y"] + grip["height"] <= 844
            start = (grip["x"] + grip["width"] / 2, grip["y"] + grip["height"] / 2)
            cdp = page.context.new_cdp_session(page)
            touch = lambda kind, pts: cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": pts})  # noqa: E731
            touch("touchStart", [{"x": start[0], "y": start[1], "id": 1}])
            touch("touchMove", [{"x": start[0] + 12, "y": start[1], "id": 1}])
            assert page.evaluate("document.getElementById('strip').classList.contains('reordering')")
            page.screenshot(path=str(shots / f"reorder_dragging_{size}.png"))
            last = page.locator("#strip .card").nth(2).bounding_box()
            end = (last["x"] + last["width"] - 4, last["y"] + last["height"] - 6)  # its lower right: after it
            touch("touchMove", [{"x": end[0], "y": end[1], "id": 1}])
            touch("touchEnd", [])
        else:
            card = first.locator("canvas").bounding_box()
            last = page.locator("#strip .card").nth(2).bounding_box()
            page.mouse.move(card["x"] + 20, card["y"] + 20)
            page.mouse.down()
            page.mouse.move(last["x"] + last["width"] - 10, last["y"] + last["height"] - 8, steps=8)
            assert page.locator("#strip .card.drop-after").count() == 1  # where it will go, marked
            page.screenshot(path=str(shots / f"reorder_dragging_{size}.png"))
            page.mouse.up()
        page.wait_for_function("!document.getElementById('strip').classList.contains('reordering')")
        assert page.evaluate("cur().boxes") == [boxes[1], boxes[2], boxes[0]]
        assert page.evaluate("editor.selected") == 2  # the moved crop stays selected, at its new place
        labels = page.eval_on_selector_all("#strip .card", "cs => cs.map(c => c.getAttribute('aria-label'))")
        assert len(labels) == 3 and labels[2].startswith("Crop 3 of 3")
        page.screenshot(path=str(shots / f"reorder_done_{size}.png"))
        page.keyboard.press("Control+z")  # one undo step
        assert page.evaluate("cur().boxes") == boxes
        if size == "desktop":  # the last card dropped on the upper half of the first goes before it
            card = page.locator("#strip .card").nth(2).locator("canvas").bounding_box()
            top = page.locator("#strip .card").nth(0).bounding_box()
            page.mouse.move(card["x"] + 20, card["y"] + 20)
            page.mouse.down()
            page.mouse.move(top["x"] + top["width"] / 2, top["y"] + 8, steps=8)
            assert page.locator("#strip .card.drop-before").count() == 1
            page.screenshot(path=str(shots / f"reorder_before_{size}.png"))
            page.mouse.up()
            assert page.evaluate("cur().boxes") == [boxes[2], boxes[0], boxes[1]]
            page.keyboard.press("Control+z")
            assert page.evaluate("cur().boxes") == boxes
        # a card dragged onto itself changes nothing; the arrows still reorder
        page.locator("#strip .card").nth(1).locator("[data-role=earlier]").click()
        assert page.evaluate("cur().boxes") == [boxes[1], boxes[0], boxes[2]]
        assert errors == []


@pytest.mark.parametrize("size", list(SIZES))
def test_strip_thumbnails_come_from_the_full_photo_at_the_screens_pixels_and_the_phone_shows_photo_and_strip(
        browser, make_app, tmp_path, shots, size):
    from multicrop.datasets.examples import example_photo

    wide = example_photo(tmp_path / "wide.jpg")  # 3600x1400
    ex = Image.open(wide)
    ex.crop((0, 0, 1400, 1400)).resize((1500, 2000)).save(tmp_path / "tall.jpg", quality=92)  # a portrait
    with LiveServer(make_app()) as srv:
        page, errors = _page(browser, size)
        _ready(page, srv)
        if size == "phone":
            page.click("#controls > summary")  # folded again, as a phone starts
        dpr = page.evaluate("window.devicePixelRatio")
        for name in ("wide.jpg", "tall.jpg"):
            page.set_input_files("#files", str(tmp_path / name))
            page.wait_for_function(f"cur() && cur().name === {name!r}")
            _settle(page)
            page.wait_for_function("[...document.querySelectorAll('#strip canvas')].every(c => c.dataset.full)")
            cards = page.eval_on_selector_all("#strip canvas", """cs => cs.map(c => {
                const r = c.getBoundingClientRect();
                return [c.width, c.height, parseFloat(c.style.width), parseFloat(c.style.height), c.dataset.src,
                        +c.dataset.full, r.top, r.bottom, r.height]; })""")
            boxes = page.evaluate("cur().boxes")
            assert len(cards) == len(boxes) >= 1
            for (cw, ch, css_w, css_h, url, full, *_), b in zip(cards, boxes):
                assert cw == round(css_w * dpr) and ch == round(css_h * dpr)  # the screen's own pixels
                q = {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}
                assert [int(q[k]) for k in "xywh"] == [round(b[k]) for k in "xywh"] and int(q["width"]) == cw
                assert full == min(cw, round(b["w"]))  # drawn from the server's full-resolution render
            if size == "phone":  # photo and carousel on one screen: the strip right under the photo
                photo = page.locator("#stage").bounding_box()
                strip = page.locator("#strip").bounding_box()
                assert photo["y"] >= 0 and photo["y"] + photo["height"] <= strip["y"] < 844
                top, bottom = cards[0][6], cards[0][7]
                assert bottom <= 844, (name, top, bottom)  # the first card whole, without scrolling
                assert page.evaluate("window.scrollY") == 0
            page.screenshot(path=str(shots / f"thumbs_{name[:-4]}_{size}.png"))
        assert errors == []
