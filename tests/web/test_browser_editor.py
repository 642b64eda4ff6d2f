"""The carousel page as an editor, in headless Chromium at a desktop (1440x900) and a phone (390x844) size.

Few, targeted tests (a browser is slow on a shared machine), each asserting what a person relies on:
overlapping crops editable, undo, the keyboard alone, reload, sessions apart, the phone, the seamless
panorama, and errors beside their controls.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import zipfile

import numpy as np
from PIL import Image
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from multicrop.datasets.examples import example_photo

from .conftest import LiveServer, intercept_file_choosers

DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
NAMED_ROLES = ("button", "combobox", "checkbox", "spinbutton", "radio", "textbox", "listitem")


def _rects(page):
    """The crops' rectangles [x, y, w, h] in swipe order (source px)."""
    return page.eval_on_selector_all(
        "#overlay rect.crop-box", "els => els.sort((a, b) => a.dataset.index - b.dataset.index)"
        ".map(e => ['x','y','width','height'].map(a => +e.getAttribute(a)))")


def _selected(page):
    return page.eval_on_selector("#overlay g.box.selected rect.crop-box", "e => +e.dataset.index")


def _screen(page):
    """A function from a source-px point of the overlay to its screen point now (the page may scroll)."""
    def at(x, y):
        o = page.locator("#overlay").bounding_box()
        scale = o["width"] / page.eval_on_selector("#overlay", "s => s.viewBox.baseVal.width")
        return (o["x"] + x * scale, o["y"] + y * scale)
    return at


def _drag(page, start, end):
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(*end, steps=6)
    page.mouse.up()


def _unnamed_controls(page):
    """Controls the accessibility tree shows without a name (Playwright's ARIA snapshot)."""
    snap = page.locator("body").aria_snapshot()
    bad = []
    for line in snap.splitlines():
        m = re.match(r"\s*- (\w+)(.*)", line)
        if m and m[1] in NAMED_ROLES and not m[2].strip().startswith('"') and m[1] != "listitem":
            bad.append(line.strip())
    return bad, snap


