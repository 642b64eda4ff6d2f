"""Image embeddings from the shipped EfficientNet-Lite0 (ImageNet-1k, Apache-2.0).

A service below the judges wing: pixels in, a 1280-d vector out.  The
``embedding`` judge backend scores photos from these vectors with a fitted
head (:mod:`multicrop.judges.heads`), and ``eval judges`` uses them for its
embedding ridge-probe arm.

The network is the one file ``models/efficientnet_lite0.onnx`` (its card,
``efficientnet_lite0.toml``, gives its origin, licence and SHA-256; the file
is checked against it once per process by :func:`multicrop.models.onnx_session`).  A photo is stretched to
224 x 224 (the whole frame, as a judge sees it: nothing is cut away),
normalised as ``(rgb - 127) / 128``, and the embedding is the global average
of the last feature map, before the classifier.

Examples
--------
>>> import numpy as np
>>> vec = embed(np.full((300, 400, 3), 128, np.uint8), threads=1)
>>> vec.shape, vec.dtype
((1280,), dtype('float32'))
>>> EMBEDDING.dim, EMBEDDING.input_size
(1280, 224)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

from ..errors import InvalidParameterError
from ..models import model_card, onnx_session, thread_count

__all__ = ["EmbeddingModel", "EMBEDDING", "embed", "embed_batch", "classify", "preprocess", "default_threads"]


@dataclass(frozen=True)
class EmbeddingModel:
    """The shipped embedding network, as its model card describes it.

    Attributes
    ----------
    name : str
        Card name (``"efficientnet_lite0"``); enters every call key with ``sha256``.
    file : str
        File name inside :mod:`multicrop.models`.
    sha256 : str
        Expected SHA-256 of the file's bytes.
    dim : int
        Length of an embedding.
    input_size : int
        Side of the square network input.
    """

    name: str
    file: str
    sha256: str
    dim: int = 1280
    input_size: int = 224

    @property
    def id(self) -> str:
        """``name@sha256-prefix``: what a head records as the embedding it was fitted on."""
        return f"{self.name}@{self.sha256[:12]}"


def _card(name: str) -> EmbeddingModel:
    card = model_card(name)
    return EmbeddingModel(name=card.name, file=card.file, sha256=card.sha256, input_size=int(card.input_size[0]))


#: The shipped embedding model.
EMBEDDING = _card("efficientnet_lite0")

def default_threads() -> int:
    """Threads for onnxruntime: :func:`multicrop.models.thread_count` (``MULTICROP_THREADS`` or the CPUs)."""
    return thread_count()


def _session(threads: int):
    """The shared onnxruntime session of the shipped file (checked against its card's SHA-256 once)."""
    return onnx_session(EMBEDDING.name, threads=threads)


def preprocess(image: np.ndarray) -> np.ndarray:
    """The network input of one photo.

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
        RGB pixels.

    Returns
    -------
    ndarray of float32, shape (3, S, S)
        The photo stretched to ``S = EMBEDDING.input_size`` (bilinear, with
        PIL's box pre-reduction for large photos), ``(x - 127) / 128``.

    Raises
    ------
    InvalidParameterError
        If ``image`` is not an (H, W, 3) uint8 array.
    """
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        shape = getattr(image, "shape", None)
        raise InvalidParameterError(f"image must be an (H, W, 3) uint8 array, got shape {shape} "
                                    f"dtype {getattr(image, 'dtype', type(image).__name__)}")
    s = EMBEDDING.input_size
    if image.shape[:2] != (s, s):
        image = np.asarray(Image.fromarray(image).resize((s, s), Image.BILINEAR, reducing_gap=2.0))
    arr = (image.astype(np.float32) - 127.0) / 128.0
    return np.ascontiguousarray(arr.transpose(2, 0, 1))


def _run(batch: np.ndarray, threads: int) -> tuple[np.ndarray, np.ndarray]:
    sess = _session(threads)
    emb, logits = sess.run(None, {"pixels": batch})
    return emb.astype(np.float32), logits


def embed_batch(images: Sequence[np.ndarray], *, threads: int | None = None) -> np.ndarray:
    """Embeddings of several photos, shape (N, 1280) float32.

    Parameters
    ----------
    images : sequence of ndarray of uint8, shape (H, W, 3)
    threads : int, optional
        onnxruntime intra-op threads (default :func:`default_threads`).
    """
    threads = threads or default_threads()
    if not images:
        return np.zeros((0, EMBEDDING.dim), np.float32)
    batch = np.stack([preprocess(im) for im in images])
    return _run(batch, threads)[0]


def embed(image: np.ndarray, *, threads: int | None = None) -> np.ndarray:
    """The embedding of one photo, shape (1280,) float32 (see :func:`embed_batch`)."""
    return embed_batch([image], threads=threads)[0]


def classify(image: np.ndarray, *, threads: int | None = None, top: int = 5) -> list[int]:
    """The ``top`` ImageNet-1k class indices of a photo, most likely first (a check of the network)."""
    _, logits = _run(preprocess(image)[None], threads or default_threads())
    return [int(i) for i in np.argsort(logits[0])[::-1][:top]]
