"""Judges behind an OpenAI-compatible chat-completions endpoint.

One backend covers OpenAI, vLLM, Ollama, OpenRouter and the OpenAI-compatible
endpoints of Gemini and Mistral: set ``base_url`` and ``model``.  The API key
is read from the environment variable named by ``api_key_env`` when the
backend is created; it is never stored, logged or written to a record.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import os
import time

from ...errors import JudgeError, MissingCredentialsError
from ..types import JudgeReply, JudgeRequest
from .base import CallFailedError, JudgeBackend, TransientCallError

__all__ = ["OpenAICompatibleBackend"]

_STRUCTURED = ("json_schema", "json_object", "none")


def _retry_after(headers) -> float | None:
    """Seconds from ``Retry-After``/``retry-after-ms`` headers, if present."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(0.0, email.utils.mktime_tz(parsed) - time.time())


class OpenAICompatibleBackend(JudgeBackend):
    """Chat-completions judge (``openai.AsyncOpenAI``), images as base64 data URLs.

    Options
    -------
    base_url : str
        Endpoint, e.g. ``http://localhost:8000/v1`` (vLLM); empty for OpenAI.
    api_key_env : str
        Name of the environment variable holding the key; ``""`` for servers
        that need none (local vLLM, Ollama).
    max_side : int
        Images are downscaled to this long side before encoding.
    jpeg_quality : int
    max_tokens : int
    structured_output : {"json_schema", "json_object", "none"}
        How to ask for JSON; ``"none"`` relies on lenient parsing.
    price_input_per_mtok, price_output_per_mtok : float
        USD per million prompt / completion tokens, for the cost column.
    """

    name = "openai-compatible"
    description = "OpenAI-compatible chat completions (OpenAI, vLLM, Ollama, OpenRouter, Gemini, Mistral)"
    version = "1"
    supports_json_schema = True
    supports_images = True
    needs_network = True
    deterministic = False

    @dataclasses.dataclass(frozen=True)
    class Options:
        base_url: str = ""
        api_key_env: str = "OPENAI_API_KEY"
        max_side: int = 1024
        jpeg_quality: int = 90
        max_tokens: int = 200
        structured_output: str = "json_schema"
        price_input_per_mtok: float = 0.0
        price_output_per_mtok: float = 0.0

        def __post_init__(self) -> None:
            if self.structured_output not in _STRUCTURED:
                raise ValueError(f"option 'structured_output' must be one of {_STRUCTURED}, got {self.structured_output!r}")
            if self.max_side < 64:
                raise ValueError(f"option 'max_side' must be >= 64, got {self.max_side}")
            if not 1 <= self.jpeg_quality <= 100:
                raise ValueError(f"option 'jpeg_quality' must be in 1..100, got {self.jpeg_quality}")

    def __init__(self, model_id: str, options=None) -> None:
        super().__init__(model_id, options)
        env = self.options.api_key_env
        if env:
            if not os.environ.get(env):
                raise MissingCredentialsError(
                    f"backend {self.name!r} model {model_id!r} needs an API key: set the environment variable "
                    f"{env} (export {env}=...), or set api_key_env in the panel to the variable that holds it "
                    f'(api_key_env = "" for local servers without keys)'
                )
        self._client = None

    def key_fields(self) -> dict:
        o = self.options
        return {"max_side": o.max_side, "jpeg_quality": o.jpeg_quality, "structured_output": o.structured_output}

    def _get_client(self):
        if self._client is None:
            import openai

            env = self.options.api_key_env
            key = os.environ.get(env, "") if env else "unused"
            self._client = openai.AsyncOpenAI(
                api_key=key,
                base_url=self.options.base_url or None,
                max_retries=0,  # the runner retries, with its own backoff and records
            )
        return self._client

    async def execute(self, request: JudgeRequest) -> JudgeReply:
        import openai

        o = self.options
        url = request.image.cached_data_url(o.max_side, quality=o.jpeg_quality)
        if url is None:  # decode + encode off the event loop, once per image
            url = await asyncio.to_thread(request.image.data_url, o.max_side, quality=o.jpeg_quality)
        kwargs = {}
        if o.structured_output == "json_schema" and request.json_schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "score", "schema": request.json_schema, "strict": True},
            }
        elif o.structured_output == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        client = self._get_client()
        try:
            resp = await client.chat.completions.create(
                model=self.model_id,
                messages=[{
                    "role": "user",
                    "content": [
                        {"type": "text", "text": request.prompt},
                        {"type": "image_url", "image_url": {"url": url}},
                    ],
                }],
                temperature=request.temperature,
                max_tokens=o.max_tokens,
                timeout=request.timeout_s,
                **kwargs,
            )
        except openai.APITimeoutError:
            raise TransientCallError(f"timed out after {request.timeout_s:g} s") from None
        except openai.APIConnectionError as exc:
            raise TransientCallError(f"connection error: {exc}") from None
        except openai.AuthenticationError as exc:
            raise JudgeError(
                f"{self.name} {self.model_id!r}: authentication failed (HTTP {exc.status_code}); "
                f"check the key in ${o.api_key_env}"
            ) from None
        except openai.APIStatusError as exc:
            code = exc.status_code
            if code == 429 or code == 408 or code >= 500:
                raise TransientCallError(
                    f"HTTP {code}", retry_after=_retry_after(getattr(exc.response, "headers", None))
                ) from None
            raise CallFailedError(f"HTTP {code}: {str(exc)[:200]}") from None
        except (openai.APIResponseValidationError, ValueError, TypeError) as exc:
            raise CallFailedError(f"malformed response: {str(exc)[:200]}") from None
        choices = getattr(resp, "choices", None) or []
        text = None
        if choices and getattr(choices[0], "message", None) is not None:
            text = choices[0].message.content
        usage = getattr(resp, "usage", None)
        pt = getattr(usage, "prompt_tokens", None) if usage is not None else None
        ct = getattr(usage, "completion_tokens", None) if usage is not None else None
        cost = None
        if pt is not None and ct is not None:
            cost = (pt * o.price_input_per_mtok + ct * o.price_output_per_mtok) / 1e6
        return JudgeReply(text=text, model=getattr(resp, "model", None), prompt_tokens=pt,
                          completion_tokens=ct, cost_usd=cost)

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
