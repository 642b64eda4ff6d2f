"""A user-supplied supervised aesthetic (IAA) model in ONNX, as a baseline arm of ``eval judges``.

Any ONNX file that takes one image batch ``(N, 3, S, S)`` and returns a
score per image: a single value (``(N,)`` or ``(N, 1)``), or a distribution
over ``K`` ordered score bins (``(N, K)``, e.g. NIMA's ten), whose mean bin
``sum(p_k * k)`` (``k = 1..K``, ``p`` normalised to sum to one) is the
score.  The user declares the input size and the normalisation; nothing is
downloaded and the file is the user's (its licence too).

Examples
--------
>>> NORMALISATIONS
('imagenet', 'unit', 'symmetric', 'raw')
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from ..errors import InvalidParameterError, ModelFileError

__all__ = ["NORMALISATIONS", "IaaModel"]

#: input normalisations: ImageNet mean/std on [0, 1]; [0, 1]; [-1, 1]; 0-255 as is
NORMALISATIONS = ("imagenet", "unit", "symmetric", "raw")
_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
_STD = np.array([0.229, 0.224, 0.225], np.float32)


class IaaModel:
    """An ONNX aesthetic model with a declared square input size.

    Parameters
    ----------
    path : path
        The ``.onnx`` file.
    input_size : int
        Side of the square input (photos are stretched to it).
    normalisation : {"imagenet", "unit", "symmetric", "raw"}
    output : int
        Which of the model's outputs is the score.
    threads : int
    """

    def __init__(self, path: str | Path, *, input_size: int, normalisation: str = "imagenet", output: int = 0,
                 threads: int = 2) -> None:
        from ..models.sessions import file_session

        if normalisation not in NORMALISATIONS:
            raise InvalidParameterError(f"normalisation must be one of {', '.join(NORMALISATIONS)}, "
                                        f"got {normalisation!r}")
        if not 16 <= int(input_size) <= 2048:
            raise InvalidParameterError(f"input_size must be in 16..2048, got {input_size}")
        self.path, self.input_size, self.normalisation, self.output = Path(path), int(input_size), normalisation, output
        try:
            self.session = file_session(self.path, threads=threads)
        except Exception as exc:  # onnxruntime raises its own types for missing or broken files
            raise ModelFileError(f"IAA model {self.path}: cannot be opened by onnxruntime ({exc})") from None
        outputs = self.session.get_outputs()
        if not 0 <= output < len(outputs):
            raise InvalidParameterError(f"output must be in 0..{len(outputs) - 1} for {self.path.name}, got {output}")
        self.input_name = self.session.get_inputs()[0].name

    def _prepare(self, image: np.ndarray) -> np.ndarray:
        s = self.input_size
        arr = np.asarray(Image.fromarray(image).resize((s, s), Image.BILINEAR, reducing_gap=2.0), np.float32)
        if self.normalisation == "imagenet":
            arr = (arr / 255.0 - _MEAN) / _STD
        elif self.normalisation == "unit":
            arr = arr / 255.0
        elif self.normalisation == "symmetric":
            arr = arr / 127.5 - 1.0
        return np.ascontiguousarray(arr.transpose(2, 0, 1), np.float32)

    def score(self, images: Sequence[np.ndarray]) -> np.ndarray:
        """One score per RGB uint8 image (see the module for how outputs become scores)."""
        if not images:
            return np.zeros(0)
        batch = np.stack([self._prepare(im) for im in images])
        out = np.asarray(self.session.run(None, {self.input_name: batch})[self.output], np.float64)
        out = out.reshape(len(images), -1)
        if out.shape[1] == 1:
            return out[:, 0]
        p = np.clip(out, 0, None)
        p = p / np.clip(p.sum(1, keepdims=True), 1e-12, None)
        return p @ np.arange(1, out.shape[1] + 1)
