"""The Carousel method registry: a contract every method meets, and each method's specifics."""

from __future__ import annotations

import numpy as np
import pytest

from multicrop.errors import InvalidParameterError, UnknownNameError
from multicrop.evaluation.carousel.methods import (
    METHODS,
    CarouselMethod,
    MethodResult,
    MissingDependencyError,
    best_fit_ratio,
    slice_regions,
)
from multicrop.evaluation.carousel.peers import locate_crop
from multicrop.geometry import Box
from multicrop.ratios import Ratio


@pytest.fixture(scope="module")
def scene():
    """Two coloured subjects on a noisy background, 360x240."""
    rng = np.random.default_rng(0)
    img = (rng.random((240, 360, 3)) * 40 + 70).astype(np.uint8)
    img[70:190, 40:110] = (230, 60, 40)
    img[60:180, 250:320] = (40, 200, 70)
    return img


def test_builtins_registered():
    assert {"partition", "topk", "direct", "direct-auto", "smartcrop", "vips", "slices"} <= set(METHODS.names())


def test_direct_auto_decides_k_itself(scene):
    # two subjects: asked for 5, direct writes the distinct ones after a wide view of both (direct-27);
    # direct-auto never reads k
    given = METHODS.create("direct").predict(scene, 5, "2:3,3:2")
    auto = METHODS.create("direct-auto").predict(scene, 5, "2:3,3:2")
    wide, *own = given.boxes
    assert len(own) == 2 and wide.x <= 40 and wide.x2 >= 320                # the wide view holds both subjects
    assert all(b.w < wide.w for b in own)
    assert auto.boxes == METHODS.create("direct-auto").predict(scene, 1, "2:3,3:2").boxes
    assert METHODS.create("direct").version != METHODS.create("partition").version


def test_unknown_method_suggests():
    with pytest.raises(UnknownNameError, match="did you mean 'slices'"):
        METHODS.create("slice")


@pytest.mark.parametrize("name", METHODS.names())
def test_contract(name, scene):
    method = METHODS.create(name)
    assert isinstance(method, CarouselMethod) and method.name == name and method.description
    res = method.predict(scene, 2, "2:3,3:2")
    assert isinstance(res, MethodResult)
    assert 1 <= len(res.boxes) <= 2
    assert res.failure is None or isinstance(res.failure, str)
    assert res.seconds >= 0
    for b in res.boxes:
        assert b.x >= -1e-6 and b.y >= -1e-6 and b.x2 <= 360 + 1e-6 and b.y2 <= 240 + 1e-6
        assert min(abs(b.aspect / r - 1) for r in (2 / 3, 3 / 2)) < 0.05
    assert MethodResult.from_dict(res.to_dict()) == res
    # every method takes its threads as a parameter; they never change the boxes
    assert METHODS.create(name, threads=1).predict(scene, 2, "2:3,3:2").boxes == res.boxes


@pytest.mark.parametrize("name", [n for n in METHODS.names() if METHODS.create(n).uses_partition])
def test_partition_methods_find_both_subjects(name, scene):
    res = METHODS.create(name).predict(scene, 2, "2:3,3:2")
    assert len(res.boxes) == 2
    centres = sorted(b.center[0] for b in res.boxes)
    assert centres[0] < 180 < centres[1]


def test_predict_validates():
    with pytest.raises(InvalidParameterError, match="k must be an integer >= 1"):
        METHODS.create("slices").predict(np.zeros((10, 10, 3), np.uint8), 0)
    with pytest.raises(InvalidParameterError, match="ratio"):
        METHODS.create("slices").predict(np.zeros((10, 10, 3), np.uint8), 1, "wide")


def test_slices_by_hand():
    res = METHODS.create("slices").predict(np.zeros((200, 600, 3), np.uint8), 2, "2:3,3:2")
    assert res.boxes == (Box(0, 0, 300, 200), Box(300, 0, 300, 200))
    res = METHODS.create("slices").predict(np.zeros((600, 200, 3), np.uint8), 3, "2:3,3:2")
    assert [b.corners() for b in res.boxes] == [
        pytest.approx((0, 100 / 3, 200, 200 - 100 / 3)),
        pytest.approx((0, 200 + 100 / 3, 200, 400 - 100 / 3)),
        pytest.approx((0, 400 + 100 / 3, 200, 600 - 100 / 3)),
    ]


def test_slices_reads_a_path(tmp_path):
    from PIL import Image

    Image.new("RGB", (300, 100)).save(tmp_path / "a.jpg")
    res = METHODS.create("slices").predict(tmp_path / "a.jpg", 2, "3:2")
    assert res.boxes == (Box(0, 0, 150, 100), Box(150, 0, 150, 100))


