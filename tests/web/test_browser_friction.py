"""Small frictions a photographer met on the carousel page, each walked in headless Chromium at 1440x900 and
at 390x844 with touch: why there is no carousel said where it is seen, the status line after a refused
upload, a crop added at the carousel's shape, the photo tabs on a phone, controls that cannot act, the photo
kept on screen when lines appear above it, the download said beside its buttons, and a portrait photo beside
the carousel."""

from __future__ import annotations

import pytest

from .conftest import LiveServer, photo_bytes
from .test_browser_paths import (SIZES, _close_contexts, _in_view, _open_photo, _page, _png,  # noqa: F401
                                 _settle)


def _busy_done(page):
    page.wait_for_function("state.photos.length > 0 && state.photos.every(p => !p.loading) && "
                           "document.getElementById('busy').classList.contains('hidden')")


@pytest.mark.parametrize("size", list(SIZES))
def test_why_a_photo_has_no_carousel_is_on_screen_even_with_the_settings_folded(browser, make_app, tmp_path, shots,
                                                                               size):
    (tmp_path / "tiny.png").write_bytes(_png(64, 64))  # too small for the 2 crops the page starts with
    with LiveServer(make_app()) as srv:
        page, errors = _page(browser, size)
        page.goto(srv.url)
        page.wait_for_function("state.settings !== null")
        assert page.evaluate("document.getElementById('controls').open") is (size == "desktop")  # folded on a phone
        page.set_input_files("#files", str(tmp_path / "tiny.png"))
        page.wait_for_function("document.getElementById('err-k').textContent !== ''")
        assert "no carousel for these settings" in page.inner_text("#status")
        # the reason, beside the control that fixes it, on screen: a phone's folded Settings open to show it
        assert page.is_visible("#err-k") and _in_view(page, "#err-k") and _in_view(page, "#k")
        assert "too small for 2 crops of at least 64 px" in page.inner_text("#err-k")
        assert page.inner_text("#tabs .tab.active .st") == "no carousel"  # not "ready"
        page.screenshot(path=str(shots / f"friction_no_carousel_{size}.png"))
        assert errors == []


@pytest.mark.parametrize("size", list(SIZES))
def test_a_refused_upload_leaves_the_status_of_the_photo_on_screen(browser, make_app, tmp_path, shots, size):
    (tmp_path / "p.jpg").write_bytes(photo_bytes(900, 400))
    (tmp_path / "dot.png").write_bytes(_png(1, 1))  # passes the page's check; the server refuses it
    with LiveServer(make_app()) as srv:
        page, errors = _open_photo(browser, srv, size, tmp_path / "p.jpg")
        _busy_done(page)
        before = page.inner_text("#status")
        assert before == "p.jpg: 900×400 px"
        page.set_input_files("#files", str(tmp_path / "dot.png"))
        page.wait_for_function("document.getElementById('err-upload').textContent.includes('dot.png')")
        page.wait_for_function("!document.getElementById('upload').disabled")
        assert page.inner_text("#status") == before  # not "uploading dot.png…" for good
        assert not page.is_visible("#busy")
        page.screenshot(path=str(shots / f"friction_refused_upload_{size}.png"))
        assert errors == []


@pytest.mark.parametrize("size", list(SIZES))
def test_add_crop_takes_the_shape_of_a_one_ratio_carousel(browser, make_app, tmp_path, size):
    (tmp_path / "p.jpg").write_bytes(photo_bytes(900, 400))
    with LiveServer(make_app()) as srv:
        page, errors = _open_photo(browser, srv, size, tmp_path / "p.jpg")
        assert page.input_value("#ratios") == "instagram" and not page.is_checked("#mixed")
        shape = page.evaluate("cur().boxes[0].ratio")
        assert shape != page.evaluate("allowedRatios()[0]")  # (so that the first allowed ratio would be wrong)
        page.click("#add")
        ratios = page.evaluate("cur().boxes.map(b => b.ratio)")
        assert len(ratios) == 3 and set(ratios) == {shape}, ratios  # "one for all slides" still holds
        assert "Mixed shapes" not in page.inner_text("#notes")
        # with Mix ratios a crop may take another shape: the first of the setting's, as before
        page.check("#mixed")
        _settle(page)
        page.click("#add")
        assert page.evaluate("cur().boxes.at(-1).ratio") == page.evaluate("allowedRatios()[0]")
        assert errors == []


