"""A user-supplied ONNX aesthetic model (the eval judges baseline), run on the shipped network as a stand-in."""

from importlib import resources

import numpy as np
import onnxruntime as ort
import pytest

from multicrop.embeddings import EMBEDDING, preprocess
from multicrop.embeddings.iaa import IaaModel
from multicrop.errors import InvalidParameterError, ModelFileError


@pytest.fixture(scope="module")
def onnx_path():
    with resources.as_file(resources.files("multicrop.models").joinpath(EMBEDDING.file)) as p:
        yield p


def test_a_distribution_output_scores_as_its_mean_bin(onnx_path):
    rng = np.random.default_rng(0)
    ims = [(rng.random((50, 70, 3)) * 255).astype(np.uint8) for _ in range(3)]
    # the embedding output (1280 non-negative values) read as a 1280-bin distribution
    model = IaaModel(onnx_path, input_size=224, normalisation="symmetric", output=0, threads=1)
    got = model.score(ims)
    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    x = np.stack([np.asarray(model._prepare(im)) for im in ims])
    emb = sess.run(None, {"pixels": x})[0].astype(np.float64)
    p = emb / emb.sum(1, keepdims=True)
    np.testing.assert_allclose(got, p @ np.arange(1, 1281), rtol=1e-6)
    # symmetric normalisation is (x / 127.5 - 1), close to the shipped (x - 127) / 128
    np.testing.assert_allclose(x[0], preprocess(ims[0]), atol=0.01)
    assert model.score([]).shape == (0,)


def test_bad_models_and_settings_are_refused(onnx_path, tmp_path):
    with pytest.raises(InvalidParameterError, match="normalisation must be one of"):
        IaaModel(onnx_path, input_size=224, normalisation="zscore")
    with pytest.raises(InvalidParameterError, match=r"output must be in 0\.\.1"):
        IaaModel(onnx_path, input_size=224, output=2)
    with pytest.raises(InvalidParameterError, match="input_size"):
        IaaModel(onnx_path, input_size=4)
    bad = tmp_path / "m.onnx"
    bad.write_bytes(b"not onnx")
    with pytest.raises(ModelFileError, match="cannot be opened"):
        IaaModel(bad, input_size=224)