def test_helpers():
    assert best_fit_ratio(Box(0, 0, 100, 300), (Ratio(2, 3), Ratio(3, 2))) == Ratio(2, 3)
    assert best_fit_ratio(Box(0, 0, 300, 100), (Ratio(2, 3), Ratio(3, 2))) == Ratio(3, 2)
    assert slice_regions(100, 300, 3)[1] == Box(0, 100, 100, 100)
    region = np.arange(10 * 12 * 3, dtype=np.uint8).reshape(10, 12, 3)
    assert locate_crop(region, region[3:8, 2:9]) == (2, 3)


def test_missing_dependency_is_a_clear_error():
    class Needy(CarouselMethod):
        name = "needy"
        requires = ("no_such_module_for_multicrop",)
        extra = "peers"

    with pytest.raises(MissingDependencyError, match=r"pip install 'multicrop\[peers\]'"):
        Needy().predict(np.zeros((10, 10, 3), np.uint8), 1)


def test_third_party_method_plugs_in():
    class Whole(CarouselMethod):
        name = "test-whole"
        description = "the whole image, k times"

        def _predict(self, image, k, ratios):
            h, w = image.shape[:2]
            return [Box(0, 0, w, h)] * k, None

    METHODS.register(Whole)
    try:
        assert METHODS.create("test-whole").predict(np.zeros((4, 6, 3), np.uint8), 2).boxes == (Box(0, 0, 6, 4),) * 2
    finally:
        METHODS.unregister("test-whole")


def test_peers_run_on_the_partition_the_pipeline_uses(scene):
    import multicrop
    from multicrop.evaluation.carousel.methods import partition_regions

    ratios = (Ratio(2, 3), Ratio(3, 2))
    _, part = partition_regions(scene, 2, ratios)
    result = multicrop.crop_photo(scene, multicrop.CropConfig(k=2, ratios=ratios, strategy="partition"))
    assert part.regions == result.partition.regions
    assert part.orientation == result.partition.orientation


def test_peers_and_pipeline_share_one_saliency_function(scene, monkeypatch):
    # Saliency with faces is computed in one place: multicrop.crop.pipeline.analyse.
    import multicrop
    import multicrop.crop.pipeline as pipeline
    from multicrop.evaluation.carousel.methods import partition_regions

    calls = []
    real = pipeline.analyse
    monkeypatch.setattr(pipeline, "analyse", lambda image, config, **kw: calls.append(config.faces) or real(image, config, **kw))
    partition_regions(scene, 2, (Ratio(2, 3), Ratio(3, 2)))
    multicrop.crop_photo(scene, multicrop.CropConfig(k=2, saliency="spectral"))
    assert calls == [True, True]


@pytest.mark.parametrize("name", ["partition", "topk", "smartcrop", "vips"])
def test_pipeline_backed_versions_follow_the_pipeline(name, monkeypatch):
    # A resumed report must not mix results of an older scorer or partitioner.
    import multicrop.crop.pipeline as pipeline

    method = METHODS.create(name)
    before = method.version
    assert before == METHODS.create(name).version  # stable between calls
    monkeypatch.setattr(pipeline, "PARTITION_VERSION", "partition-test")
    assert method.version != before
    monkeypatch.undo()
    assert method.version == before
    assert METHODS.create("slices").version == "1"  # does not depend on the pipeline


def _first_copy(region, crop):
    """The exhaustive search locate_crop replaced: first exact copy, row by row."""
    h, w = crop.shape[:2]
    for top in range(region.shape[0] - h + 1):
        for left in range(region.shape[1] - w + 1):
            if np.array_equal(region[top: top + h, left: left + w], crop):
                return left, top
    return None


@pytest.mark.parametrize("seed", range(6))
def test_locate_crop_agrees_with_an_exhaustive_search(seed):
    rng = np.random.default_rng(seed)
    # few grey levels and a repeated tile: several exact copies, the first row-major one wins
    tile = rng.integers(0, 3, (4, 5, 3), dtype=np.uint8) * 100
    region = np.tile(tile, (5, 6, 1))
    region[rng.integers(0, 20), rng.integers(0, 30)] = 7
    h, w = rng.integers(2, 9), rng.integers(2, 12)
    top, left = rng.integers(0, 20 - h + 1), rng.integers(0, 30 - w + 1)
    crop = region[top: top + h, left: left + w].copy()
    assert locate_crop(region, crop) == _first_copy(region, crop)
    assert locate_crop(np.zeros((6, 9, 3), np.uint8), np.zeros((2, 3, 3), np.uint8)) == (0, 0)


def test_locate_crop_refuses_a_crop_not_in_the_region():
    from multicrop.errors import MulticropError

    region = np.zeros((10, 12, 3), np.uint8)
    with pytest.raises(MulticropError, match="not part of the region"):
        locate_crop(region, np.full((3, 3, 3), 9, np.uint8))
    with pytest.raises(MulticropError, match="cannot be part of"):
        locate_crop(region, np.zeros((11, 3, 3), np.uint8))
