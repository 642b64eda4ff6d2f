"""Issue 30's paths as a photographer walks them, in headless Chromium at 1440x900 and at 390x844 with
touch: each test ends where the photographer expects, and saves screenshots to look at."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from .conftest import LiveServer, intercept_file_choosers, photo_bytes

SIZES = {"desktop": dict(viewport={"width": 1440, "height": 900}),
         "phone": dict(viewport={"width": 390, "height": 844}, device_scale_factor=2, has_touch=True, is_mobile=True)}


def _png(w, h):
    buf = io.BytesIO()
    Image.fromarray(np.full((h, w, 3), 120, np.uint8)).save(buf, "PNG")
    return buf.getvalue()


_OPEN: list = []  # contexts of the running test, closed after it (test_browser_band imports _page too)


@pytest.fixture(autouse=True)
def _close_contexts():
    """Each test's browser contexts are closed when it ends: a page left open (its polling, a file chooser
    never answered) must not reach into the next test in the same browser."""
    yield
    while _OPEN:
        try:
            _OPEN.pop().close()
        except Exception:  # noqa: BLE001 - already closed by the test, or the browser went away
            pass


def _page(browser, size):
    ctx = browser.new_context(**SIZES[size], accept_downloads=True)
    _OPEN.append(ctx)
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    intercept_file_choosers(page)
    return page, errors


def _in_view(page, selector):
    box = page.locator(selector).bounding_box()
    vp = page.viewport_size
    return (box is not None and page.is_visible(selector) and box["y"] >= 0 and box["y"] + box["height"] <= vp["height"]
            and box["x"] >= 0 and box["x"] + box["width"] <= vp["width"])


@pytest.mark.parametrize("size", list(SIZES))
def test_refused_files_are_said_at_once_beside_add_photos_and_a_good_photo_opens(browser, make_app, tmp_path, shots,
                                                                                 size):
    (tmp_path / "notes.jpg").write_text("a text file, renamed")
    (tmp_path / "big.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(2 * 1024 * 1024))  # over the 1 MB limit
    (tmp_path / "dot.png").write_bytes(_png(1, 1))
    (tmp_path / "good.jpg").write_bytes(photo_bytes(900, 400))
    with LiveServer(make_app(max_upload_mb=1)) as srv:
        page, errors = _page(browser, size)
        posted = []
        page.on("request", lambda r: posted.append(r.url) if r.method == "POST" and "/api/photos?" in r.url
                or r.url.endswith("/api/photos") and r.method == "POST" else None)
        page.goto(srv.url)
        page.wait_for_function("state.settings !== null")
        assert page.evaluate("document.getElementById('controls').open") is (size == "desktop")  # folded on a phone
        # a text file renamed .jpg and a file over the limit: the message at once, nothing sent
        page.set_input_files("#files", [str(tmp_path / "notes.jpg"), str(tmp_path / "big.jpg")])
        page.wait_for_function("document.getElementById('err-upload').textContent.includes('big.jpg')")
        err = page.inner_text("#err-upload")
        assert "notes.jpg: this file is not a photo the page can open" in err
        assert "big.jpg: larger than the 1 MB upload limit" in err
        assert posted == []  # refused in the page, before any upload
        assert _in_view(page, "#err-upload")  # where it is seen, not inside the folded Settings
        page.screenshot(path=str(shots / f"a_refused_{size}.png"))

        # a batch of three: the 1x1 photo is an error (named), the text file never leaves, the good photo opens
        page.set_input_files("#files", [str(tmp_path / "dot.png"), str(tmp_path / "notes.jpg"),
                                        str(tmp_path / "good.jpg")])
        page.wait_for_selector("#strip .card")
        assert page.evaluate("cur().name") == "good.jpg"
        assert page.evaluate("state.photos.map(p => p.name)") == ["good.jpg"]
        err = page.inner_text("#err-upload")
        assert "dot.png: 1×1 px is smaller than the smallest crop" in err and "notes.jpg: " in err
        assert [u.split("name=")[1] for u in posted] == ["dot.png", "good.jpg"]
        # "Add photos…" is on screen after the first photo, without opening Settings
        assert _in_view(page, "#upload") and _in_view(page, "#err-upload")
        with page.expect_file_chooser():
            page.click("#upload")
        page.screenshot(path=str(shots / f"a_batch_{size}.png"))
        assert errors == []


HOLD_CROPS = """
window.__hold = false; window.__held = [];
const realFetch = window.fetch.bind(window);
window.fetch = (url, init) => {
  if (window.__hold && String(url).includes("/crops")) {
    return new Promise((res, rej) => window.__held.push({ body: init && init.body, go: () => realFetch(url, init).then(res, rej) }));
  }
  return realFetch(url, init);
};
window.__release = (i) => { const h = window.__held[i]; h.go(); return h.body; };
"""


def _rects(page):
    return page.eval_on_selector_all(
        "#overlay rect.crop-box", "els => els.sort((a, b) => a.dataset.index - b.dataset.index)"
        ".map(e => ['x','y','width','height'].map(a => Math.round(+e.getAttribute(a) * 100) / 100))")


def _settle(page):
    """Wait until the photo on screen has its reply and nothing of it is loading."""
    page.wait_for_function("cur() && cur().boxes && cur().result && !cur().loading && "
                           "document.querySelectorAll('#strip .card').length === cur().boxes.length")


def _ready(page, srv):
    """The page loaded, its settings known and the Settings panel open."""
    page.goto(srv.url)
    page.wait_for_function("state.settings !== null")
    _open_settings(page)


def _open_photo(browser, srv, size, photo, *, k=None):
    """A page at ``size`` with ``photo`` uploaded (at ``k`` crops when given) and its suggestions settled."""
    page, errors = _page(browser, size)
    _ready(page, srv)
    if k is not None:
        page.select_option("#k", k)
    page.set_input_files("#files", str(photo))
    _settle(page)
    return page, errors


def _open_settings(page):
    if not page.evaluate("document.getElementById('controls').open"):
        page.click("#controls > summary")


def _tab(page, name):
    page.locator("#tabs .tab-main", has_text=name).click()
    page.wait_for_function(f"cur().name === {name!r}")
    _settle(page)


@pytest.mark.parametrize("size", list(SIZES))
def test_each_photo_keeps_its_settings_and_edits_through_every_change_and_a_reload(browser, make_app, tmp_path,
                                                                                   shots, size):
    from multicrop.datasets.examples import example_photo

    a = example_photo(tmp_path / "a.jpg")
    b = tmp_path / "b.jpg"
    b.write_bytes(photo_bytes(900, 400))
    with LiveServer(make_app()) as srv:
        page, errors = _page(browser, size)
        page.add_init_script(HOLD_CROPS)
        _ready(page, srv)
        page.select_option("#k", "2")
        page.set_input_files("#files", [str(a), str(b)])
        page.wait_for_function("state.photos.length === 2 && cur().name === 'a.jpg'")
        _settle(page)
        # an edit of photo A: its first crop ten screen px to the right
        page.locator("#strip .card").first.click()
        page.keyboard.press("Shift+ArrowRight")
        edited_a = _rects(page)
        assert "You have edited these crops" in page.inner_text("#notes")
        # photo B: another number of crops
        _tab(page, "b.jpg")
        page.select_option("#k", "3")
        page.wait_for_function("cur().boxes.length === 3")
        _settle(page)
        # back on A: its edit and its own Crops setting, untouched
        _tab(page, "a.jpg")
        assert _rects(page) == edited_a and page.input_value("#k") == "2"
        # a preset switch on A: the edited crops stay, and the page says how to drop them
        page.select_option("#ratios", "1:1")
        _settle(page)
        assert _rects(page) == edited_a
        assert "“Reset to suggestion” replaces them" in page.inner_text("#notes")
        page.screenshot(path=str(shots / f"b_kept_{size}.png"))

        page.reload()
        page.wait_for_function("state.photos.length === 2 && cur() && cur().name === 'a.jpg'")
        _settle(page)
        assert _rects(page) == edited_a
        assert page.input_value("#k") == "2" and page.input_value("#ratios") == "1:1"
        _open_settings(page)
        _tab(page, "b.jpg")
        assert page.input_value("#k") == "3" and len(_rects(page)) == 3
        _tab(page, "a.jpg")
        # Reset to suggestion is the one way to drop them: then 1:1 crops, and one Undo brings the edit back
        page.click("#reset")
        page.wait_for_function("!document.getElementById('notes').textContent.includes('You have edited')")
        _settle(page)
        assert _rects(page) != edited_a
        assert set(page.evaluate("cur().boxes.map(b => b.ratio)")) == {"1:1"}
        page.click("#undo")
        assert _rects(page) == edited_a

        # one request sequence: replies that come back in the other order never show the older state
        _tab(page, "b.jpg")
        page.evaluate("window.__hold = true")
        page.select_option("#ratios", "1:1")
        page.wait_for_function("window.__held.length === 1")
        page.select_option("#ratios", "4:5")
        page.wait_for_function("window.__held.length === 2")
        n = page.evaluate("state.replies")
        assert '"4:5"' in page.evaluate("window.__release(1)")
        page.wait_for_function(f"state.replies === {n + 1}")
        assert page.evaluate("window.__release(0)").count('"1:1"') == 1
        page.evaluate("window.__hold = false")
        page.wait_for_function(f"state.replies === {n + 2}")  # the older reply is in, and not used:
        assert set(page.evaluate("cur().boxes.map(b => b.ratio)")) == {"4:5"}
        assert page.input_value("#ratios") == "4:5"
        page.select_option("#strategy", "direct")  # and a change after it, answered at once
        _settle(page)
        page.evaluate("window.__hold = true")
        shown = _rects(page)
        page.select_option("#strategy", "partition")  # held ...
        page.wait_for_function("window.__held.length === 3")
        page.select_option("#k", "auto")  # ... and at once a combination that cannot be: said beside Crops
        assert "“auto” needs “Crops follow” set to “Subjects”" in page.inner_text("#err-k")
        n = page.evaluate("state.replies")
        page.evaluate("window.__release(2)")  # the partition reply arrives late: not shown
        page.evaluate("window.__hold = false")
        page.wait_for_function(f"state.replies === {n + 1}")
        assert "“auto” needs “Crops follow” set to “Subjects”" in page.inner_text("#err-k")
        assert _rects(page) == shown
        assert set(page.evaluate("cur().boxes.map(b => b.ratio)")) == {"4:5"}
        page.screenshot(path=str(shots / f"b_sequence_{size}.png"))
        assert errors == []


@pytest.mark.parametrize("size", list(SIZES))
def test_fewer_crops_than_asked_are_said_and_notes_follow_the_crops_shown(browser, make_app, tmp_path, shots, size):
    from multicrop.datasets.examples import example_photo

    example_photo(tmp_path / "two.jpg")  # three subjects: fewer than 10 framings without a cut
    with LiveServer(make_app()) as srv:
        page, errors = _page(browser, size)
        _ready(page, srv)
        page.select_option("#k", "10")
        page.select_option("#strategy", "direct")  # the default strategy of the page's users
        page.set_input_files("#files", str(tmp_path / "two.jpg"))
        _settle(page)
        n = len(_rects(page))
        assert 1 <= n < 10 and page.locator("#strip .card").count() == n
        assert page.inner_text("#count").endswith("(10 asked)")
        notes = page.locator("#notes li").all_inner_texts()
        assert any("instead of 10" in t or "asked for 10" in t for t in notes), notes  # why, in plain words
        assert sum(t.startswith("All slides are") for t in notes) == 1  # the ratio picked, said once
        # one Undo right after the first suggestion: nothing to undo, the crops stay
        assert page.is_disabled("#undo")
        page.locator("#strip .card").first.click()
        page.keyboard.press("Control+z")
        assert len(_rects(page)) == n
        page.screenshot(path=str(shots / f"c_fewer_{size}.png"))
        # a card's ratio changed: the shapes are mixed, and nothing still says they are all one shape
        other = page.evaluate("(() => { const r = cur().boxes[0].ratio; return allowedRatios().find(x => x !== r); })()")
        page.locator("#strip .card select[data-role=ratio]").first.select_option(other)
        notes = page.locator("#notes li").all_inner_texts()
        assert any(t.startswith("Mixed shapes") for t in notes), notes
        assert not any(t.startswith("All slides are") for t in notes), notes
        assert "(10 asked)" not in page.inner_text("#count")
        # notes about the suggestion's named crops are gone once the crops are edited; the why stays, as the suggestion's
        assert not any(t[:6] in ("Crop 1", "Crops ") for t in notes), notes
        assert any(t.startswith("The suggestion: ") for t in notes), notes
        page.screenshot(path=str(shots / f"c_mixed_{size}.png"))
        assert errors == []


def _tag_rects(page):
    """Each number tag's background and its text, as screen rectangles [x0, y0, x1, y1]."""
    return page.evaluate("""[...document.querySelectorAll('#overlay g.tag')].map(g => {
        const r = g.querySelector('rect').getBoundingClientRect(), t = g.querySelector('text').getBoundingClientRect();
        return [[r.left, r.top, r.right, r.bottom], [t.left, t.top, t.right, t.bottom]]; })""")


