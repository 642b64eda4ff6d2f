"""End to end in headless Chromium (Debian's, driven by Playwright): both pages as a person uses them."""

from __future__ import annotations

import json
import re
import zipfile

from PIL import Image

from multicrop.datasets.carousel import load_carousel
from multicrop.datasets.examples import example_photo
from multicrop.evaluation.carousel.evaluate import evaluate_carousel
from multicrop.metrics.kiou import KIOU_THRESHOLDS, image_kiou

from .conftest import LiveServer


def _box_rects(page):
    """The crops' rectangles in swipe order (the selected one is drawn last, on top)."""
    return page.eval_on_selector_all(
        "#overlay rect.crop-box", "els => els.sort((a, b) => a.dataset.index - b.dataset.index)"
        ".map(e => ['x','y','width','height'].map(a => +e.getAttribute(a)))")


def _example_with_gps(path):
    """The bundled example photo (what `multicrop example` writes), with a GPS tag added."""
    example_photo(path)
    ex = Image.Exif()
    ex[0x010F] = "TestCam"  # Make
    ex[0x8825] = {1: "N", 2: (48.0, 51.0, 30.0), 3: "E", 4: (2.0, 17.0, 40.0)}
    with Image.open(path) as im:
        im.load()
    im.save(path, exif=ex.tobytes(), quality=92)
    with Image.open(path) as im:
        assert 0x8825 in im.getexif() and im.size == (3600, 1400)
    return path


def test_carousel_upload_change_k_drag_and_download(browser, make_app, tmp_path, shots):
    src = _example_with_gps(tmp_path / "example.jpg")
    bad = tmp_path / "notes.jpg"
    bad.write_bytes(b"not a photo")
    with LiveServer(make_app()) as srv:
        page = browser.new_page(viewport={"width": 1280, "height": 1000}, accept_downloads=True)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(srv.url)
        page.select_option("#k", "2")
        page.set_input_files("#files", [str(src), str(bad)])
        page.wait_for_selector(".card >> nth=1")
        assert page.locator(".card").count() == 2
        assert "notes.jpg: " in page.locator("#err-upload").inner_text()  # beside the upload control
        page.screenshot(path=str(shots / "carousel_1_suggested.png"), full_page=True)

        page.select_option("#k", "3")
        page.wait_for_function("document.querySelectorAll('.card').length === 3")
        assert len(_box_rects(page)) == 3
        page.select_option("#ratios", "1:1")
        page.wait_for_function("[...document.querySelectorAll('.card .what')].every(s => s.textContent.includes('1:1'))")

        # the last box is drawn on top of the others: drag it away from the edge it touches
        before = _box_rects(page)[-1]
        step = 60 if before[0] == 0 else -60
        rect = page.locator("#overlay rect.crop-box").last.bounding_box()
        page.mouse.move(rect["x"] + rect["width"] / 2, rect["y"] + rect["height"] / 2)
        page.mouse.down()
        page.mouse.move(rect["x"] + rect["width"] / 2 + step, rect["y"] + rect["height"] / 2, steps=6)
        page.mouse.up()
        after = _box_rects(page)[-1]
        assert abs(after[0] - before[0]) > 20 and after[1:] == before[1:]  # moved sideways, same size
        handle = page.locator("#overlay rect.handle[data-handle=se]").bounding_box()
        page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
        page.mouse.down()
        page.mouse.move(handle["x"] - 40, handle["y"] - 10, steps=6)
        page.mouse.up()
        resized = _box_rects(page)[-1]
        assert resized[2] < after[2] and abs(resized[2] - resized[3]) < 1e-6  # smaller, still square
        page.screenshot(path=str(shots / "carousel_2_edited.png"), full_page=True)

        # Judge scores: five rubric numbers (two marked as proxies) and a holistic one on each card
        page.check("#showScores")
        page.wait_for_function("[...document.querySelectorAll('.card')].every(c => c.querySelectorAll('.scores .dim').length === 5)")
        for card in page.locator(".card").all():
            dims = card.locator(".scores .dim").all_inner_texts()
            assert [float(re.search(r": ([0-9.]+) / 5$", t).group(1)) for t in dims] and len(dims) == 5
            assert all(1 <= float(re.search(r": ([0-9.]+) / 5$", t).group(1)) <= 5 for t in dims)
            assert sum("(proxy)" in t for t in dims) == 2
            assert re.fullmatch(r"holistic: [0-9.]+ / 10", card.locator(".scores .holistic").inner_text())
        # the crop with the best holistic score is marked, and the proxies are explained under the strip
        hol = [float(re.search(r"([0-9.]+) / 10", t).group(1)) for t in page.locator(".card .scores .holistic").all_inner_texts()]
        best = page.eval_on_selector_all(".card", "cs => cs.map(c => c.classList.contains('best'))")
        assert best.count(True) == 1 and hol[best.index(True)] == max(hol)
        assert "★ best" in page.locator(".card.best").inner_text()
        assert "(proxy)" in page.inner_text("#scoreNote") and page.is_visible("#scoreNote")
        page.screenshot(path=str(shots / "carousel_3_scores.png"), full_page=True)

        page.fill("#width", "300")
        with page.expect_download() as dl:
            page.click("#dlWidth")
        path = tmp_path / "out.zip"
        dl.value.save_as(path)
        assert errors == []
    z = zipfile.ZipFile(path)
    names = sorted(z.namelist())
    assert names == ["example.json", "example_1_w300.jpg", "example_2_w300.jpg", "example_3_w300.jpg"]
    record = json.loads(z.read("example.json"))
    assert [c["ratio"] for c in record["crops"]] == ["1:1"] * 3
    assert abs(record["crops"][2]["box"]["w"] - round(resized[2])) <= 1  # the dragged size was cut
    for n in names[1:]:
        with z.open(n) as f:
            im = Image.open(f)
            assert im.width == 300 and abs(im.height - 300) <= 1 and 0x8825 not in im.getexif()


