"""The model cache: keyed by the pixels and the models only, lossless, and used by the scoreboard's run."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from PIL import Image

from multicrop.crop.analysis import analyse, analysis_from, run_models
from multicrop.crop.config import CropConfig
from multicrop.detectors.types import Detection
from multicrop.errors import InputFileError, InvalidParameterError
from multicrop.evaluation.scoreboard import ModelCache, models_key, run_scoreboard
from multicrop.evaluation.scoreboard import cache as cache_mod
from multicrop.evaluation.scoreboard.cache import decode_models, encode_models
from multicrop.geometry import Box


@pytest.fixture
def image():
    img = np.full((48, 64, 3), 30, np.uint8)
    img[10:30, 30:50] = 220
    return img


def test_key_ignores_selection_and_subject_settings(image):
    cfg = CropConfig()
    key = models_key(image, cfg)
    changed = [
        CropConfig(k=5), CropConfig(k="auto"), CropConfig(strategy="partition"), CropConfig(ratios="1:1"),
        CropConfig(selection=cfg.selection.set(objective__overlap_weight=cfg.selection.objective.overlap_weight * 2)),
        CropConfig(selection=cfg.selection.set(objective__min_gain=cfg.selection.objective.min_gain + 0.1)),
        CropConfig(subjects=cfg.subjects.set(groups__overlap=0.3)),
        CropConfig(weights=dataclasses.replace(cfg.weights, density=cfg.weights.density + 0.1)),
    ]
    for other in changed:
        assert other.to_dict() != cfg.to_dict()  # the change is real
        assert models_key(image, other) == key


def test_key_follows_the_models_and_the_pixels(image):
    key = models_key(image, CropConfig())
    assert models_key(image, CropConfig(saliency="spectral")) != key
    assert models_key(image, CropConfig(detectors=("nanodet",))) != key
    assert models_key(image, CropConfig(faces=False)) != key  # YuNet is not run
    other = image.copy()
    other[0, 0, 0] += 1
    assert models_key(other, CropConfig()) != key
    assert models_key(image[:, :48], CropConfig()) != key


def test_saliency_version_is_in_the_key(image, monkeypatch):
    from multicrop.saliency import SALIENCY

    key = models_key(image, CropConfig(saliency="spectral"))
    entry = SALIENCY.get("spectral")
    monkeypatch.setattr(entry, "version", str(entry.version) + "-next", raising=False)
    assert models_key(image, CropConfig(saliency="spectral")) != key


def test_encode_decode_is_lossless():
    sal = np.random.default_rng(0).random((6, 8)).astype(np.float32)
    mask = np.random.default_rng(1).random((6, 8)).astype(np.float32)
    kp = np.arange(99, dtype=np.float32).reshape(33, 3) / 7
    dets = (Detection("person", "person", 1, Box(0.5, 1.25, 3.0, 4.0), 0.8123456789, keypoints=kp, mask=mask,
                      detector="nanodet"),
            Detection("face", "face", -1, Box(1, 1, 2, 2), 0.9, detector="yunet"))
    sal2, dets2 = decode_models(encode_models(sal, dets))
    assert sal2.dtype == np.float32 and np.array_equal(sal2, sal)
    assert dets2 == dets
    assert np.array_equal(dets2[0].mask, mask) and np.array_equal(dets2[0].keypoints, kp)
    assert dets2[1].mask is None and dets2[1].keypoints is None and dets2[0].score == 0.8123456789


def test_cache_runs_the_models_once_and_gives_back_the_same_analysis(image, tmp_path):
    cfg = CropConfig(saliency="spectral", detectors=())
    cache = ModelCache(tmp_path)
    first = cache.models(image, cfg)
    second = ModelCache(tmp_path)
    again = second.models(image, dataclasses.replace(cfg, k=4))
    assert (cache.misses, cache.hits, second.misses, second.hits) == (1, 0, 0, 1)
    assert np.array_equal(first[0], again[0]) and first[1] == again[1] == ()
    a = analysis_from(image, *again, cfg)
    b = analyse(image, cfg)
    assert a.key == b.key and np.array_equal(a.saliency, b.saliency) and a.subjects == b.subjects


def test_a_torn_cache_file_is_run_again(image, tmp_path):
    cfg = CropConfig(saliency="spectral", detectors=())
    cache = ModelCache(tmp_path)
    p = cache.path(models_key(image, cfg))
    p.parent.mkdir(parents=True)
    p.write_bytes(b"not an npz")
    sal, _ = cache.models(image, cfg)
    assert cache.misses == 1 and np.array_equal(sal, run_models(image, cfg)[0])
    assert ModelCache(tmp_path).models(image, cfg)[0].shape == sal.shape


def _write_outlined(root, photos):
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    rng = np.random.default_rng(0)
    for pid, (w, h, objects) in photos.items():
        img = (rng.random((h, w, 3)) * 30 + 20).astype(np.uint8)
        lines = []
        for cls, (x0, y0, x1, y1) in objects:
            img[y0:y1, x0:x1] = 220
            lines.append(f"{cls} " + " ".join(f"{v:.6f}" for v in
                                              (x0 / w, y0 / h, x1 / w, y0 / h, x1 / w, y1 / h, x0 / w, y1 / h)))
        Image.fromarray(img).save(root / "images" / f"{pid}.png")
        (root / "labels" / f"{pid}.txt").write_text("\n".join(lines) + "\n")
    return root


def test_run_scoreboard_on_a_tiny_outlined_set_warm_and_cold_agree(tmp_path, monkeypatch):
    photos = {"two": (240, 160, [(1, (20, 40, 80, 140)), (18, (150, 60, 220, 130))]),
              "single": (200, 150, [(1, (80, 30, 130, 140))])}
    root = _write_outlined(tmp_path / "set", photos)
    calls = []

    def fake_models(image, config=None, *, threads=None):  # fast models: spectral saliency, no detector
        calls.append(image.shape)
        return run_models(image, CropConfig(saliency="spectral", detectors=()))

    monkeypatch.setattr(cache_mod, "run_models", fake_models)
    cold = run_scoreboard(coco=root, only=("coco",), cache=tmp_path / "cache")
    warm = run_scoreboard(coco=root, only=("coco",), cache=tmp_path / "cache")
    assert len(calls) == 2 and (cold.misses, warm.hits, warm.misses) == (2, 2, 0)
    assert set(cold.photos) == {"coco-multi k=auto", "coco-multi k=3", "coco-multi instagram k=3",
                                "coco-multi instagram k=auto", "coco-other k=auto",
                                "coco-other k=auto with something outlined"}
    # the Instagram row crops at one of its ratios for every crop
    insta = [b[2] / b[3] for b in cold.boxes["coco-multi instagram k=3"]["two"]]
    assert len({round(r, 1) for r in insta}) == 1 and round(insta[0], 1) in (0.8, 1.0, 1.9)
    assert list(cold.photos["coco-multi k=auto"]) == ["two"] and list(cold.photos["coco-other k=auto"]) == ["single"]
    # the single person is outlined: the photo counts among those with something to hold, with the same counts
    assert cold.photos["coco-other k=auto with something outlined"] == cold.photos["coco-other k=auto"]
    assert cold.photos == warm.photos and cold.boxes == warm.boxes
    c = cold.photos["coco-multi k=3"]["two"]
    assert c["photos"] == 1 and c["prominent"] == 2 and c["crops"] == len(cold.boxes["coco-multi k=3"]["two"]) >= 1


def test_run_scoreboard_tries_changed_settings_in_every_row_and_refuses_unknown_ones(tmp_path, monkeypatch):
    photos = {"three": (300, 160, [(1, (10, 40, 60, 140)), (18, (120, 50, 170, 130)), (1, (230, 30, 280, 150))])}
    root = _write_outlined(tmp_path / "set", photos)
    monkeypatch.setattr(cache_mod, "run_models",
                        lambda image, config=None, *, threads=None: run_models(
                            image, CropConfig(saliency="spectral", detectors=())))
    plain = run_scoreboard(coco=root, only=("coco",), cache=tmp_path / "cache")
    square = run_scoreboard(coco=root, only=("coco",), cache=tmp_path / "cache", changes={"ratios": "1:1"})
    for row in ("coco-multi k=auto", "coco-multi k=3"):
        assert all(abs(w - h) <= 1 for _, _, w, h in square.boxes[row]["three"])
        assert all(abs(w / h - 1.5) < 0.02 or abs(h / w - 1.5) < 0.02 for _, _, w, h in plain.boxes[row]["three"])
    with pytest.raises(InvalidParameterError, match="unknown setting 'nope'"):
        run_scoreboard(coco=root, only=("coco",), cache=tmp_path / "cache", changes={"selection__nope": 1})
    with pytest.raises(InvalidParameterError, match="must be a number"):
        run_scoreboard(coco=root, only=("coco",), cache=tmp_path / "cache",
                       changes={"selection__details__salient": "x"})


def test_run_scoreboard_rates_candidates_with_a_head_and_refuses_a_bad_one(tmp_path, monkeypatch):
    from multicrop.embeddings import EMBEDDING
    from multicrop.judges.heads import Head, HeadTarget, save_head

    photos = {"three": (300, 160, [(1, (10, 40, 60, 140)), (18, (120, 50, 170, 130)), (1, (230, 30, 280, 150))])}
    root = _write_outlined(tmp_path / "set", photos)
    monkeypatch.setattr(cache_mod, "run_models",
                        lambda image, config=None, *, threads=None: run_models(
                            image, CropConfig(saliency="spectral", detectors=())))
    seen = []
    import multicrop.crop.pipeline as pipeline_mod
    real = pipeline_mod.crop_photo

    def spy(*args, scorer=None, **kw):
        seen.append(None if scorer is None else scorer.name)
        return real(*args, scorer=scorer, **kw)

    monkeypatch.setattr(pipeline_mod, "crop_photo", spy)
    coef = np.zeros(EMBEDDING.dim, np.float32)
    coef[3] = 1.0
    head = tmp_path / "head.json"
    save_head(Head(EMBEDDING.id, (HeadTarget("overall", "score", (-50.0, 50.0), coef, 0.0, 1.0, 10, 0.0),)), head)
    run = run_scoreboard(coco=root, only=("coco",), cache=tmp_path / "cache", learned=(head, 1.0, 4))
    assert seen == ["learned"] * 4
    assert set(run.boxes) == {"coco-multi k=auto", "coco-multi k=3", "coco-multi instagram k=3",
                              "coco-multi instagram k=auto"}
    with pytest.raises(InputFileError, match="nope.json: no such file"):
        run_scoreboard(coco=root, only=("coco",), cache=tmp_path / "cache", learned=(tmp_path / "nope.json", 1.0, 4))


def test_a_variant_changes_a_field_of_any_nested_settings_object_and_refuses_unknown_ones():
    from multicrop.crop.stage_config import CompositionWeights
    from multicrop.evaluation.scoreboard.run import Variant

    cfg = Variant("x", changes=(("weights__fill_target", 0.6), ("weights__framing", 1.0))).config()
    plain = CompositionWeights()
    assert (cfg.weights.fill_target, cfg.weights.framing) == (0.6, 1.0)
    assert cfg.weights.fill_sigma == plain.fill_sigma and cfg.weights.foreign == plain.foreign
    assert Variant("x").config().weights == plain
    with pytest.raises(InvalidParameterError, match="unknown setting 'nope'"):
        Variant("x", changes=(("weights__nope", 1.0),)).config()
    with pytest.raises(InvalidParameterError, match="fill_target"):
        Variant("x", changes=(("weights__fill_target", 2.0),)).config()


def test_a_run_wide_change_adds_to_each_rows_own_settings(tmp_path):
    # --set (run_scoreboard's changes) goes into every row; the Instagram row keeps its ratios beside it
    from multicrop.evaluation.scoreboard import run as run_mod
    from multicrop.ratios import Ratio

    root = _write_outlined(tmp_path / "set", {"two": (240, 160, [(1, (20, 40, 80, 140)), (18, (150, 60, 220, 130))])})
    tasks = run_mod._tasks(("coco",), root, None, tmp_path, 0, None, None,
                           changes=(("selection__close_ups__portraits", False),))
    (fn, (photo, rules, multi, other, cache_root)), = tasks
    cfgs = {v.row: v.config() for v in multi + other}
    assert all(not c.selection.close_ups.portraits for c in cfgs.values())
    insta = cfgs["coco-multi instagram k=3"]
    assert insta.one_ratio and insta.ratios == (Ratio(4, 5), Ratio(1, 1), Ratio(1.91, 1)) and insta.k == 3
    auto = cfgs["coco-multi instagram k=auto"]
    assert auto.one_ratio and auto.ratios == insta.ratios and auto.k == "auto"
    assert cfgs["coco-multi k=3"].ratios == (Ratio(2, 3), Ratio(3, 2)) and not cfgs["coco-multi k=3"].one_ratio