def _overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.parametrize("size", list(SIZES))
def test_outlines_without_tint_tags_apart_the_photo_on_screen_and_a_photographers_words(browser, make_app, tmp_path,
                                                                                        shots, size):
    from multicrop.datasets.examples import example_photo

    example_photo(tmp_path / "wide.jpg")
    small = np.full((480, 640, 3), 90, np.uint8)
    small[120:360, 80:320] = (230, 200, 90)
    small[120:360, 380:620] = (90, 200, 230)
    Image.fromarray(small).save(tmp_path / "small.jpg")
    tall = np.full((4000, 3000, 3), 70, np.uint8)
    tall[800:2000, 600:2400] = (220, 190, 120)
    Image.fromarray(tall).save(tmp_path / "tall.jpg", quality=80)
    with LiveServer(make_app()) as srv:
        page, errors = _page(browser, size)
        page.goto(srv.url)
        page.wait_for_function("state.settings !== null")
        # the first screen in a photographer's words
        words = page.eval_on_selector_all("#strategy option", "os => Object.fromEntries(os.map(o => [o.value, o.text]))")
        assert words["direct"] == "Subjects (recommended)"
        assert words["partition"] == "Regions (as in the Carousel paper)"
        labels = page.eval_on_selector_all(".controls label", "ls => ls.map(l => l.textContent.trim())")
        assert "Show detections" in labels and "Show what stands out" in labels
        assert not any(t in ("saliency", "faces", "regions", "Strategy") for t in labels), labels

        _open_settings(page)
        page.select_option("#k", "4")
        page.set_input_files("#files", [str(tmp_path / "wide.jpg"), str(tmp_path / "small.jpg"),
                                        str(tmp_path / "tall.jpg")])
        page.wait_for_function("state.photos.length === 3")
        _settle(page)
        # overlapping crops: crop 2 moved onto crop 1, so their tags would sit on one another
        page.click("#add")
        page.click("#add")
        fills = page.eval_on_selector_all("#overlay rect.crop-box", "rs => rs.map(r => +r.getAttribute('fill-opacity'))")
        assert fills and all(f == 0 for f in fills)  # outlines only: the photo is not tinted
        tags = _tag_rects(page)
        assert len(tags) == len(_rects(page)) >= 5
        for i, (bg, text) in enumerate(tags):
            assert text[0] >= bg[0] - 1 and text[2] <= bg[2] + 1, (i, bg, text)  # the words fit their tag
            for j in range(i):
                assert not _overlap(bg, tags[j][0]), (i, j, bg, tags[j][0])
        handles = page.evaluate("""[...document.querySelectorAll('#overlay rect.handle')].map(h => {
            const r = h.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })""")
        assert len(handles) == 8 and not any(_overlap(h, bg) for h in handles for bg, _ in tags)  # handles free
        page.screenshot(path=str(shots / f"e_tags_{size}.png"))

        # a small photo fills the space it has; a tall 12 MP photo with its notes fits the screen (every photo
        # analysed first: a tab still loading may push the photo down on a busy machine)
        page.wait_for_function("state.photos.every(p => p.result && !p.loading)")
        _tab(page, "small.jpg")
        shown = page.locator("#photo").bounding_box()
        column = page.eval_on_selector("#stage", "s => s.parentElement.clientWidth")
        vp = page.viewport_size
        if size == "desktop":
            assert shown["width"] > 1.3 * 640  # enlarged to the space it has (up to the screen's bottom)
            assert shown["y"] + shown["height"] <= vp["height"]
        else:
            assert abs(shown["width"] - column) <= 2  # the column's width
        _tab(page, "tall.jpg")
        shown = page.locator("#photo").bounding_box()
        if size == "desktop":
            assert page.locator("#notes li").count() >= 1
            assert shown["y"] + shown["height"] <= vp["height"]
        else:
            assert shown["height"] <= 0.6 * vp["height"] + 1
        page.screenshot(path=str(shots / f"e_tall_{size}.png"))
        assert errors == []


