"""Engines that run one per-item function many times: a local process pool, or Ray.

Both have the same three verbs (``submit``, ``wait``, ``result``), so one
dispatch loop (:func:`dispatch`) drives either: it admits items by their
estimated pixels (:mod:`multicrop.batch.admission`), keeps a bounded number
in flight, and hands each finished row to the caller, who alone writes the
manifest.  Neither engine lets a bad item stop the run: a function that
raises, or a worker process that dies, becomes a failed row.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import multiprocessing
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParameterError, MissingExtraError
from .admission import BYTES_PER_PIXEL, PixelBudget, header_pixels

__all__ = ["ENGINES", "Item", "LocalEngine", "RayEngine", "make_engine", "dispatch", "default_workers", "watch_parent"]

#: The engine names ``--engine`` accepts.
ENGINES = ("local", "ray")


def default_workers() -> int:
    """The CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Item:
    """One unit of work: ``fn(*args)`` on the path ``path`` (whose header decides its admission)."""

    path: str
    args: tuple
    on_error: Callable[[BaseException], dict]


def watch_parent(parent: int, *, interval_s: float = 1.0) -> None:
    """In a pool worker: exit as soon as the driver ``parent`` is gone (e.g. killed with ``kill -9``).

    A worker whose driver died is re-parented; it then holds its memory (a
    full-resolution photo) for nothing.  A daemon thread checks the parent
    pid every ``interval_s`` and ends the process when it changed.  (The
    pool's resource tracker ends by itself once no process holds its pipe.)
    """
    import threading
    import time

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(1)
            time.sleep(interval_s)

    threading.Thread(target=watch, name="multicrop-watch-parent", daemon=True).start()


class LocalEngine:
    """A pool of ``workers`` processes on this machine (spawned: no inherited threads or handles).

    Each worker watches its driver (:func:`watch_parent`) and exits when the
    driver is gone, so a killed driver leaves no worker behind.
    """

    name = "local"

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.max_in_flight = 2 * workers  # the pool runs `workers`; the rest wait in its queue
        self._pool = self._new_pool()

    def _new_pool(self) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                      initializer=watch_parent, initargs=(os.getpid(),))

    def submit(self, fn: Callable, *args: Any) -> cf.Future:
        try:
            return self._pool.submit(fn, *args)
        except cf.process.BrokenProcessPool:  # a worker died earlier: start a fresh pool
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
            return self._pool.submit(fn, *args)

    def wait(self, handles: list) -> list:
        done, _ = cf.wait(handles, return_when=cf.FIRST_COMPLETED)
        return list(done)

    def result(self, handle: cf.Future) -> Any:
        return handle.result()

    def memory_bytes(self) -> int | None:
        return None

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class RayEngine:
    """Ray tasks, on the cluster at ``RAY_ADDRESS`` or on a local Ray started here.

    Each task asks for ``threads`` CPUs, so Ray runs as many at once as the
    cluster's CPUs allow; an already initialised Ray (e.g. a test's
    ``ray.init(num_cpus=2)``) is used as it is.
    """

    name = "ray"

    def __init__(self, workers: int | None, *, threads: int = 1) -> None:
        try:
            import ray
        except ImportError:
            raise MissingExtraError.for_module("ray", extra="ray", feature="`multicrop batch --engine ray`") from None
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            address = os.environ.get("RAY_ADDRESS") or None
            opts: dict[str, Any] = {"address": address, "log_to_driver": False}
            if address is None:  # a local Ray for this run (joining a cluster takes no resource options)
                opts |= {"num_cpus": (workers or default_workers()) * threads, "include_dashboard": False}
            ray.init(**opts)
            self._started = True
        self.threads = threads
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = workers or max(1, cpus // threads)
        # Tasks in flight run at once when the cluster has the CPUs: an explicit
        # worker count caps them; otherwise keep a second round queued.
        self.max_in_flight = workers or 2 * self.workers
        self._remote: dict[Callable, Any] = {}

    def submit(self, fn: Callable, *args: Any):
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = self._ray.remote(num_cpus=self.threads, max_retries=0)(fn)
        return remote.remote(*args)

    def wait(self, handles: list) -> list:
        done, _ = self._ray.wait(handles, num_returns=1)
        return done

    def result(self, handle) -> Any:
        return self._ray.get(handle)

    def memory_bytes(self) -> int | None:
        mem = self._ray.cluster_resources().get("memory")
        return int(mem) if mem else None

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()


def make_engine(name: str, *, workers: int | None, threads: int):
    """The engine called ``name`` (``local`` or ``ray``)."""
    if name == "local":
        return LocalEngine(workers or max(1, default_workers() // threads))
    if name == "ray":
        return RayEngine(workers, threads=threads)
    raise InvalidParameterError(f"--engine must be one of {', '.join(ENGINES)}, got {name!r}")


def dispatch(engine, fn: Callable, items: Iterable[Item], *, on_result: Callable[[dict], None],
             budget: PixelBudget | None = None, max_in_flight: int | None = None,
             pixels: Callable[[str], int] = header_pixels) -> PixelBudget | None:
    """Run ``fn(*item.args)`` for every item on ``engine``; ``on_result(row)`` per finished item.

    Parameters
    ----------
    engine : LocalEngine or RayEngine
    fn : callable
        A module-level function (it is pickled to the workers).
    items : iterable of Item
    on_result : callable(dict)
        Called in this process, in finishing order.
    budget : PixelBudget, optional
        Admit an item only while the pixels in flight (its header's width x
        height) fit; None admits by count only and reads no header.
    max_in_flight : int, optional
        Items submitted and not finished (default: the engine's ``max_in_flight``).
    pixels : callable(str) -> int
        Reads an item's pixel count (the header reader; tests swap it).

    Returns
    -------
    PixelBudget or None
        The budget, whose ``peak`` says how many pixels were ever in flight.
    """
    cap = max_in_flight or engine.max_in_flight
    queue = collections.deque(items)
    head_px: int | None = None
    in_flight: dict[Any, tuple[Item, int]] = {}
    while queue or in_flight:
        while queue and len(in_flight) < cap:
            if budget is not None:
                if head_px is None:
                    head_px = pixels(queue[0].path)
                if not budget.try_admit(head_px):
                    break
            item = queue.popleft()
            in_flight[engine.submit(fn, *item.args)] = (item, head_px or 0)
            head_px = None
        for handle in engine.wait(list(in_flight)):
            item, px = in_flight.pop(handle)
            if budget is not None:
                budget.release(px)
            try:
                row = engine.result(handle)
            except Exception as exc:  # noqa: BLE001 - a dead worker or a lost task: this item failed
                row = item.on_error(exc)
            on_result(row)
    return budget


def default_budget(engine) -> PixelBudget:
    """Half the memory Ray reports for the cluster, or half of this machine's RAM, in pixels."""
    from .admission import default_pixel_budget

    mem = engine.memory_bytes()
    return PixelBudget(max(1, mem // 2 // BYTES_PER_PIXEL) if mem else default_pixel_budget())
