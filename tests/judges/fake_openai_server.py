"""A real loopback HTTP server speaking the OpenAI chat-completions protocol.

Behaviour is chosen per request by the requested model string (so one server
serves several "families" at once):

``ok``                  answer at once with a valid score
``slow:S``              sleep S seconds, then answer
``429:N``               answer 429 with ``Retry-After: 0`` to the first N attempts of each distinct body
``500:N``               likewise with HTTP 500 (``500:always`` never recovers)
``malformed``           completion text that is not JSON (and has no score)
``wrongtype``           ``{"score": "high"}``
``outofrange``          ``{"score": 99}``
``badbody``             an HTTP 200 whose body is not JSON
``nochoices``           an HTTP 200 JSON body without ``choices``
``numcontent``          ``message.content`` is a number, not text
``429ms:M``             429 with ``retry-after-ms: M`` to the first attempt of each distinct body
``401``                 authentication failure
``hang``                never answers (client timeouts)

Use in-process (:class:`FakeOpenAIServer` runs its own loop in a thread) or as
a subprocess (``python fake_openai_server.py`` prints ``PORT <n>``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import threading
from collections import Counter


class FakeOpenAIServer:
    """Start with ``with FakeOpenAIServer() as srv: srv.base_url``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host, self.port = host, port
        self.requests = 0          # chat-completions requests received
        self.answered = 0          # 200 replies fully written
        self.by_model: Counter = Counter()
        self.auth_headers: set[str] = set()
        self.bodies: list[dict] = []
        self.keep_bodies = True
        self._attempts: Counter = Counter()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._tasks: set[asyncio.Task] = set()

    # -- lifecycle --------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._stop_event.set)
        if self._thread is not None:
            self._thread.join(10)

    def _run(self) -> None:
        asyncio.run(self.serve())

    async def serve(self, *, on_ready=None) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        self._server = await asyncio.start_server(self._handle, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        if on_ready:
            on_ready(self.port)
        try:
            await self._stop_event.wait()
        finally:
            self._server.close()
            for t in list(self._tasks):
                t.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._server.wait_closed()

    # -- protocol ---------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                method, path, _ = line.decode("latin-1").split(" ", 2)
                headers = {}
                while True:
                    h = await reader.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    k, v = h.decode("latin-1").split(":", 1)
                    headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                status, extra, payload = await self._respond(method, path, headers, body)
                head = [f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}",
                        "Content-Type: application/json", f"Content-Length: {len(payload)}"]
                head += [f"{k}: {v}" for k, v in extra.items()]
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload)
                await writer.drain()
                if status == 200 and path.endswith("/chat/completions"):
                    self.answered += 1
        except (asyncio.CancelledError, ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _respond(self, method: str, path: str, headers: dict, body: bytes):
        if not path.endswith("/chat/completions") or method != "POST":
            return 404, {}, b'{"error": {"message": "not found"}}'
        self.requests += 1
        if "authorization" in headers:
            self.auth_headers.add(headers["authorization"])
        req = json.loads(body)
        if self.keep_bodies:
            self.bodies.append(req)
        model = req.get("model", "ok")
        self.by_model[model] += 1
        kind, _, arg = model.partition(":")
        digest = hashlib.sha256(body).hexdigest()
        self._attempts[(model, digest)] += 1
        attempt = self._attempts[(model, digest)]
        text = req["messages"][0]["content"][0]["text"]
        hi = 10 if "as a whole" in text else 5
        score = 1 + int(digest[:8], 16) % hi
        content = json.dumps({"score": score, "reason": "fake"})
        if kind == "slow":
            await asyncio.sleep(float(arg or 0.1))
        elif kind == "hang":
            await asyncio.sleep(3600)
        elif kind in ("429", "500"):
            if arg == "always" or attempt <= int(arg or 1):
                code = int(kind)
                extra = {"Retry-After": "0"} if code == 429 else {}
                return code, extra, json.dumps({"error": {"message": f"fake {code}"}}).encode()
        elif kind == "429ms" and attempt == 1:
            return 429, {"retry-after-ms": arg or "100"}, b'{"error": {"message": "slow down"}}'
        elif kind == "401":
            return 401, {}, b'{"error": {"message": "bad key"}}'
        elif kind == "malformed":
            content = "I think this photo is lovely, maybe a seven-ish {not json"
        elif kind == "wrongtype":
            content = '{"score": "high", "reason": 3}'
        elif kind == "outofrange":
            content = '{"score": 99, "reason": "too much"}'
        elif kind == "badbody":
            return 200, {}, b"<html>this is not json"
        elif kind == "nochoices":
            return 200, {}, json.dumps({"id": "x", "model": f"{model}-served"}).encode()
        elif kind == "numcontent":
            content = 7
        reply = {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": f"{model}-served",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020},
        }
        return 200, {}, json.dumps(reply).encode()


def main() -> None:  # pragma: no cover - subprocess mode (benchmarks)
    srv = FakeOpenAIServer(port=int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    srv.keep_bodies = False

    def ready(port: int) -> None:
        print(f"PORT {port}", flush=True)

    try:
        asyncio.run(srv.serve(on_ready=ready))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":  # pragma: no cover
    main()
