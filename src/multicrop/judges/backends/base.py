"""The judge backend interface (after ``llm``'s models) and option validation."""

from __future__ import annotations

import abc
import asyncio
import dataclasses
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ...errors import InvalidParameterError, JudgeError
from ...serialize import from_data
from ..clock import SYSTEM_CLOCK, Clock
from ..types import JudgeReply, JudgeRequest

__all__ = ["JudgeBackend", "TransientCallError", "ConnectionCallError", "CallFailedError", "ImageMemo",
           "validate_options"]


class TransientCallError(JudgeError):
    """A call failed in a way worth retrying (429, 5xx, timeout, connection).

    Attributes
    ----------
    retry_after : float or None
        Seconds the service asked us to wait (``Retry-After``), if any.
    """

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ConnectionCallError(TransientCallError):
    """The service could not be reached (refused, DNS, reset): retried like any
    transient failure, and counted by the runner, which stops a family after
    ``RunConfig.max_connection_errors`` of them in a row with no success."""


class CallFailedError(JudgeError):
    """A call failed permanently (e.g. 400); recorded as a failure, run continues."""


def validate_options(options_cls: type, options: Mapping[str, Any] | None, *, owner: str) -> Any:
    """Build ``options_cls`` (a frozen dataclass) from ``options`` through :func:`multicrop.serialize.from_data`.

    The one validator of backend options: unknown names, values of the wrong
    type (by the field's type hint; an ``int`` is a valid ``float``) and what
    the class's ``__post_init__`` refuses raise
    :class:`~multicrop.errors.InvalidParameterError` naming ``owner``, the
    option and what is allowed.

    Examples
    --------
    >>> @dataclasses.dataclass(frozen=True)
    ... class Opts:
    ...     max_side: int = 512
    >>> validate_options(Opts, {"max_side": 256}, owner="backend 'x'")
    Opts(max_side=256)
    >>> validate_options(Opts, {"max_side": "big"}, owner="backend 'x'")
    Traceback (most recent call last):
    ...
    multicrop.errors.InvalidParameterError: backend 'x'.max_side: expected int, got 'big'
    """
    try:
        return from_data(options_cls, dict(options or {}), where=owner)
    except ValueError as exc:
        if isinstance(exc, InvalidParameterError):
            raise
        raise InvalidParameterError(f"{owner}: {exc}") from None


class JudgeBackend(abc.ABC):
    """A family of aesthetic judges reachable one way (an API, an embedded model).

    Subclasses set the class attributes and implement :meth:`execute`; they
    are built as ``JUDGE_BACKENDS.create(name, model=..., **options)``.

    Attributes
    ----------
    name : str
        Registry name (``"openai-compatible"``, ``"measured"``).
    version : str
        Part of every call key; bump when the backend's requests change.
    supports_json_schema, supports_images, needs_network, deterministic, reads_prompt : bool
        Capability flags, read by generic code (never the name).  The runner
        reads ``supports_json_schema``; the plan reads ``deterministic`` (the
        same request always gets the same reply, so the repetitions of a
        prompt share one call key and the call is made once; the table still
        has one row per repetition, all with that call's score) and
        ``reads_prompt`` (false: the backend answers from the prompt kind and
        dimension only, so the prompt text, its template version and the
        rubric text do not enter its call keys and editing them re-runs
        nothing).  ``needs_network`` is documentation, shown by ``multicrop
        judges list``.
    Options : type
        Dataclass of accepted options (unknown options fail).
    model_id : str
        The model this instance calls.
    clock : Clock
        What a ``Retry-After`` date is measured against
        (:data:`~multicrop.judges.clock.SYSTEM_CLOCK`; a run given a clock
        sets it on its backends).
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    version: ClassVar[str] = "1"
    supports_json_schema: ClassVar[bool] = False
    supports_images: ClassVar[bool] = True
    needs_network: ClassVar[bool] = True
    deterministic: ClassVar[bool] = False
    reads_prompt: ClassVar[bool] = True
    clock: Clock = SYSTEM_CLOCK

    @dataclasses.dataclass(frozen=True)
    class Options:
        pass

    def __init__(self, *, model: str, **options: Any) -> None:
        if not isinstance(model, str) or not model:
            raise InvalidParameterError(f"{self.name}: model must be a non-empty string, got {model!r}")
        self.model_id = model
        self.options = validate_options(self.Options, options, owner=f"backend {self.name!r}")

    @classmethod
    def key_options(cls, options: Any) -> dict[str, Any]:
        """What of validated ``options`` decides the replies (and so enters every call key).

        A classmethod so a panel can compare families before any backend is
        created (no credentials needed).  Include everything that selects a
        different server or a different request; never secrets.
        """
        return {}

    @classmethod
    def identity(cls, model_id: str, options: Any) -> dict[str, Any]:
        """The backend part of a call key: name, version, model and :meth:`key_options`."""
        return {"backend": cls.name, "backend_version": cls.version, "model": model_id,
                "options": cls.key_options(options)}

    def prepare(self, *, concurrency: int) -> None:
        """Called once before a run with the number of calls in flight (size pools to it)."""

    @abc.abstractmethod
    async def execute(self, request: JudgeRequest) -> JudgeReply:
        """Run one request.

        Raises
        ------
        TransientCallError
            Worth retrying.
        CallFailedError
            This call failed for good; the run continues.
        JudgeError
            The backend is unusable (bad credentials...); the run stops.
        """

    async def aclose(self) -> None:
        """Release network clients."""


class ImageMemo:
    """One computation per image, shared by every call about it (a local backend's embedding or measures).

    The calls of one image (its dimensions and repeats) run concurrently: the
    first starts ``compute(request)`` on a worker thread and the others await
    the same future.  The ``size`` images asked for last are kept.

    Examples
    --------
    >>> calls = []
    >>> memo = ImageMemo(lambda request: calls.append(request) or len(calls))
    >>> class Image:
    ...     sha256 = "ab"
    >>> class Request:
    ...     image = Image()
    >>> async def twice():
    ...     return await asyncio.gather(memo.get(Request()), memo.get(Request()))
    >>> asyncio.run(twice()), len(calls)
    ([1, 1], 1)
    """

    def __init__(self, compute: Callable[[JudgeRequest], Any], *, size: int = 256) -> None:
        self._compute = compute
        self._size = size
        self._futures: OrderedDict[str, asyncio.Future] = OrderedDict()

    async def get(self, request: JudgeRequest) -> Any:
        """``compute(request)`` for ``request.image``, computed once."""
        key = request.image.sha256
        fut = self._futures.get(key)
        if fut is None:
            fut = asyncio.ensure_future(asyncio.to_thread(self._compute, request))
            self._futures[key] = fut
            while len(self._futures) > self._size:
                self._futures.popitem(last=False)
        return await asyncio.shield(fut)
