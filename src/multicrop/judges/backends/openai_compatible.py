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
import json
import math
import os
import time
from typing import Any

from ...errors import JudgeError, MissingCredentialsError
from ..types import JudgeReply, JudgeRequest
from .base import CallFailedError, ConnectionCallError, JudgeBackend, TransientCallError

__all__ = ["OpenAICompatibleBackend", "retry_after_s", "capped_wait", "MAX_TOKENS"]

_STRUCTURED = ("json_schema", "json_object", "none")
_DEFAULT_ENDPOINT = "https://api.openai.com/v1"
_MAX_RAW = 65536  # longest unreadable body kept as the raw reply
#: Largest token count believed from a reply's ``usage`` (negative or larger counts are not stored).
MAX_TOKENS = 100_000_000


def _endpoint(base_url: str) -> str:
    """The server a ``base_url`` option means, as the ``openai`` client resolves it."""
    url = base_url or os.environ.get("OPENAI_BASE_URL") or _DEFAULT_ENDPOINT
    return url.strip().rstrip("/")


def _public_endpoint(base_url: str) -> str:
    """:func:`_endpoint` without ``user:password@``: what keys, records and logs may hold."""
    from ..store.runlog import strip_userinfo

    return strip_userinfo(_endpoint(base_url))


def _limits(n: int):
    """Keep-alive pool sized to the calls in flight (one connection each)."""
    import openai

    n = max(1, int(n))
    return type(openai.DEFAULT_CONNECTION_LIMITS)(max_connections=max(n, 100), max_keepalive_connections=n)


def retry_after_s(headers, *, now: float | None = None) -> float | None:
    """Seconds to wait from ``Retry-After`` / ``retry-after-ms`` headers, or None.

    ``Retry-After`` may be seconds or an HTTP date, measured from ``now``
    (seconds since the epoch; default the system clock's, a backend passes
    its :attr:`~multicrop.judges.backends.JudgeBackend.clock`'s);
    ``retry-after-ms`` wins.

    Examples
    --------
    >>> retry_after_s({"retry-after-ms": "250", "retry-after": "9"}), retry_after_s({})
    (0.25, None)
    >>> retry_after_s({"retry-after": "Thu, 01 Jan 2026 00:00:30 GMT"}, now=1767225600.0)
    30.0
    """
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
        seconds = float(value)
    except ValueError:
        try:
            parsed = email.utils.parsedate_tz(value)
            if parsed is None:
                return None
            seconds = email.utils.mktime_tz(parsed) - (time.time() if now is None else now)
        except (OverflowError, ValueError, TypeError):  # a date no clock can hold
            return math.inf
    if math.isnan(seconds):
        return None
    return max(0.0, seconds)


def capped_wait(retry_after: float | None, timeout_s: float) -> tuple[float | None, str]:
    """``retry_after`` capped by the call's timeout, and the words that say so (``""`` when not capped).

    A server that asks for a wait longer than a call may take (an HTTP date in
    2099, ``Retry-After: 1e9``) gets the call's timeout instead; the record and
    the log say what was asked and what was waited.

    Examples
    --------
    >>> capped_wait(3e9, 60.0)
    (60.0, ' (Retry-After asked 3e+09 s; waiting at most the call timeout, 60 s)')
    >>> capped_wait(2.0, 60.0)
    (2.0, '')
    """
    if retry_after is None or retry_after <= timeout_s:
        return retry_after, ""
    return timeout_s, f" (Retry-After asked {retry_after:.3g} s; waiting at most the call timeout, {timeout_s:g} s)"


