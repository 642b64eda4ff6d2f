"""The offline ``embedding`` judge: scores from the shipped image embedding and a fitted head.

Each photo is embedded once (EfficientNet-Lite0, :mod:`multicrop.embeddings`)
and every prompt is answered from that one vector: the holistic prompt by the
head's ``overall`` target, a dimension prompt by the head's target of that
dimension, on the prompt's scale (a linear map from the ratings' scale).
A dimension the head has no target for is answered with an error (recorded
as a parse error, NaN in the table): a head fitted on overall scores only
knows nothing of composition, and no other target stands in for it.

The judge is deterministic and reads no prompt text (``reads_prompt`` is
false): its call keys hold the embedding's id and the SHA-256 of the head
file, so refitting the head re-scores, while a renamed copy of it, a prompt
edit or another repetition count re-runs nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from pathlib import Path
from typing import Any

from ...errors import InvalidParameterError
from ...io import shown
from ..heads import Head, head_sha256, load_head, rescale
from ..types import JudgeReply, JudgeRequest
from .base import ImageMemo, JudgeBackend

__all__ = ["EmbeddingBackend", "EMBEDDING_MODEL"]

#: The model string of the embedding judge (the shipped network's card name).
EMBEDDING_MODEL = "efficientnet_lite0"


@functools.lru_cache(maxsize=16)
def _head(path: str, mtime_ns: int, size: int) -> tuple[Head, str]:
    from ...embeddings import EMBEDDING

    return load_head(path, embedding=EMBEDDING.id, dim=EMBEDDING.dim), head_sha256(path)


def _read_head(path: str) -> tuple[Head, str]:
    try:
        st = os.stat(path)
    except OSError as exc:
        raise InvalidParameterError(f"backend 'embedding': head file {shown(path)} cannot be read "
                                    f"({exc.strerror or exc}); fit one with `multicrop judge fit`") from None
    return _head(str(Path(path).resolve()), st.st_mtime_ns, st.st_size)


class EmbeddingBackend(JudgeBackend):
    """Offline judge: a ridge head over the shipped EfficientNet-Lite0 embedding.

    Options
    -------
    head : str
        Path of a head file written by ``multicrop judge fit`` (required).
    max_side : int
        Long side the photo is decoded at before it is stretched to the
        network's 224 x 224 (a reduced JPEG decode; it changes the pixels, so
        it is part of the call key).
    threads : int
        onnxruntime threads (0: ``MULTICROP_THREADS`` or the CPUs, at most 4);
        not part of the call key.
    """

    name = "embedding"
    description = ("offline: a head fitted on your own ratings (`multicrop judge fit`) over the shipped "
                   "EfficientNet-Lite0 embedding (ImageNet-1k, Apache-2.0)")
    version = "1"
    supports_json_schema = False
    supports_images = True
    needs_network = False
    deterministic = True
    reads_prompt = False

    @dataclasses.dataclass(frozen=True)
    class Options:
        head: str = ""
        max_side: int = 448
        threads: int = 0

        def __post_init__(self) -> None:
            if not self.head:
                raise ValueError("option 'head' must name a head file; fit one with "
                                 "`multicrop judge fit RATINGS --images DIR -o head.json`")
            if self.max_side < 224:
                raise ValueError(f"option 'max_side' must be >= 224, got {self.max_side}")
            if self.threads < 0:
                raise ValueError(f"option 'threads' must be >= 0, got {self.threads}")

    def __init__(self, *, model: str = EMBEDDING_MODEL, **options: Any) -> None:
        super().__init__(model=model, **options)
        self.head, self.head_sha256 = _read_head(self.options.head)
        self._memo = ImageMemo(self._embed)

    @classmethod
    def key_options(cls, options) -> dict:
        from ...embeddings import EMBEDDING

        _, sha = _read_head(options.head)
        return {"embedding": EMBEDDING.id, "head_sha256": sha, "max_side": options.max_side}

    def _embed(self, request: JudgeRequest):
        from ...embeddings import embed

        return embed(request.image.array(self.options.max_side), threads=self.options.threads or None)

    async def execute(self, request: JudgeRequest) -> JudgeReply:
        vec = await self._memo.get(request)
        target = self.head.target(request.dimension)
        if target is None:
            return JudgeReply(text=None, model=self.model_id, prompt_tokens=0, completion_tokens=0, cost_usd=0.0,
                              error=f"the head has no {request.dimension!r} target (it has "
                                    f"{', '.join(self.head.names())}); fit one from ratings with that attribute")
        raw = float(target.predict(vec))
        score = rescale(raw, target.scale, request.scale)
        return JudgeReply(text=None, score=score, model=self.model_id, prompt_tokens=0, completion_tokens=0,
                          cost_usd=0.0,
                          reason=f"head {self.head_sha256[7:19]} {target.name}: {raw:.3f} on "
                                 f"{target.scale[0]:g}-{target.scale[1]:g} (out-of-fold rho "
                                 f"{target.oof_spearman:.2f}, n={target.n})")