@pytest.mark.parametrize("size", list(SIZES))
def test_label_undo_redo_are_off_until_there_is_something_to_undo(browser, make_app, label_dir, shots, size):
    (label_dir / "dataset" / "photo0.png").write_bytes(photo_bytes(300, 200, fmt="PNG"))  # shares photo0's stem
    with LiveServer(make_app(label_dir=label_dir)) as srv:
        page, errors = _page(browser, size)
        page.goto(srv.url)
        page.wait_for_selector(".item.active")
        page.wait_for_function("document.getElementById('photo').naturalWidth > 0")
        assert "photo0.jpg" in page.inner_text("#skipped") and "share one label photo0.json" in page.inner_text("#skipped")
        assert page.is_disabled("#undo") and page.is_disabled("#redo")
        stage = page.locator("#overlay").bounding_box()
        page.mouse.move(stage["x"] + 10, stage["y"] + 10)
        page.mouse.down()
        page.mouse.move(stage["x"] + 90, stage["y"] + 60, steps=4)
        page.mouse.up()
        assert not page.is_disabled("#undo") and page.is_disabled("#redo")
        page.click("#undo")
        assert page.is_disabled("#undo") and not page.is_disabled("#redo")
        assert page.locator("#overlay rect.crop-box").count() == 0
        page.screenshot(path=str(shots / f"e_label_{size}.png"))
        assert errors == []