def test_overlapping_crops_undo_keyboard_only_and_reload(browser, make_app, tmp_path, shots):
    src = example_photo(tmp_path / "example.jpg")  # 3600x1400, three subjects
    with LiveServer(make_app()) as srv:
        ctx = browser.new_context(viewport=DESKTOP, accept_downloads=True)
        page = ctx.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        intercept_file_choosers(page)
        page.goto(srv.url)
        page.wait_for_function("document.getElementById('ratios').options.length > 0")
        page.select_option("#ratios", "1:1")
        page.select_option("#k", "2")

        # keyboard only: Tab reaches the upload control, Enter opens the file picker
        page.locator("body").focus()
        for _ in range(12):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.id") == "upload":
                break
        assert page.evaluate("document.activeElement.id") == "upload"
        ring = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert ring != "none"  # a visible focus ring
        with page.expect_file_chooser() as fc:
            page.keyboard.press("Enter")
        fc.value.set_files(str(src))
        page.wait_for_function("document.querySelectorAll('#strip .card').length === 2")
        bad, snap = _unnamed_controls(page)
        assert bad == [], snap

        # a third crop, dragged onto crop 1: crop 1 now lies under a later crop
        page.click("#add")
        assert _selected(page) == 2
        one, _, three = _rects(page)
        at = _screen(page)
        _drag(page, at(three[0] + three[2] / 2, three[1] + three[3] / 2),
              at(one[0] + 40 + three[2] / 2, one[1] + 40 + three[3] / 2))
        one, _, three = _rects(page)
        overlap = (max(one[0], three[0]) + 10, max(one[1], three[1]) + 10)
        assert three[0] < one[0] + one[2] and three[1] < one[1] + one[3]  # they overlap
        # crop 1's card brings it to the front; a drag inside the overlap then moves crop 1, not crop 3
        page.locator("#strip .card").nth(0).click()
        assert _selected(page) == 0
        assert page.eval_on_selector_all("#overlay g.box", "gs => +gs[gs.length - 1].querySelector('rect').dataset.index") == 0
        page.screenshot(path=str(shots / "editor_1440_overlap.png"))
        before = _rects(page)
        _drag(page, at(*overlap), at(overlap[0] + 150, overlap[1]))
        after = _rects(page)
        assert after[2] == before[2] and after[1] == before[1]  # crop 3 and crop 2 did not move
        assert after[0][0] > before[0][0] + 50 and after[0][2:] == before[0][2:]
        page.keyboard.press("Control+z")
        assert _rects(page) == before
        page.keyboard.press("Control+Shift+z")
        assert _rects(page) == after
        # crop 3 is picked by its number tag, although crop 1 is on top of it
        page.locator("#overlay rect.box-tag-bg[data-index='2']").click()
        assert _selected(page) == 2

        # keys: Shift+arrow moves by ten screen pixels, + grows with the ratio kept, Delete removes
        page.locator("#strip .card").nth(1).focus()
        assert _selected(page) == 1
        unit = page.evaluate("editor.unit()")
        b0 = _rects(page)[1]
        page.keyboard.press("Shift+ArrowDown")
        b1 = _rects(page)[1]
        assert abs(b1[1] - min(b0[1] + 10 * max(1, round(unit)), 1400 - b0[3])) < 1e-6 and b1[0] == b0[0]
        page.keyboard.press("-")
        b2 = _rects(page)[1]
        assert b2[2] < b1[2] and abs(b2[2] - b2[3]) < 1e-6
        page.keyboard.press("Control+z")
        assert _rects(page)[1] == b1
        page.keyboard.press("Delete")
        assert len(_rects(page)) == 2
        page.keyboard.press("Control+z")
        assert len(_rects(page)) == 3
        page.screenshot(path=str(shots / "editor_1440.png"))
        # the photo and the whole strip on one screen
        assert page.locator("#strip .card").nth(2).bounding_box()["y"] + 40 < DESKTOP["height"]
        assert page.locator("#stage").bounding_box()["width"] > 0.5 * DESKTOP["width"]
        edited = _rects(page)

        # reload: the same photo, settings and edits
        page.reload()
        page.wait_for_function("document.querySelectorAll('#overlay rect.crop-box').length === 3")
        assert _rects(page) == edited
        assert page.input_value("#k") == "2" and page.input_value("#ratios") == "1:1"

        # download by keyboard: (Shift+)Tab to the button above the strip, Enter
        page.wait_for_function("!document.getElementById('dlFull').disabled")
        page.locator("#strip .card").nth(0).focus()
        for _ in range(20):
            page.keyboard.press("Shift+Tab")
            if page.evaluate("document.activeElement.id") == "dlFull":
                break
        assert page.evaluate("document.activeElement.id") == "dlFull"
        with page.expect_download() as dl:
            page.keyboard.press("Enter")
        path = tmp_path / "out.zip"
        dl.value.save_as(path)
        assert errors == []
    record = json.loads(zipfile.ZipFile(path).read("example.json"))
    assert len(record["crops"]) == 3
    for got, want in zip(record["crops"], edited):
        # JPEG crops are cut losslessly: the corner moves onto the 16 px block grid, the size stays
        assert abs(got["box"]["w"] - round(want[2])) <= 1 and abs(got["box"]["x"] - want[0]) < 17


