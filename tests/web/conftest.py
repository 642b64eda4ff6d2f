"""Fixtures of the web tests: a fast crop config, generated photos, a live server for the browser."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("fastapi", reason="the web extra is not installed")

from multicrop.crop.config import CropConfig  # noqa: E402
from multicrop.web.live import LiveServer  # noqa: E402,F401  (the tests import it from here)

#: Spectral saliency and no face model: the tests exercise the web layer, not the models.  Strategy
#: partition: with spectral saliency direct frames the top and bottom halves of a flat square as two
#: subjects (u2netp, the default, does not), and the tests look for one crop per subject.
FAST = CropConfig(strategy="partition", saliency="spectral", faces=False)


def photo_bytes(width: int = 900, height: int = 400, *, fmt: str = "JPEG", gps: bool = False) -> bytes:
    """A photo with two bright subjects, left and right (with a GPS tag when asked)."""
    img = np.full((height, width, 3), 40, np.uint8)
    s = height // 2
    img[height // 4: height // 4 + s, width // 9: width // 9 + s] = (230, 200, 90)
    img[height // 4: height // 4 + s, width - width // 9 - s: width - width // 9] = (90, 200, 230)
    im = Image.fromarray(img)
    buf = io.BytesIO()
    if gps:
        ex = Image.Exif()
        ex[0x010F] = "TestCam"  # Make
        ex[0x8825] = {1: "N", 2: (48.0, 51.0, 30.0), 3: "E", 4: (2.0, 17.0, 40.0)}
        im.save(buf, format=fmt, exif=ex.tobytes(), quality=92)
    else:
        im.save(buf, format=fmt)
    return buf.getvalue()


@pytest.fixture
def make_app():
    """Build apps with the fast config; their temporary directories are removed afterwards."""
    from multicrop.web import create_app

    apps = []

    def build(**kwargs):
        kwargs.setdefault("config", FAST)
        app = create_app(**kwargs)
        apps.append(app)
        return app

    yield build
    for app in apps:
        app.state.store.close()


@pytest.fixture
def label_dir(tmp_path: Path) -> Path:
    """A Carousel-layout folder with three unlabelled photos."""
    d = tmp_path / "labels" / "dataset"
    d.mkdir(parents=True)
    for i, (w, h) in enumerate([(900, 400), (600, 800), (800, 600)]):
        (d / f"photo{i}.jpg").write_bytes(photo_bytes(w, h))
    return d.parent


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def intercept_file_choosers(page) -> None:
    """Have Playwright intercept ``page``'s file choosers from now on, long before a test waits for one.

    ``page.expect_file_chooser()`` turns the interception on when it starts
    waiting, by a message it does not wait for (playwright-python's
    ``_update_subscription`` is fire-and-forget), so on a loaded machine the
    key press inside the ``with`` block could open the chooser before the
    browser intercepts it, and the wait then times out although the page did
    open it.  A listener held for the page's life settles that before the
    test's first step; a page that opens no chooser still fails the wait.
    """
    page.on("filechooser", lambda chooser: None)


#: How long a browser test waits for a condition (ms).  Playwright's default, 30 s, is a time limit: on a
#: loaded machine (the suite on 2 busy cores, the page's photo analysed beside it) a condition that does come
#: true can take longer.  Waiting longer changes no assertion; a condition that never holds still fails.
WAIT_MS = 180_000


class _PatientBrowser:
    """The browser, whose new contexts and pages wait up to :data:`WAIT_MS` for what a test waits for."""

    def __init__(self, browser) -> None:
        self._browser = browser

    def new_context(self, **kwargs):
        context = self._browser.new_context(**kwargs)
        context.set_default_timeout(WAIT_MS)
        return context

    def new_page(self, **kwargs):
        page = self._browser.new_page(**kwargs)
        page.set_default_timeout(WAIT_MS)
        return page

    def __getattr__(self, name):
        return getattr(self._browser, name)


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium, driven by Playwright (no browser download); conditions waited for as long as
    a loaded machine needs (:data:`WAIT_MS`)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra (playwright) is not installed")
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing; install Debian's chromium package (.ci/run does)")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield _PatientBrowser(b)
        b.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where browser tests save their screenshots (MULTICROP_SHOTS overrides, to look at them)."""
    import os

    d = Path(os.environ.get("MULTICROP_SHOTS", tmp_path / "shots"))
    d.mkdir(parents=True, exist_ok=True)
    return d
