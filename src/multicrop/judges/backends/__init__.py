"""Judge backends: a registry of backend classes, like ``llm``'s models.

Built-ins register exactly as a third-party package would (entry-point group
``multicrop.judge_backends``, each entry a :class:`JudgeBackend` subclass).

Examples
--------
>>> sorted(JUDGE_BACKENDS.names())
['measured', 'openai-compatible']
>>> b = create_backend("measured", "measured-v1", {"max_side": 512})
>>> b.deterministic, b.needs_network
(True, False)
>>> create_backend("measured", "m", {"max_sid": 512})
Traceback (most recent call last):
...
multicrop.errors.InvalidParameterError: backend 'measured': unknown option(s) 'max_sid'; allowed: max_side
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...registry import Registry
from .base import CallFailedError, ConnectionCallError, JudgeBackend, TransientCallError, validate_options
from .measured import MeasuredBackend
from .openai_compatible import OpenAICompatibleBackend

__all__ = [
    "JUDGE_BACKENDS", "JudgeBackend", "TransientCallError", "ConnectionCallError", "CallFailedError", "validate_options",
    "register_backend", "create_backend", "MeasuredBackend", "OpenAICompatibleBackend",
]

JUDGE_BACKENDS: Registry[type[JudgeBackend]] = Registry(
    "judge backend", entry_point_group="multicrop.judge_backends"
)


def register_backend(cls: type[JudgeBackend]) -> type[JudgeBackend]:
    """Add a backend class under its ``name``; usable as a class decorator."""
    JUDGE_BACKENDS.register(cls.name, cls)
    return cls


def create_backend(name: str, model: str, options: Mapping[str, Any] | None = None) -> JudgeBackend:
    """Instantiate backend ``name`` for ``model`` with validated ``options``."""
    return JUDGE_BACKENDS.get(name)(model, options)


register_backend(OpenAICompatibleBackend)
register_backend(MeasuredBackend)
