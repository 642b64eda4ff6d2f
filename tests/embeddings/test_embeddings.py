"""The shipped EfficientNet-Lite0: its file, its classes on the bundled photos, its input handling."""

import hashlib
from importlib import resources

import numpy as np
import pytest

from multicrop import embeddings
from multicrop.datasets.photos import sample_photo
from multicrop.errors import InvalidParameterError, ModelFileError


def test_the_shipped_file_matches_its_card():
    card = embeddings.EMBEDDING
    data = resources.files("multicrop.models").joinpath(card.file).read_bytes()
    assert hashlib.sha256(data).hexdigest() == card.sha256
    assert card.id == f"efficientnet_lite0@{card.sha256[:12]}" and (card.dim, card.input_size) == (1280, 224)


@pytest.mark.parametrize("photo, classes", [
    ("chelsea", range(281, 286)),  # ImageNet: tabby, tiger cat, Persian, Siamese, Egyptian cat
    ("coffee", range(967, 968)),  # ImageNet 967: espresso
])
def test_the_bundled_photos_get_their_imagenet_classes(photo, classes):
    top = embeddings.classify(sample_photo(photo), threads=1)
    assert top[0] in classes


def test_embeddings_are_deterministic_pooled_relu6_features_that_tell_photos_apart():
    cat, coffee = sample_photo("chelsea"), sample_photo("coffee")
    a = embeddings.embed(cat, threads=1)
    batch = embeddings.embed_batch([cat, coffee], threads=1)
    assert a.shape == (1280,) and a.dtype == np.float32
    np.testing.assert_allclose(batch[0], a, rtol=1e-5, atol=1e-5)
    assert (batch >= 0).all() and (batch <= 6).all()  # the mean of ReLU6 activations
    cos = float(batch[0] @ batch[1] / np.linalg.norm(batch[0]) / np.linalg.norm(batch[1]))
    flipped = embeddings.embed(np.ascontiguousarray(cat[:, ::-1]), threads=1)
    cos_flip = float(a @ flipped / np.linalg.norm(a) / np.linalg.norm(flipped))
    assert cos_flip > 0.95 > cos  # a mirrored cat is near the cat, the coffee is not


def test_preprocess_stretches_to_224_and_normalises():
    x = embeddings.preprocess(np.full((100, 300, 3), 255, np.uint8))
    assert x.shape == (3, 224, 224) and x.dtype == np.float32
    np.testing.assert_allclose(x, (255 - 127) / 128)
    with pytest.raises(InvalidParameterError, match=r"\(H, W, 3\) uint8"):
        embeddings.preprocess(np.zeros((10, 10), np.uint8))
    assert embeddings.embed_batch([]).shape == (0, 1280)


def test_a_replaced_model_file_is_refused(tmp_path):
    fake = tmp_path / "efficientnet_lite0.onnx"
    fake.write_bytes(b"not the network")
    from multicrop.models import verify_file

    with pytest.raises(ModelFileError, match="corrupt or was replaced"):
        verify_file(fake, embeddings.EMBEDDING.sha256)