@pytest.mark.parametrize("size", list(SIZES))
def test_a_focus_click_on_a_body_names_that_person_and_frames_them_whole(browser, make_app, tmp_path, shots, size):
    from multicrop.datasets.examples import example_photo

    src = example_photo(tmp_path / "astronaut.jpg")
    with LiveServer(make_app()) as srv:
        page, errors = _page(browser, size)
        _ready(page, srv)
        page.select_option("#k", "2")
        page.select_option("#strategy", "direct")
        page.check("#focusMode")
        page.set_input_files("#files", str(src))
        _settle(page)
        while page.locator("#strip .card").count():  # clear the photo, so the click lands on it, not a crop
            page.locator("#strip .card").first.click()
            page.keyboard.press("Delete")
        at = page.evaluate("""(() => { const o = document.getElementById('overlay').getBoundingClientRect();
            return [o.left + 492 * o.width / 3600, o.top + 880 * o.height / 1400]; })()""")
        page.mouse.click(*at)  # on her suit, below the chin
        page.wait_for_function("cur().result && cur().result.focus_subject && !cur().loading")
        _settle(page)
        sub = page.evaluate("cur().result.focus_subject")
        assert sub["kind"] == "person"
        b = page.evaluate("cur().boxes[0]")
        s = sub["box"]
        assert b["y"] <= s["y"] + 2 and b["y"] + b["h"] >= s["y"] + s["h"] - 2  # her head is in the slide
        assert "Crop 1 frames the person you clicked" in page.inner_text("#notes")
        page.screenshot(path=str(shots / f"f_focus_{size}.png"))
        assert errors == []