ACTIVE_TAB_SHOWN = """(() => { const row = document.getElementById('tabs').getBoundingClientRect();
    const tab = document.querySelector('#tabs .tab.active').getBoundingClientRect();
    return row.left - 1 <= tab.left && tab.right <= row.right + 1; })()"""


def test_the_photo_tabs_of_a_phone_take_one_row(browser, make_app, tmp_path, shots):
    names = ["first-photo-of-the-day.jpg", "second-photo-of-the-day.jpg", "third-photo-of-the-day.jpg"]
    for n in names:
        (tmp_path / n).write_bytes(photo_bytes(900, 400))
    with LiveServer(make_app()) as srv:
        page, errors = _page(browser, "phone")
        page.goto(srv.url)
        page.wait_for_function("state.settings !== null")
        page.set_input_files("#files", [str(tmp_path / n) for n in names])
        page.wait_for_function("state.photos.length === 3 && state.photos.every(p => p.boxes && !p.loading)")
        _settle(page)
        # (measured in one go: the tabs are drawn again whenever a thumbnail arrives)
        tops = page.evaluate("[...document.querySelectorAll('#tabs .tab')]"
                             ".map(t => Math.round(t.getBoundingClientRect().top))")
        upload = page.locator("#upload").bounding_box()
        assert len(set(tops)) == 1 and abs(tops[0] - upload["y"]) < 8, tops  # one row, beside Add photos…
        assert page.evaluate("document.documentElement.scrollWidth") <= 390  # the row scrolls, not the page
        # the last tab, chosen after a swipe along the row, is shown whole in it, and stays so after a repaint
        page.eval_on_selector("#tabs", "t => t.scrollLeft = t.scrollWidth")
        page.locator("#tabs .tab-main").nth(2).click()
        page.wait_for_function("cur().name === 'third-photo-of-the-day.jpg'")
        _settle(page)
        assert page.evaluate(ACTIVE_TAB_SHOWN)
        # choosing the first again brings it back into the row
        page.eval_on_selector("#tabs .tab-main", "b => b.click()")
        page.wait_for_function("cur().name === 'first-photo-of-the-day.jpg'")
        assert page.evaluate(ACTIVE_TAB_SHOWN)
        page.screenshot(path=str(shots / "friction_tabs_phone.png"))
        assert errors == []


@pytest.mark.parametrize("size", list(SIZES))
def test_controls_that_cannot_act_are_off_and_say_why(browser, make_app, tmp_path, size):
    (tmp_path / "tiny.png").write_bytes(_png(64, 64))
    with LiveServer(make_app()) as srv:  # the tests' config: "Regions"
        page, errors = _page(browser, size)
        page.goto(srv.url)
        page.wait_for_function("state.settings !== null")
        assert page.is_disabled("#previewToggle")  # no photo: nothing to preview
        page.set_input_files("#files", str(tmp_path / "tiny.png"))
        page.wait_for_function("document.getElementById('err-k').textContent !== ''")
        assert page.evaluate("cur().boxes") is None
        assert page.is_disabled("#previewToggle")  # no crops: nothing to preview
        page.select_option("#k", "1")
        _settle(page)
        assert page.is_enabled("#previewToggle")
        # "Show regions" draws the parts "Regions" chose from; with "Subjects" it would do nothing
        assert page.is_enabled("#showRegions")
        page.select_option("#strategy", "direct")
        _settle(page)
        assert page.is_disabled("#showRegions")
        label = page.locator("label.check", has=page.locator("#showRegions"))
        assert "Regions" in label.get_attribute("title")
        assert float(label.evaluate("l => getComputedStyle(l).opacity")) < 1  # it looks off, as it is
        page.select_option("#strategy", "partition")
        _settle(page)
        assert page.is_enabled("#showRegions")
        assert errors == []


PHOTO_RECT = "(() => { const r = document.getElementById('photo').getBoundingClientRect(); return [r.top, r.bottom]; })()"
NEXT_FRAMES = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def _photo_fits(page):
    """The photo's top and bottom once the page has drawn twice, the bottom checked against fitPhoto()'s margin."""
    page.evaluate(NEXT_FRAMES)
    top, bottom = page.evaluate(PHOTO_RECT)
    assert bottom <= 900 - 11, (top, bottom)  # on screen, with the 12 px the page leaves under it
    return top, bottom


