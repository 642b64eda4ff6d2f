"""The seamless panorama's band placed by the person (validated like any box, 422 when misshapen), JPEG
slides cut losslessly on the block grid, and crops rendered from the full photo at a pixel width, cached."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
from fastapi.testclient import TestClient
from PIL import Image


def _upload(client, name, data):
    r = client.post("/api/photos", files=[("files", (name, data, "application/octet-stream"))])
    assert r.status_code == 200, r.text
    return r.json()["photos"][0]["id"]


def _pano(fmt, **save):
    rng = np.random.default_rng(5)
    img = rng.integers(0, 255, (600, 2400, 3), dtype=np.uint8)
    img[200:400, 1100:1250] = 255
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format=fmt, **save)
    return img, buf.getvalue()


def _rgb(data):
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(int)


def _luma(data):
    im = Image.open(io.BytesIO(data))
    im.draft("L", im.size)  # the decoder's own Y channel, no colour conversion
    return np.asarray(im.convert("L")).astype(int)


@pytest.fixture
def client(make_app):
    with TestClient(make_app()) as c:
        yield c


def _zip(client, pid, lay):
    r = client.post(f"/api/photos/{pid}/download",
                    json={"ratios": "4:5", "boxes": [{**b, "ratio": lay["ratio"]} for b in lay["boxes"]], "seamless": True})
    assert r.status_code == 200, r.text
    return r, zipfile.ZipFile(io.BytesIO(r.content))


def test_a_placed_band_gives_its_slides_and_jpeg_slides_are_cut_losslessly_on_the_block_grid(client):
    _, data = _pano("JPEG", quality=90, subsampling=2)  # 4:2:0: a 16x16 px block grid
    src, src_y = _rgb(data), _luma(data)
    pid = _upload(client, "pano.jpg", data)
    lay = client.post(f"/api/photos/{pid}/seamless", json={"ratios": "4:5"}).json()
    assert lay["lossless"] is True and lay["block"] == [16, 16] and lay["placed"] is False
    assert all(b["x"] % 16 == 0 and b["y"] % 16 == 0 for b in lay["boxes"])  # the suggestion is on the grid too
    # the band the person dragged and shrank: 3 slides of 4:5 at (101, 37), 3 x 300 wide
    band = {"x": 101.3, "y": 37, "w": 900, "h": 375, "ratio": "4:5"}
    r = client.post(f"/api/photos/{pid}/seamless", json={"ratios": "4:5", "slides": 3, "band": band})
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["placed"] is True and got["slides"] == 3 and got["ratio"] == "4:5"
    assert got["boxes"] == [{"x": 96 + i * 304, "y": 32, "w": 304, "h": 380} for i in range(3)]  # nearest grid
    assert got["band"] == {"x": 96, "y": 32, "w": 912, "h": 380}
    assert any("losslessly" in n for n in got["plain_notes"])
    resp, z = _zip(client, pid, got)
    assert resp.headers["X-Crops-Moved-Px"] == "0"
    rec = json.loads(z.read("pano.json"))
    assert [c["lossless"] for c in rec["crops"]] == [True] * 3
    assert [c["box"] for c in rec["crops"]] == got["boxes"]
    files = [z.read(f"pano_{i + 1}.jpg") for i in range(3)]
    # luma pixel for pixel: the slides hold the source's own DCT blocks
    assert np.array_equal(np.concatenate([_luma(f) for f in files], axis=1), src_y[32:412, 96:1008])
    # 4:2:0 colour is upsampled from neighbouring samples: in RGB the slides differ only within 8 px of their edges
    diff = np.abs(np.concatenate([_rgb(f) for f in files], axis=1) - src[32:412, 96:1008]).max(axis=2)
    assert diff.max() > 0
    inner = np.ones_like(diff, bool)
    inner[:8], inner[-8:] = False, False
    for i in range(3):
        inner[:, i * 304: i * 304 + 8], inner[:, (i + 1) * 304 - 8: (i + 1) * 304] = False, False
    assert diff[inner].max() == 0


def test_jpeg_slides_of_a_444_photo_are_its_band_pixel_for_pixel(client):
    _, data = _pano("JPEG", quality=90, subsampling=0)  # 4:4:4: an 8x8 px grid, no chroma upsampling
    pid = _upload(client, "pano.jpg", data)
    got = client.post(f"/api/photos/{pid}/seamless", json={"ratios": "4:5", "slides": 2,
                                                           "band": {"x": 50, "y": 21, "w": 800, "h": 500, "ratio": "4:5"}}).json()
    assert got["block"] == [8, 8] and got["boxes"][0] == {"x": 48, "y": 24, "w": 400, "h": 500}
    _, z = _zip(client, pid, got)
    joined = np.concatenate([_rgb(z.read(f"pano_{i + 1}.jpg")) for i in range(2)], axis=1)
    assert np.array_equal(joined, _rgb(data)[24:524, 48:848])


def test_a_band_off_the_grid_of_a_png_is_cut_where_it_is_pixel_for_pixel(client):
    img, data = _pano("PNG")
    pid = _upload(client, "pano.png", data)
    band = {"x": 101, "y": 37, "w": 1000, "h": 400, "ratio": "1:1"}  # 1:1 is of "instagram"
    got = client.post(f"/api/photos/{pid}/seamless", json={"ratios": "instagram", "slides": 2,
                                                           "band": {**band, "w": 800}}).json()
    assert got["lossless"] is False and got["block"] is None
    assert got["boxes"] == [{"x": 101, "y": 37, "w": 400, "h": 400}, {"x": 501, "y": 37, "w": 400, "h": 400}]
    _, z = _zip(client, pid, got)
    joined = np.concatenate([np.asarray(Image.open(io.BytesIO(z.read(f"pano_{i + 1}.png")))) for i in range(2)], axis=1)
    assert np.array_equal(joined, img[37:437, 101:901])


@pytest.mark.parametrize("body, status, says", [
    ({"slides": 3, "band": {"x": 0, "y": 0, "w": 900, "h": 500, "ratio": "4:5"}}, 422, "is not 3 slides of 4:5"),
    ({"slides": 3, "band": {"x": 2000, "y": 0, "w": 900, "h": 375, "ratio": "4:5"}}, 422, "must lie in the 2400x600"),
    ({"slides": 3, "band": {"x": 0, "y": 0, "w": -900, "h": 375, "ratio": "4:5"}}, 422, "has no area"),
    ({"band": {"x": 0, "y": 0, "w": 900, "h": 375, "ratio": "4:5"}}, 422, "a band needs its number of slides"),
    ({"slides": 3, "band": {"x": 0, "y": 0, "w": 900, "h": 375, "ratio": "2:3"}}, 422, "2:3 is not a ratio"),
    ({"slides": 3, "band": {"x": 0, "y": 0, "w": 900, "h": 375}}, 422, "band.ratio"),
    ({"slides": 3, "band": {"x": "left", "y": 0, "w": 900, "h": 375, "ratio": "4:5"}}, 422, "band.x"),
])
def test_a_misshapen_or_outside_band_is_refused_with_one_line(client, body, status, says):
    _, data = _pano("PNG")
    pid = _upload(client, "pano.png", data)
    r = client.post(f"/api/photos/{pid}/seamless", json={"ratios": "4:5", **body})
    assert r.status_code == status and says in r.json()["detail"], r.json()


def test_a_crop_is_rendered_from_the_full_photo_at_the_width_asked_and_cached(client, tmp_path):
    from multicrop.datasets.examples import example_photo

    ex = Image.open(example_photo(tmp_path / "ex.jpg"))  # 3600x1400, enlarged to a 7200x2800 photo
    big = ex.resize((ex.width * 2, ex.height * 2), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    big.save(buf, format="JPEG", quality=92)
    pid = _upload(client, "big.jpg", buf.getvalue())
    big = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    renders = client.app.state.renders
    q = {"x": 1800, "y": 400, "w": 1600, "h": 2000, "width": 1200}  # a phone card: 1200 px at 3x
    one = client.get(f"/api/photos/{pid}/render", params=q)
    assert one.status_code == 200 and one.headers["content-type"] == "image/jpeg"
    thumb = Image.open(io.BytesIO(one.content)).convert("RGB")
    assert thumb.size == (1200, 1500)
    assert client.get(f"/api/photos/{pid}/render", params=q).content == one.content and renders.renders == 1
    # the 1600 px display copy holds 356 px of this crop: a thumbnail cut from it is blurred up, this one is not
    display = Image.open(io.BytesIO(client.get(f"/api/photos/{pid}/image").content)).convert("RGB")
    s = display.width / 7200
    small = display.crop((round(1800 * s), round(400 * s), round(3400 * s), round(2400 * s))).resize(
        thumb.size, Image.Resampling.LANCZOS)
    full = big.crop((1800, 400, 3400, 2400)).resize(thumb.size, Image.Resampling.LANCZOS)
    err = lambda a: np.abs(np.asarray(a, float) - np.asarray(full, float)).mean()  # noqa: E731
    assert err(thumb) < 1.0 and 2 * err(thumb) < err(small), (err(thumb), err(small))
    wide = client.get(f"/api/photos/{pid}/render", params={**q, "width": 5000})  # never enlarged
    assert Image.open(io.BytesIO(wide.content)).size == (1600, 2000) and renders.renders == 2
    assert client.get(f"/api/photos/{pid}/render", params={**q, "width": 9}).status_code == 422


def test_a_placed_band_says_which_subject_a_slide_edge_runs_through(client):
    img = np.full((600, 2400, 3), 60, np.uint8)
    img[200:400, 700:900] = 250
    img[200:400, 1500:1700] = 250
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG")
    pid = _upload(client, "pano.png", buf.getvalue())

    def placed(seam):  # two 400 px slides of 1:1 meeting at x = seam
        r = client.post(f"/api/photos/{pid}/seamless", json={
            "ratios": "1:1", "slides": 2, "band": {"x": seam - 400, "y": 100, "w": 800, "h": 400, "ratio": "1:1"}})
        assert r.status_code == 200, r.text
        return r.json()

    subs = [s["box"] for s in client.post(f"/api/photos/{pid}/seamless", json={"ratios": "1:1"}).json()["subjects"]]
    assert subs
    x, _, w, _ = subs[0]
    across = placed(round(x + w / 2))  # the seam through the middle of the first subject
    assert 0 in across["sliced"]
    assert any(n.startswith("A slide edge runs through the") for n in across["plain_notes"])
    clear = next(v for v in range(420, 1980, 10)  # a seam that misses every subject
                 if all(not (b[0] - 0.05 * b[2] < v < b[0] + 1.05 * b[2]) for b in subs))
    beside = placed(clear)
    assert beside["sliced"] == [] and not any("slide edge" in n for n in beside["plain_notes"])
    assert any("narrower than 1080 px" in n for n in beside["plain_notes"])  # 400 px slides