def test_a_pinch_resizes_the_selected_crop_about_its_centre(browser, make_app, tmp_path, shots):
    from multicrop.datasets.examples import example_photo

    src = example_photo(tmp_path / "wide.jpg")
    with LiveServer(make_app()) as srv:
        page, errors = _page(browser, "phone")
        page.goto(srv.url)
        page.wait_for_function("state.settings !== null")
        page.set_input_files("#files", str(src))
        _settle(page)
        page.click("#add")  # a crop a third of the photo high, in the middle, selected
        i = len(_rects(page)) - 1
        x, y, w, h = _rects(page)[i]
        o = page.locator("#overlay").bounding_box()
        s = o["width"] / 3600
        cx, cy = o["x"] + (x + w / 2) * s, o["y"] + (y + h / 2) * s
        cdp = page.context.new_cdp_session(page)

        def touch(kind, spread):
            pts = [] if kind == "touchEnd" else [{"x": cx - spread, "y": cy, "id": 1}, {"x": cx + spread, "y": cy, "id": 2}]
            cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": pts})

        touch("touchStart", 20)
        for spread in (24, 28, 32):
            touch("touchMove", spread)
        touch("touchEnd", 0)
        x2, y2, w2, h2 = _rects(page)[i]
        assert abs(w2 / w - 32 / 20) < 0.05 and abs(w2 / h2 - w / h) < 1e-3  # larger by the fingers' spread, same ratio
        assert abs((x2 + w2 / 2) - (x + w / 2)) < 2 and abs((y2 + h2 / 2) - (y + h / 2)) < 2  # about its centre
        page.screenshot(path=str(shots / "f_pinch_phone.png"))
        page.keyboard.press("Control+z")  # one undo step
        assert _rects(page)[i] == [x, y, w, h]
        assert errors == []