def test_the_photo_stays_on_screen_when_lines_appear_above_it(browser, make_app, tmp_path, shots):
    (tmp_path / "sq.jpg").write_bytes(photo_bytes(200, 200))  # enlarged to the screen's height: its bottom counts
    (tmp_path / "dot.png").write_bytes(_png(1, 1))  # the server refuses it: a line beside Add photos…
    with LiveServer(make_app()) as srv:
        page, errors = _open_photo(browser, srv, "desktop", tmp_path / "sq.jpg")
        _busy_done(page)
        top0, bottom0 = _photo_fits(page)
        assert bottom0 >= 900 - 14  # as tall as the screen allows
        page.select_option("#k", "10")  # more crops than a 200 px photo holds: said beside Crops
        page.wait_for_function("document.getElementById('err-k').textContent !== ''")
        _photo_fits(page)
        page.set_input_files("#files", str(tmp_path / "dot.png"))
        page.wait_for_function("document.getElementById('err-upload').textContent.includes('dot.png')")
        _busy_done(page)
        top, bottom = _photo_fits(page)
        assert top > top0 + 20  # the bars grew, and the photo was fitted again under them
        page.screenshot(path=str(shots / "friction_lines_above_the_photo_desktop.png"))
        page.select_option("#k", "2")  # fixed: the line beside Crops goes, the photo grows again
        _settle(page)
        page.wait_for_function("document.getElementById('err-k').textContent === ''")
        _, bottom = _photo_fits(page)
        assert bottom >= 900 - 14
        assert errors == []


@pytest.mark.parametrize("size", list(SIZES))
def test_the_download_is_said_where_its_buttons_are(browser, make_app, tmp_path, shots, size):
    (tmp_path / "tall.jpg").write_bytes(photo_bytes(600, 800))  # a portrait: a phone's buttons far below the photo
    with LiveServer(make_app()) as srv:
        page, errors = _open_photo(browser, srv, size, tmp_path / "tall.jpg")
        _busy_done(page)
        page.locator("#dlFull").scroll_into_view_if_needed()
        with page.expect_download():
            page.click("#dlFull")
        _busy_done(page)
        said = "tall.jpg: zip of 2 crops downloaded"
        line = page.locator(".downloads [role=status]")
        if size == "phone":
            assert not _in_view(page, "#status")  # the status line is above the photo, off-screen
            page.wait_for_function(f"document.querySelector('.downloads [role=status]').textContent.startsWith({said!r})")
            assert _in_view(page, "#dlFull") and _in_view(page, ".downloads [role=status]")  # said where they are
            assert page.inner_text("#status") == "tall.jpg: 600×800 px"  # the photo's line, as it was
        else:  # the status line is on screen: it says it, as before, and nothing says it twice
            assert _in_view(page, "#status") and page.inner_text("#status").startswith(said)
            assert line.count() == 1 and line.inner_text() == ""
        page.screenshot(path=str(shots / f"friction_download_said_{size}.png"))
        assert errors == []


def test_a_portrait_photo_sits_beside_the_carousel(browser, make_app, tmp_path, shots):
    (tmp_path / "portrait.jpg").write_bytes(photo_bytes(480, 640))
    (tmp_path / "wide.jpg").write_bytes(photo_bytes(900, 400))
    with LiveServer(make_app()) as srv:
        page, errors = _open_photo(browser, srv, "desktop", tmp_path / "portrait.jpg")
        _busy_done(page)
        col = page.locator(".photo-col").bounding_box()
        carousel = page.locator(".strip-col").bounding_box()
        photo = page.locator("#photo").bounding_box()
        assert photo["width"] < col["width"] - 300  # narrower than its column: the height sets its size
        assert photo["y"] + photo["height"] <= 900 - 11  # whole on screen
        # no empty band between the photo and the carousel: only the grid's 16 px gap
        assert 0 <= carousel["x"] - (photo["x"] + photo["width"]) <= 17, (photo, carousel)
        assert page.locator("#status").bounding_box()["x"] == col["x"]  # the status line where it was
        page.screenshot(path=str(shots / "friction_portrait_desktop.png"))
        # a wide photo still fills its column, from its left edge
        page.set_input_files("#files", str(tmp_path / "wide.jpg"))
        page.wait_for_function("cur().name === 'wide.jpg'")
        _settle(page)
        page.evaluate(NEXT_FRAMES)
        photo = page.locator("#photo").bounding_box()
        assert abs(photo["x"] - col["x"]) <= 1 and abs(photo["width"] - col["width"]) <= 2, (photo, col)
        assert errors == []
