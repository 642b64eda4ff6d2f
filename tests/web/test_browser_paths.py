"""Issue 30's paths as a photographer walks them, in headless Chromium at 1440x900 and at 390x844 with
touch: each test ends where the photographer expects, and saves screenshots to look at."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from .conftest import LiveServer, photo_bytes

SIZES = {"desktop": dict(viewport={"width": 1440, "height": 900}),
         "phone": dict(viewport={"width": 390, "height": 844}, device_scale_factor=2, has_touch=True, is_mobile=True)}


def _png(w, h):
    buf = io.BytesIO()
    Image.fromarray(np.full((h, w, 3), 120, np.uint8)).save(buf, "PNG")
    return buf.getvalue()


def _page(browser, size):
    ctx = browser.new_context(**SIZES[size], accept_downloads=True)
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
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
