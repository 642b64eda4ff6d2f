"""One onnxruntime session per shipped model and thread count, and the one thread-count rule.

Every model of multicrop (U^2-Netp, YuNet, NanoDet, the pose landmarks, the
embedding) runs through :func:`onnx_session`, so all share one set of
session options and one in-process cache (one session per model and thread count):

- intra-op threads are explicit (the caller's ``threads``), inter-op threads 1;
- graph optimisation ``ORT_ENABLE_ALL``;
- the CPU memory arena on: without it every run faults its activations in
  again (about 250 MB for U^2-Netp, 0.15 s in the kernel); with it a batch of 10
  photos takes 0.85x the CPU, and a 200 MP photo peaks at 1.37 GB (lossless
  crops; 1.10 GB without the arena), measured on 2 cores by
  ``benchmarks/bench_crop.py --whole --memory``;
- no spinning of idle worker threads (the stages after a model, and other
  processes on a small machine, get the cores back; spinning cost 1.16x CPU).

A command that knows which models it will run calls :func:`prefetch` first:
their sessions are built on one background thread while the command goes on
importing and decoding (onnxruntime builds a session without holding the
GIL), and :func:`onnx_session` waits for a session still being built rather
than building it twice.

The graph onnxruntime optimises from each shipped model is saved once and read
back by later processes (:mod:`multicrop.models.graph_cache`).

:func:`thread_count` is the one place that reads the ``MULTICROP_THREADS``
environment variable; the edges (CLI, web, batch, evaluation) call it and
pass the number down, and every model function takes ``threads``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

__all__ = ["onnx_session", "file_session", "prefetch", "thread_count", "MAX_THREADS", "THREADS_VARIABLE"]

#: Most intra-op threads one process gives onnxruntime by default (a 320x320
#: U^2-Netp run gains little beyond this).
MAX_THREADS = 4
#: The environment variable that overrides :func:`thread_count`.
THREADS_VARIABLE = "MULTICROP_THREADS"


def thread_count(workers: int = 1) -> int:
    """Threads one process uses for onnxruntime (and, in evaluation workers, OpenMP and libvips).

    The one source of truth: ``MULTICROP_THREADS`` if set, else the CPUs
    shared out among ``workers`` processes, at most :data:`MAX_THREADS`.

    Examples
    --------
    >>> 1 <= thread_count() <= MAX_THREADS or THREADS_VARIABLE in os.environ
    True
    """
    env = os.environ.get(THREADS_VARIABLE)
    if env:
        return max(1, int(env))
    return max(1, min(MAX_THREADS, (os.cpu_count() or 1) // max(workers, 1)))


def _check_threads(threads: object) -> int:
    from ..errors import InvalidParameterError

    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InvalidParameterError(f"threads must be a positive integer, got {threads!r}")
    return threads


def _options(threads: int) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3
    opts.enable_cpu_mem_arena = True
    opts.enable_mem_pattern = False  # a run's tensors from the arena as it goes, not one planned block: U^2-Netp's peak 0.55 -> 0.35 GB
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return opts


def _build(name: str, threads: int) -> Any:
    import onnxruntime as ort

    from . import model_card, model_path
    from .graph_cache import build_session, saved_graph

    return build_session(model_path(name), saved_graph(model_card(name).sha256, ort.__version__),
                         lambda: _options(threads))


def onnx_session(name: str, *, threads: int) -> Any:
    """The onnxruntime session of the shipped model ``name`` with ``threads`` intra-op threads.

    Built once per ``(name, threads)`` per process; the model file is checked
    against its card's SHA-256 first (:func:`multicrop.models.model_path`).

    Parameters
    ----------
    name : str
        A key of :data:`multicrop.models.MODELS`.
    threads : int
        Intra-op threads (callers resolve a default with :func:`thread_count`).

    Returns
    -------
    onnxruntime.InferenceSession

    Raises
    ------
    InvalidParameterError
        If ``threads`` is not a positive integer or ``name`` is not shipped.
    ModelFileError
        If the file is missing or corrupt.
    """
    key = (name, _check_threads(threads))
    with _LOCK:
        session = _SESSIONS.get(key)
        mine = session is None
        if mine:
            session = _SESSIONS[key] = Future()
    if mine:
        try:
            session.set_result(_build(*key))
        except BaseException as exc:
            session.set_exception(exc)
    try:
        return session.result()
    except BaseException:
        with _LOCK:  # not kept: the next call tries again
            if _SESSIONS.get(key) is session:
                del _SESSIONS[key]
        raise


def prefetch(names: Iterable[str], *, threads: int) -> None:
    """Start building the sessions of the shipped models ``names`` on one background thread, in order.

    :func:`onnx_session` then returns each as soon as it is built.  What
    building one raises (a missing or corrupt file) is raised there, when the
    session is asked for, not here.  A session built or being built is not
    built again.

    Raises
    ------
    InvalidParameterError
        If ``threads`` is not a positive integer.

    Examples
    --------
    >>> prefetch(["yunet"], threads=1)
    >>> onnx_session("yunet", threads=1) is onnx_session("yunet", threads=1)
    True
    """
    threads = _check_threads(threads)
    global _POOL
    with _LOCK:
        for name in names:
            if (name, threads) not in _SESSIONS:
                if _POOL is None:
                    _POOL = ThreadPoolExecutor(1, thread_name_prefix="multicrop-sessions")
                _SESSIONS[(name, threads)] = _POOL.submit(_build, name, threads)


def _cache_clear() -> None:
    """Forget every session (tests); one still being built is finished and dropped."""
    with _LOCK:
        _SESSIONS.clear()


#: Every session asked for or prefetched, by ``(name, threads)``: built, or being built.
_SESSIONS: dict[tuple[str, int], Future] = {}
_LOCK = threading.Lock()
_POOL: ThreadPoolExecutor | None = None
onnx_session.cache_clear = _cache_clear  # type: ignore[attr-defined]


def file_session(path: str | os.PathLike, *, threads: int) -> Any:
    """An onnxruntime session of a user's own model file ``path``, with the same options as :func:`onnx_session`.

    For models multicrop does not ship (an IAA model named on the command line): no card, no
    SHA-256 check, no cache; the one other place a session is built.

    Raises
    ------
    InvalidParameterError
        If ``threads`` is not a positive integer.
    Exception
        Whatever onnxruntime raises for a missing or broken file (the caller names the file).
    """
    import onnxruntime as ort

    return ort.InferenceSession(os.fspath(path), sess_options=_options(_check_threads(threads)),
                                providers=["CPUExecutionProvider"])
