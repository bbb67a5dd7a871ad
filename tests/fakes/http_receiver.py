"""A local HTTP server for tests: it records every request and answers from a script or a handler function.

It binds 127.0.0.1 on a free port and serves from a thread. Each request takes the next scripted answer
(`script(...)`), or, once the script is used up, what `handler(request)` returns (by default 200 with `{"ok": true}`).
Webhook tests use it as a receiver; client tests as a server that answers 429 or 503 with Retry-After.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: bytes = b'{"ok": true}'
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})

    @classmethod
    def json(cls, status: int, payload, **headers: str) -> Answer:
        return cls(status, json.dumps(payload).encode(), {"Content-Type": "application/json", **headers})


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]  # as sent (the names keep their case)
    body: bytes
    answer: Answer | None = None

    def header(self, name: str) -> str:
        lowered = {key.lower(): value for key, value in self.headers.items()}
        return lowered.get(name.lower(), "")

    def json(self):
        return json.loads(self.body)


class Receiver:
    def __init__(self):
        self.requests: list[Received] = []
        self._script: list[Answer] = []
        self._lock = threading.Lock()
        self.handler: Callable[[Received], Answer] = lambda request: Answer()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                request = Received(self.command, self.path, dict(self.headers.items()), self.rfile.read(length))
                with receiver._lock:
                    answer = receiver._script.pop(0) if receiver._script else None
                if answer is None:
                    answer = receiver.handler(request)
                request.answer = answer
                with receiver._lock:
                    receiver.requests.append(request)
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def script(self, *answers: Answer) -> None:
        with self._lock:
            self._script.extend(answers)

    def start(self) -> Receiver:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    server = Receiver().start()
    yield server
    server.stop()