@pytest.mark.parametrize("size", list(SIZES))
def test_every_target_is_at_least_24_css_px_even_the_handles_of_a_small_crop(browser, make_app, tmp_path, size):
    (tmp_path / "p.jpg").write_bytes(photo_bytes(900, 400))
    with LiveServer(make_app()) as srv:
        page, errors = _open_photo(browser, srv, size, tmp_path / "p.jpg")
        page.click("#add")
        for _ in range(40):  # as small as it goes
            page.keyboard.press("-")
        small = page.evaluate("""[...document.querySelectorAll('#overlay rect.handle-target')].map(h => {
            const r = h.getBoundingClientRect(); return [r.width, r.height]; })""")
        assert len(small) == 8 and all(min(wh) >= 24 - 0.5 for wh in small), small
        sizes = page.evaluate("""[...document.querySelectorAll('button, select, input:not([type=checkbox]):not([type=radio]):not([type=file]), .check, header .modes label')]
            .filter(e => e.offsetParent !== null).map(e => { const r = e.getBoundingClientRect();
            return [e.id || e.textContent.trim().slice(0, 20), r.width, r.height]; })""")
        tiny = [t for t in sizes if t[1] < 24 - 0.5 or t[2] < 24 - 0.5]
        assert sizes and tiny == [], tiny
        assert errors == []


