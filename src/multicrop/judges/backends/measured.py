"""The embedded, offline ``measured`` judge: rubric scores from pixel measurements.

It answers the same prompts as a VLM, with a typed score (no reply text), so it
is one more family in a panel and lets every command run without a network.
It reads the request's prompt kind and dimension, not the prompt text
(``reads_prompt`` is false: prompt edits do not re-run it), and it is
deterministic (the repetitions of a prompt are one call); see
:mod:`multicrop.judges.measures` for what is measured and which dimensions are
only proxies.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import measures
from ..types import JudgeReply, JudgeRequest
from .base import ImageMemo, JudgeBackend

__all__ = ["MeasuredBackend"]


class MeasuredBackend(JudgeBackend):
    """Offline judge from image measurements (deterministic; temperature is ignored).

    Options
    -------
    max_side : int
        Long side the image is reduced to before measuring.
    """

    name = "measured"
    description = ("offline: rubric scores from image measurements (subject sharpness, noise, exposure, placement, "
                   "colour); distinctiveness and emotional impact are proxies")
    version = measures.VERSION
    supports_json_schema = False
    supports_images = True
    needs_network = False
    deterministic = True
    reads_prompt = False
    #: Dimensions scored from documented proxies, not measures of the dimension (the report labels them).
    proxy_dimensions = measures.PROXY_DIMENSIONS

    @dataclasses.dataclass(frozen=True)
    class Options:
        max_side: int = 1024

        def __post_init__(self) -> None:
            if self.max_side < 32:
                raise ValueError(f"option 'max_side' must be >= 32, got {self.max_side}")

    def __init__(self, *, model: str = "measured-v1", **options: Any) -> None:
        super().__init__(model=model, **options)
        self._memo = ImageMemo(self._measure)

    @classmethod
    def key_options(cls, options) -> dict:
        return {"max_side": options.max_side}

    def _measure(self, request: JudgeRequest) -> measures.Measurements:
        return measures.measure(request.image.array(self.options.max_side))

    async def execute(self, request: JudgeRequest) -> JudgeReply:
        m = await self._memo.get(request)
        if request.dimension in measures.DIMENSION_IDS:
            score = measures.rubric_scores(m, scale=request.scale)[request.dimension]
        else:
            score = measures.holistic_score(m, scale=request.scale)
        values = m.to_dict()
        if request.dimension in measures.DIMENSION_IDS:
            used = measures.dimension_measures(request.dimension)
            reason = " ".join(f"{k}={values[k]:.2f}" for k in used)
            if request.dimension in measures.PROXY_DIMENSIONS:
                reason = f"PROXY (no pixel measure of {request.dimension}): {reason}"
        else:
            reason = " ".join(f"{k}={v:.2f}" for k, v in values.items())
        return JudgeReply(
            text=None,
            score=score,
            reason=reason,
            model=f"{self.model_id}",
            prompt_tokens=0,
            completion_tokens=0,
            cost_usd=0.0,
        )