def test_sessions_apart_errors_beside_their_controls_and_the_api_refuses_outside_boxes(browser, make_app, tmp_path):
    src = example_photo(tmp_path / "example.jpg")
    with LiveServer(make_app()) as srv:
        a = browser.new_context(viewport=DESKTOP)
        b = browser.new_context(viewport=DESKTOP)
        pa, pb = a.new_page(), b.new_page()
        pa.goto(srv.url)
        pa.set_input_files("#files", str(src))
        pa.wait_for_selector("#strip .card")
        pid = pa.evaluate("state.current")
        pb.goto(srv.url)
        pb.wait_for_function("document.getElementById('ratios').options.length > 0")
        assert pb.locator("#tabs .tab").count() == 0 and pb.evaluate("state.photos.length") == 0
        for button in ("#dlFull", "#dlWidth", "#add", "#undo"):  # nothing to act on: off, not silently idle
            assert pb.is_disabled(button), button
        assert pb.request.get(f"{srv.url}/api/photos/{pid}/image").status == 404
        assert pa.request.get(f"{srv.url}/api/photos/{pid}/image").status == 200

        # the API refuses boxes outside the photo, with the message
        for q in ("x=-5&y=0&w=100&h=100", "x=0&y=0&w=1e308&h=1e308", "x=0&y=0&w=-10&h=-10"):
            r = pa.request.get(f"{srv.url}/api/photos/{pid}/render?{q}")
            assert r.status == 422 and "3600x1400 photo" in r.json()["detail"] or "no area" in r.json()["detail"]
        r = pa.request.post(f"{srv.url}/api/photos/{pid}/download",
                            data={"boxes": [{"x": -5, "y": 0, "w": 100, "h": 100, "ratio": "1:1"}]})
        assert r.status == 422 and r.json()["detail"] == "boxes[1]: (-5, 0, 100x100) must lie in the 3600x1400 photo"

        # a negative platform width: said beside the field, the button that would use it off, the cards sane
        pa.fill("#width", "-50")
        assert "16 to 20000" in pa.inner_text("#err-width")
        assert pa.is_disabled("#dlWidth")
        assert "-" not in "".join(pa.locator("#strip .card .what").all_inner_texts()).replace("·", "")
        pa.fill("#width", "1080")
        assert pa.inner_text("#err-width") == "" and not pa.is_disabled("#dlWidth")
        # k = auto with a strategy that has no auto: said beside k; neither setting resets the other
        pa.select_option("#strategy", "partition")
        pa.select_option("#k", "auto")
        assert "auto" in pa.inner_text("#err-k") and pa.input_value("#strategy") == "partition"
        pa.select_option("#strategy", "direct")
        pa.wait_for_function("document.getElementById('err-k').textContent === ''")
        assert pa.input_value("#k") == "auto"
        # a second photo of another shape: after switching tabs the overlay is drawn at the new scale
        _panorama(tmp_path / "pano.png")
        pa.set_input_files("#files", str(tmp_path / "pano.png"))
        pa.wait_for_function("state.photos.length === 2 && state.current === state.photos[1].id"
                             " && document.querySelectorAll('#strip .card').length > 0")
        for tab in (0, 1, 0):
            pa.locator("#tabs .tab-main").nth(tab).click()
            pa.wait_for_function(f"state.current === state.photos[{tab}].id && "
                                 "document.getElementById('photo').complete && document.querySelectorAll('#overlay .box-tag').length")
            # the resize observer redraws on a later frame: wait for it (a slow machine waits longer), then assert
            with contextlib.suppress(PlaywrightTimeout):
                pa.wait_for_function(f"Math.abs({TAG_PX} - 16) < 0.5", timeout=10_000)
            px = pa.evaluate(TAG_PX)
            assert abs(px - 16) < 0.5, (tab, px)  # the tags' text is 16 screen px on both photos
        # removing the photo deletes it on the server
        pa.locator("#tabs .tab-x").first.click()
        pa.wait_for_function("state.photos.length === 1")
        assert pa.request.get(f"{srv.url}/api/photos/{pid}").status == 404


#: The on-screen size, in CSS px, of the first crop tag's text in the photo overlay.
TAG_PX = """(() => { const t = document.querySelector('#overlay .box-tag');
    const s = document.getElementById('overlay');
    return +t.getAttribute('font-size') * s.getBoundingClientRect().width / s.viewBox.baseVal.width; })()"""


def _panorama(path):
    rng = np.random.default_rng(5)
    img = (rng.random((600, 3000, 3)) * 80 + 40).astype(np.uint8)
    for x0 in (300, 1400, 2500):
        img[150:450, x0:x0 + 220] = (235, 205, 80)
    Image.fromarray(img).save(path)
    return img