@pytest.mark.parametrize("size", list(SIZES))
def test_a_swipe_preview_at_the_posts_shape_from_full_resolution_slides(browser, make_app, tmp_path, shots, size):
    from multicrop.datasets.examples import example_photo

    src = example_photo(tmp_path / "wide.jpg")
    with LiveServer(make_app()) as srv:
        page, errors = _open_photo(browser, srv, size, src, k="3")
        assert not page.is_visible("#preview")
        page.click("#previewToggle")  # the strip becomes the post, as it will be swiped
        assert page.is_visible("#preview") and not page.is_visible("#strip")
        page.wait_for_function("""[...document.querySelectorAll('#frame .slide img')].length === cur().boxes.length
            && [...document.querySelectorAll('#frame .slide img')].every(i => i.complete && i.naturalWidth > 0)""")
        boxes = page.evaluate("cur().boxes")
        frame = page.locator("#frame").bounding_box()
        slides = page.evaluate("""[...document.querySelectorAll('#frame .slide')].map(s => {
            const r = s.getBoundingClientRect(), i = s.querySelector('img');
            return [r.left, r.width, r.height, i.naturalWidth, i.naturalHeight]; })""")
        dpr = page.evaluate("window.devicePixelRatio")
        first = boxes[0]["w"] / boxes[0]["h"]
        for k, (left, w, h, nw, nh) in enumerate(slides):
            assert abs(w - frame["width"]) < 1 and abs(w / h - first) < 0.01  # the frame, at slide 1's shape
            assert abs(left - (frame["x"] + k * frame["width"])) < 1.5  # edge to edge, no gap
            b = boxes[k]
            assert nw == round(frame["width"] * dpr) or nw == round(b["w"])  # cut at the screen's pixels
            assert abs(nw / nh - b["w"] / b["h"]) < 0.02  # from the full-resolution photo, this crop
        # a swipe snaps to the next slide
        page.eval_on_selector("#frame", "f => f.scrollTo({left: f.clientWidth * 0.7})")
        page.wait_for_function("Math.abs(document.getElementById('frame').scrollLeft - document.getElementById('frame').clientWidth) < 2")
        page.screenshot(path=str(shots / f"f_preview_{size}.png"), full_page=size == "phone")
        # a slide of another shape: said, and shown re-cropped to slide 1's shape as the platform would
        other = page.evaluate("(() => { const r = cur().boxes[1].ratio; return allowedRatios().find(x => x !== r); })()")
        page.evaluate(f"(() => {{ editor.select(1); editor.setRatio(1, {other!r}); }})()")  # as the card's menu does
        page.wait_for_function("document.getElementById('previewNote').textContent.includes('re-cropped')")
        assert "slide 2 is re-cropped" in page.inner_text("#previewNote")
        assert errors == []


NAMED = ("button", "combobox", "checkbox", "spinbutton", "radio", "textbox")


@pytest.mark.parametrize("size", list(SIZES))
def test_the_first_screen_passes_an_accessibility_check_and_a_keyboard_upload_lands_on_the_first_card(
        browser, make_app, tmp_path, shots, size):
    import re

    (tmp_path / "p.jpg").write_bytes(photo_bytes(900, 400))
    with LiveServer(make_app()) as srv:
        page, errors = _page(browser, size)
        page.goto(srv.url)
        page.wait_for_function("state.settings !== null")
        snap = page.locator("body").aria_snapshot()
        unnamed = [ln.strip() for ln in snap.splitlines()
                   if (m := re.match(r"\s*- (\w+)(.*)", ln)) and m[1] in NAMED and not m[2].strip().startswith('"')]
        assert unnamed == [], snap
        # focus order: the page's own links and mode, then Add photos… (before any setting)
        order = []
        page.locator("body").focus()
        for _ in range(8):
            page.keyboard.press("Tab")
            order.append(page.evaluate("document.activeElement.id || document.activeElement.textContent.trim()"))
            if order[-1] == "upload":
                break
        assert order[-1] == "upload" and len(order) <= 5, order
        assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
        page.screenshot(path=str(shots / f"f_first_screen_{size}.png"))
        with page.expect_file_chooser() as fc:
            page.keyboard.press("Enter")
        fc.value.set_files(str(tmp_path / "p.jpg"))
        page.wait_for_function("document.activeElement && document.activeElement.classList.contains('card')")
        assert page.evaluate("document.activeElement.dataset.index") == "0"  # no Tab needed to reach it
        assert errors == []