class OpenAICompatibleBackend(JudgeBackend):
    """Chat-completions judge (``openai.AsyncOpenAI``), images as base64 data URLs.

    Options
    -------
    base_url : str
        Endpoint, e.g. ``http://localhost:8000/v1`` (vLLM); empty for OpenAI.
        User-info in it (``http://user:secret@host/v1``) is used for the
        requests but removed before the endpoint enters a call key or a log.
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
    #: 2: the endpoint (``base_url``) entered the call key.
    version = "2"
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
            if self.max_tokens < 1:
                raise ValueError(f"option 'max_tokens' must be >= 1, got {self.max_tokens}")
            for name in ("price_input_per_mtok", "price_output_per_mtok"):
                # checked when the panel is read: a call whose cost the store refuses would be paid again
                v = getattr(self, name)
                if not math.isfinite(v) or v < 0:
                    raise ValueError(f"option {name!r} must be a finite number >= 0 (USD per million tokens), "
                                     f"got {v!r}")

    def __init__(self, *, model: str, **options: Any) -> None:
        super().__init__(model=model, **options)
        env = self.options.api_key_env
        if env:
            if not os.environ.get(env):
                raise MissingCredentialsError(
                    f"backend {self.name!r} model {model!r} needs an API key: set the environment variable "
                    f"{env} (export {env}=...), or set api_key_env in the panel to the variable that holds it "
                    f'(api_key_env = "" for local servers without keys)'
                )
        self._client = None
        self._max_connections = 64

    def prepare(self, *, concurrency: int) -> None:
        self._max_connections = concurrency

    @classmethod
    def key_options(cls, options) -> dict:
        # The endpoint is a different server: the same model string served by a
        # local vLLM and by OpenRouter gives different replies (other weights,
        # quantisation, defaults), so it enters the key.
        # max_tokens can truncate a reply, so it changes replies too.
        # Credentials in the URL (http://user:secret@host/v1) never enter a key.
        return {"base_url": _public_endpoint(options.base_url), "max_side": options.max_side,
                "jpeg_quality": options.jpeg_quality, "structured_output": options.structured_output,
                "max_tokens": options.max_tokens}

    def _get_client(self):
        if self._client is None:
            import openai

            env = self.options.api_key_env
            key = os.environ.get(env, "") if env else "unused"
            self._client = openai.AsyncOpenAI(
                api_key=key,
                base_url=_endpoint(self.options.base_url),
                max_retries=0,  # the runner retries, with its own backoff and records
                http_client=openai.DefaultAsyncHttpxClient(limits=_limits(self._max_connections)),
            )
        return self._client

    async def execute(self, request: JudgeRequest) -> JudgeReply:
        o = self.options
        url = request.image.cached_data_url(o.max_side, quality=o.jpeg_quality)
        if url is None:  # decode + encode off the event loop, once per image
            url = await asyncio.to_thread(request.image.data_url, o.max_side, quality=o.jpeg_quality)
        body = await self._post(self._payload(request, url), timeout_s=request.timeout_s)
        return self._reply_from_body(body)

    def _payload(self, request: JudgeRequest, image_url: str) -> dict[str, Any]:
        """The chat-completions request body: the prompt, the image, and how to answer."""
        o = self.options
        payload: dict[str, Any] = {
            "model": self.model_id,
            "messages": [{
                "role": "user",
                "content": [
                    {"type": "text", "text": request.prompt},
                    {"type": "image_url", "image_url": {"url": image_url}},
                ],
            }],
            "temperature": request.temperature,
            "max_tokens": o.max_tokens,
        }
        if o.structured_output == "json_schema" and request.json_schema is not None:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "score", "schema": request.json_schema, "strict": True},
            }
        elif o.structured_output == "json_object":
            payload["response_format"] = {"type": "json_object"}
        return payload

    async def _post(self, payload: dict[str, Any], *, timeout_s: float) -> str:
        """POST ``payload``; the raw body of a 200, or the error the runner acts on.

        The client's documented request method with ``cast_to=str``: the same
        endpoint, authentication, timeout and typed errors as
        ``chat.completions.create``, but the body is sent as built (a plain
        dict needs none of the client's TypedDict transform) and the raw
        text comes back, so a 200 whose body breaks the protocol is still a
        reply, recorded with a parse error.
        """
        import openai

        client = self._get_client()
        try:
            return await client.post("/chat/completions", cast_to=str, body=payload, options={"timeout": timeout_s})
        except openai.APITimeoutError:
            raise TransientCallError(f"timed out after {timeout_s:g} s") from None
        except openai.APIConnectionError as exc:
            raise ConnectionCallError(f"connection error: {exc}") from None
        except openai.AuthenticationError as exc:
            raise JudgeError(
                f"{self.name} {self.model_id!r}: authentication failed (HTTP {exc.status_code}); "
                f"check the key in ${self.options.api_key_env}"
            ) from None
        except openai.APIStatusError as exc:
            code = exc.status_code
            if code == 429 or code == 408 or code >= 500:
                wait, note = capped_wait(retry_after_s(getattr(exc.response, "headers", None),
                                                       now=self.clock.now()), timeout_s)
                raise TransientCallError(f"HTTP {code}{note}", retry_after=wait) from None
            raise CallFailedError(f"HTTP {code}: {str(exc)[:200]}") from None

    def _reply_from_body(self, body: str) -> JudgeReply:
        """Read a chat-completions body; anything unexpected becomes ``JudgeReply.error``."""
        o = self.options
        try:
            doc = json.loads(body)
        except ValueError:
            return JudgeReply(text=body[:_MAX_RAW], error=f"HTTP 200 body is not JSON: {body[:80]!r}")
        except RecursionError:  # e.g. 200,000 nested arrays: a reply, recorded as unusable, not a crash
            return JudgeReply(text=body[:_MAX_RAW], error=f"HTTP 200 body nests JSON too deeply to read "
                                                           f"({len(body):,} characters): {body[:40]!r}")
        if not isinstance(doc, dict):
            return JudgeReply(text=body[:_MAX_RAW], error="HTTP 200 body is not a JSON object")
        model = doc.get("model") if isinstance(doc.get("model"), str) else None
        usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else {}
        pt, ct = (v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_TOKENS else None
                  for v in (usage.get("prompt_tokens"), usage.get("completion_tokens")))
        cost = None
        if pt is not None and ct is not None:
            cost = (pt * o.price_input_per_mtok + ct * o.price_output_per_mtok) / 1e6
        choices = doc.get("choices")
        message = choices[0].get("message") if (isinstance(choices, list) and choices
                                                 and isinstance(choices[0], dict)) else None
        content = message.get("content") if isinstance(message, dict) else None
        if content is not None and not isinstance(content, str):
            return JudgeReply(text=body[:_MAX_RAW], model=model, prompt_tokens=pt, completion_tokens=ct,
                              cost_usd=cost, error=f"choices[0].message.content is not text: {content!r:.80}")
        if message is None:
            return JudgeReply(text=body[:_MAX_RAW], model=model, prompt_tokens=pt, completion_tokens=ct,
                              cost_usd=cost, error="reply has no choices[0].message")
        return JudgeReply(text=content, model=model, prompt_tokens=pt, completion_tokens=ct, cost_usd=cost)

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
