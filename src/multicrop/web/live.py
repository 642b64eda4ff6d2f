"""The web app served in a thread of this process, on a free loopback port.

:class:`LiveServer` is how the browser tests and ``benchmarks/bench_web_upload.py``
talk to a real server (uvicorn, as ``multicrop serve`` runs it) without a
second process: ``with LiveServer(create_app()) as srv: ... srv.url ...``.
"""

from __future__ import annotations

import socket
import threading
import time

__all__ = ["LiveServer", "free_port"]


def free_port() -> int:
    """A loopback TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """uvicorn serving ``app`` in a daemon thread on a free loopback port (``url``); a context manager.

    Entering waits until uvicorn has started (at most ``start_timeout`` seconds, or until its thread
    dies: then :class:`RuntimeError`); leaving asks it to stop and joins the thread.
    """

    def __init__(self, app, *, start_timeout: float = 30.0) -> None:
        import uvicorn

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.start_timeout = start_timeout
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + self.start_timeout
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
