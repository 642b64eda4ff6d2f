"""Optimised graphs saved once: onnxruntime's "offline" optimisation of the shipped models.

onnxruntime optimises a model's graph each time it builds a session (constant
folding, fused operators and, at ``ORT_ENABLE_ALL``, a memory layout for the
CPU's vector width): 0.26 s of CPU for the four models of ``multicrop crop``.
:func:`build_session` saves the optimised graph of a shipped model the first
time and loads it back, optimisation off, ever after (0.11 s for the four).
The file lives at ``<user cache>/multicrop/onnx/<sha256>-ort<version>-<cpu>.onnx``
(:func:`saved_graph`), or under ``MULTICROP_ONNX_CACHE`` (empty: nothing saved
or read).  The fully optimised graph suits only this CPU, so the name carries a
hash of its flags (:func:`cpu_key`) besides the model's SHA-256 and
onnxruntime's version; graphs of other onnxruntime versions are removed when a
new one is saved; a file that fails to load is removed and the session built
from the shipped model.  The outputs are bit for bit those of a session built
from the shipped model (``tests/models/test_models.py``); a whole
``multicrop crop`` needs 0.09 of the floor's CPU time less (docs/speed.md).  The four
files take 32 MB.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["CACHE_VARIABLE", "build_session", "saved_graph", "cpu_key"]

#: The environment variable naming the folder of optimised graphs (empty: none are saved or read).
CACHE_VARIABLE = "MULTICROP_ONNX_CACHE"


def saved_graph(sha256: str, version: str) -> Path | None:
    """Where the graph onnxruntime ``version`` optimised from the model ``sha256`` is kept (None: no cache)."""
    env = os.environ.get(CACHE_VARIABLE)
    if env is not None and not env.strip():
        return None
    if env:
        root = Path(env)
    else:
        import platformdirs

        root = platformdirs.user_cache_path("multicrop", appauthor=False) / "onnx"
    return root / f"{sha256[:16]}-ort{version}-{cpu_key()}.onnx"


@functools.cache
def cpu_key() -> str:
    """A short hash of the CPU's model name and instruction-set flags (Linux), else of the machine's name
    (read once per process)."""
    import hashlib
    import platform

    text = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "model name", "Features")):
                    text += line
                elif not line.strip():  # the first processor's block is enough
                    break
    except OSError:
        pass
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def build_session(path: Path, saved: Path | None, options: Callable[[], Any]) -> Any:
    """The session of the model file ``path``: from its optimised graph at ``saved`` where one is kept.

    ``options`` gives fresh session options (optimisation ``ORT_ENABLE_ALL``).
    Without a file at ``saved`` the session is built from ``path`` and its
    optimised graph written there (under a temporary name, then renamed, so a
    reader never sees half a file); where the folder or the file cannot be
    written the session is built all the same.
    """
    import onnxruntime as ort

    providers = ["CPUExecutionProvider"]
    if saved is not None and saved.is_file():
        opts = options()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            return ort.InferenceSession(str(saved), sess_options=opts, providers=providers)
        except Exception:  # a truncated or foreign file: built from the shipped model and saved again
            saved.unlink(missing_ok=True)
    opts = options()
    tmp = None
    if saved is not None:
        try:
            saved.parent.mkdir(parents=True, exist_ok=True)
            tmp = saved.with_name(f"{saved.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            opts.optimized_model_filepath = str(tmp)
        except OSError:
            tmp = None
    try:
        session = ort.InferenceSession(str(path), sess_options=opts, providers=providers)
    except Exception:
        if tmp is None:
            raise
        tmp.unlink(missing_ok=True)  # the graph could not be written (a full disk): build without saving it
        return ort.InferenceSession(str(path), sess_options=options(), providers=providers)
    if tmp is not None and saved is not None:
        try:
            os.replace(tmp, saved)
            sha, _, rest = saved.name.partition("-ort")
            for old in saved.parent.glob(f"{sha}-ort*-{rest.rpartition('-')[2]}"):
                if old != saved:  # another onnxruntime version's graph of the same model on this CPU
                    old.unlink(missing_ok=True)
        except OSError:
            pass
    return session