def test_label_draw_two_boxes_reload_and_evaluate(browser, make_app, label_dir, shots, tmp_path):
    with LiveServer(make_app(label_dir=label_dir)) as srv:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(srv.url)
        page.wait_for_selector(".item.active")
        assert page.inner_text("#progress") == "0 / 3 labelled"
        page.wait_for_function("document.getElementById('photo').naturalWidth > 0")
        stage = page.locator("#overlay").bounding_box()
        # portrait box on the left, then O flips the orientation and a landscape box on the right
        page.mouse.move(stage["x"] + 20, stage["y"] + 20)
        page.mouse.down()
        page.mouse.move(stage["x"] + 140, stage["y"] + 60, steps=5)
        page.mouse.up()
        page.locator("#overlay").click(position={"x": 5, "y": 5})  # a click draws a box a third of the photo wide
        assert page.locator("#overlay rect.crop-box").count() == 2
        page.keyboard.press("Delete")  # and Delete removes the selected box again
        assert page.locator("#overlay rect.crop-box").count() == 1
        page.keyboard.press("o")
        page.mouse.move(stage["x"] + stage["width"] * 0.55, stage["y"] + 30)
        page.mouse.down()
        page.mouse.move(stage["x"] + stage["width"] * 0.55 + 180, stage["y"] + 60, steps=5)
        page.mouse.up()
        page.fill("input[name=title]", "Two lamps")
        page.fill("input[name=creator]", "A. Person")
        page.wait_for_function("document.getElementById('saved').textContent.startsWith('saved')")
        page.wait_for_function("document.getElementById('progress').textContent === '1 / 3 labelled'")
        # the metadata save is debounced: wait until the server holds it (polled, never a fixed sleep)
        page.wait_for_function("document.getElementById('saved').textContent.startsWith('saved')")
        for _ in range(600):
            item = page.request.get(f"{srv.url}/api/label/items/photo0").json()
            if item.get("metadata", {}).get("creator") == "A. Person":
                break
            page.wait_for_timeout(50)
        assert item["metadata"]["title"] == "Two lamps", item
        page.wait_for_function("document.getElementById('saved').textContent.startsWith('saved')")
        page.screenshot(path=str(shots / "label_1_drawn.png"), full_page=True)

        page.reload()
        page.wait_for_selector("#overlay rect.crop-box >> nth=1")
        assert page.locator("#overlay rect.crop-box").count() == 2
        assert page.input_value("input[name=title]") == "Two lamps"
        assert page.input_value("input[name=k]") == "2"
        page.keyboard.press("n")
        page.wait_for_function("location.hash === '#photo1'")
        page.wait_for_function("document.getElementById('status').textContent.startsWith('photo1.jpg')")
        assert page.locator("#overlay rect.crop-box").count() == 0
        page.keyboard.press("p")
        page.wait_for_function("document.querySelectorAll('#overlay rect.crop-box').length === 2")
    ds = load_carousel(label_dir)
    item = ds["photo0"]
    assert item.k == 2 and len(item.boxes) == 2
    assert sorted(str(r) for r in item.ratios) == ["2:3", "3:2"]
    assert item.metadata.title == "Two lamps" and item.metadata.creator == "A. Person"
    for box, ratio in zip(item.boxes, item.ratios):
        assert abs(box.w / box.h - ratio.value) < 0.01

    # the saved folder is evaluated as it is: the drawn boxes are the ground truth scored against
    report = tmp_path / "eval"
    ev = evaluate_carousel(label_dir, "slices", out_dir=report)
    assert (report / "results.jsonl").is_file()
    by_name = {r.prediction.name: r for r in ev.results}
    assert sorted(by_name) == ["photo0"]  # only the labelled photo is scored
    r = by_name["photo0"]
    assert r.gt == tuple(item.boxes) and r.prediction.k == 2
    assert r.totals == tuple(image_kiou(r.prediction.boxes, item.boxes, threshold=t).total for t in KIOU_THRESHOLDS)
    oracle = [image_kiou(item.boxes, item.boxes, threshold=t).total for t in KIOU_THRESHOLDS]
    assert oracle == [2.0] * len(KIOU_THRESHOLDS)  # the labels score perfectly against themselves
    row = next(x for x in ev.rows if x.subset == "all")
    assert (row.n_images, row.n_boxes, row.k_exact, row.errors) == (1, 2, 1.0, 0)
    assert abs(row.kiou_50_95 - sum(sum(x.totals) / len(x.totals) for x in ev.results) / row.n_boxes) < 1e-9