def test_phone_one_slide_at_a_time_nested_crop_and_seamless_panorama(browser, make_app, tmp_path, shots, label_dir):
    img = _panorama(tmp_path / "pano.png")
    with LiveServer(make_app()) as srv:
        ctx = browser.new_context(viewport=PHONE, device_scale_factor=2, has_touch=True, accept_downloads=True)
        page = ctx.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(srv.url)
        page.wait_for_function("document.getElementById('ratios').options.length > 0")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        page.click("#controls > summary")
        page.select_option("#ratios", "4:5")
        page.select_option("#k", "1")
        page.set_input_files("#files", str(tmp_path / "pano.png"))
        page.wait_for_selector("#strip .card")
        page.click("#controls > summary")  # fold the settings again: the photo comes first
        page.click("#add")  # a small crop in the middle of the photo
        big, small = _rects(page)
        at = _screen(page)
        # move the suggested crop over the small one, so that the small one lies inside it
        page.locator("#strip .card").first.click()
        cx, cy = small[0] + small[2] / 2, small[1] + small[3] / 2
        _drag(page, at(big[0] + big[2] / 2, big[1] + 8), at(cx, big[1] + 8))
        big = _rects(page)[0]
        assert big[0] < small[0] and small[0] + small[2] < big[0] + big[2]  # inside (its height is the photo's)
        assert _selected(page) == 0
        page.mouse.click(*at(cx, cy))  # a tap on the inner crop takes it although the outer one is selected
        assert _selected(page) == 1
        page.mouse.click(*at(big[0] + 5, big[1] + big[3] - 5))
        assert _selected(page) == 0
        # one slide at a time; 2x thumbnails
        strip = page.locator("#strip").bounding_box()
        card = page.locator("#strip .card").first.bounding_box()
        assert abs(card["width"] - strip["width"]) <= 6  # the strip's own 2 px padding on each side
        canvas = page.eval_on_selector("#strip .card canvas", "c => [c.width, c.getBoundingClientRect().width]")
        assert canvas[0] >= 1.9 * canvas[1]
        assert page.locator("#stage").bounding_box()["y"] < PHONE["height"] * 0.4
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        page.screenshot(path=str(shots / "editor_390.png"), full_page=True)

        # the seamless panorama: slides of one ratio, edge to edge, the zip's slides give the band back
        page.check("input[name=mode][value=seamless]")
        page.wait_for_function("state.photos[0].seam && document.querySelectorAll('#strip .card').length >= 2")
        lay = page.evaluate("state.photos[0].seam")
        page.screenshot(path=str(shots / "seamless_390.png"), full_page=True)
        with page.expect_download() as dl:
            page.click("#dlFull")
        path = tmp_path / "pano.zip"
        dl.value.save_as(path)
        assert errors == []
    z = zipfile.ZipFile(path)
    n = lay["slides"]
    assert sorted(z.namelist()) == ["pano.json"] + [f"pano_{i}.png" for i in range(1, n + 1)]
    slides = [np.asarray(Image.open(io.BytesIO(z.read(f"pano_{i}.png")))) for i in range(1, n + 1)]
    assert len({s.shape for s in slides}) == 1
    band = lay["band"]
    whole = img[band["y"]:band["y"] + band["h"], band["x"]:band["x"] + band["w"]]
    assert np.array_equal(np.concatenate(slides, axis=1), whole)
    for i in range(n - 1):  # at each seam the next slide starts with the column after this one's last
        w = slides[i].shape[1]
        assert np.array_equal(slides[i][:, -1], whole[:, (i + 1) * w - 1])
        assert np.array_equal(slides[i + 1][:, 0], whole[:, (i + 1) * w])


def test_label_mode_fits_a_phone(browser, make_app, label_dir, shots):
    with LiveServer(make_app(label_dir=label_dir)) as srv:
        page = browser.new_page(viewport=PHONE)
        page.goto(srv.url)
        page.wait_for_selector(".item.active")
        page.wait_for_function("document.getElementById('photo').naturalWidth > 0")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        stage = page.locator("#overlay").bounding_box()
        assert stage["x"] >= 0 and stage["x"] + stage["width"] <= PHONE["width"] + 1
        page.mouse.move(stage["x"] + 10, stage["y"] + 10)
        page.mouse.down()
        page.mouse.move(stage["x"] + 90, stage["y"] + 60, steps=4)
        page.mouse.up()
        page.wait_for_function("document.getElementById('saved').textContent.startsWith('saved')")
        before = _rects(page)[0]
        page.keyboard.press("ArrowRight")  # a box is selected: the arrow moves it, it does not change photo
        assert _rects(page)[0][0] > before[0] and page.evaluate("location.hash") == "#photo0"
        page.keyboard.press("Control+z")
        assert _rects(page)[0] == before
        page.screenshot(path=str(shots / "label_390.png"), full_page=True)
