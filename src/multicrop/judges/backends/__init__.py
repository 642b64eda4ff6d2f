"""Judge backends: a registry of backend classes, like ``llm``'s models.

Built-ins register exactly as a third-party package would (entry-point group
``multicrop.judge_backends``, each entry a :class:`JudgeBackend` subclass);
``JUDGE_BACKENDS.create(name, model=..., **options)`` builds one, validating
its options.

Examples
--------
>>> sorted(JUDGE_BACKENDS.names())
['embedding', 'measured', 'openai-compatible']
>>> b = JUDGE_BACKENDS.create("measured", model="measured-v1", max_side=512)
>>> b.deterministic, b.needs_network
(True, False)
>>> JUDGE_BACKENDS.create("measured", model="m", max_sid=512)
Traceback (most recent call last):
...
multicrop.errors.InvalidParameterError: backend 'measured': unknown key 'max_sid'; allowed: max_side
"""

from __future__ import annotations

from ...registry import Registry
from .base import CallFailedError, ConnectionCallError, JudgeBackend, TransientCallError, validate_options
from .embedding import EmbeddingBackend
from .measured import MeasuredBackend
from .openai_compatible import OpenAICompatibleBackend

__all__ = [
    "JUDGE_BACKENDS", "JudgeBackend", "TransientCallError", "ConnectionCallError", "CallFailedError", "validate_options",
    "MeasuredBackend", "OpenAICompatibleBackend", "EmbeddingBackend",
]

#: Registered judge backend classes (entry-point group ``multicrop.judge_backends``).
JUDGE_BACKENDS: Registry[type[JudgeBackend]] = Registry("judge-backend", entry_point_group="multicrop.judge_backends")
JUDGE_BACKENDS.register(OpenAICompatibleBackend)
JUDGE_BACKENDS.register(MeasuredBackend)
JUDGE_BACKENDS.register(EmbeddingBackend)
