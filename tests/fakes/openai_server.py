"""A local OpenAI-compatible chat completions server with scripted behaviours, for tests.

It binds 127.0.0.1 on a free port and serves `POST /v1/chat/completions` from a thread. Each request
takes the next scripted behaviour (`script(...)`), or the standing one (`always(...)`) once the
script is used up. The standing behaviour by default answers deterministically from the prompt:
a completion containing CORRECT_MARKER is judged correct, one containing UNDECIDED_MARKER gets an
undecided assessment, anything else is judged incorrect, in the format that the prompt (one of
the default templates) asks for. Every request is logged with its headers and body.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

CORRECT_MARKER = "<<correct>>"
UNDECIDED_MARKER = "<<undecided>>"


@dataclass(frozen=True)
class Reply:
    """A 200 answer: `content` as given, or the prompt-driven answer when None."""

    content: str | None = None
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Status:
    """An error status with an OpenAI-style error body, optionally with Retry-After."""

    code: int
    retry_after: str | None = None
    message: str = "scripted failure"


@dataclass(frozen=True)
class Slow:
    """Wait `seconds` before answering like `then` (the client is expected to give up first)."""

    seconds: float
    then: Reply = Reply()


@dataclass(frozen=True)
class EchoAuthorization:
    """A misbehaving endpoint that puts the Authorization header it received into its answer."""

    prefix: str = "Your header was: "


@dataclass(frozen=True)
class Redirect:
    """A 307 to another address (an endpoint trying to bounce the client, and its key, elsewhere)."""

    location: str


@dataclass(frozen=True)
class Raw:
    """An answer that is not a chat completion: `body` as it is, with its own content type (a misconfigured proxy,
    an HTML error page, a model server's plain-text answer)."""

    body: str
    content_type: str = "text/plain"
    code: int = 200


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict
    behaviour: object

    @property
    def authorization(self) -> str:
        return self.headers.get("authorization", "")

    @property
    def messages(self) -> list[dict]:
        return self.body.get("messages", [])


def prompt_driven_answer(messages: list[dict]) -> str:
    user = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    correct = CORRECT_MARKER in user
    undecided = UNDECIDED_MARKER in user
    if "Yes, No or Inconclusive" in user:
        return "Inconclusive" if undecided else ("Yes" if correct else "No")
    if "Final Judgment: Yes" in user:
        verdict = "Yes" if correct else "No"
        return f"The final answers {'agree' if correct else 'differ'}.\nFinal Judgment: {verdict}"
    if "\\boxed{yes}" in user:
        return f"Comparing the two answers.\n\\boxed{{{'yes' if correct else 'no'}}}"
    if undecided:
        return f"I cannot tell whether the answers agree. {UNDECIDED_MARKER}"
    if correct:
        return f"Step by step, the response reaches the reference answer, so it is correct. {CORRECT_MARKER}"
    return "Step by step, the response ends at a different value, so it is incorrect."


@dataclass
class FakeOpenAIServer:
    standing: object = field(default_factory=Reply)
    requests: list[RecordedRequest] = field(default_factory=list)
    max_in_flight: int = 0

    def __post_init__(self):
        self._lock = threading.Lock()
        self._script: list[object] = []
        self._in_flight = 0
        self._group_size = 0
        self._held = 0
        self._group_generation = 0
        self._hold_timeout = 0.0
        self._changed = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *behaviours) -> None:
        with self._lock:
            self._script.extend(behaviours)

    def always(self, behaviour) -> None:
        with self._lock:
            self.standing = behaviour

    def hold_in_groups_of(self, count: int, timeout: float = 5.0) -> None:
        """Hold requests back until `count` of them are waiting, then let that group through together
        (a request waits at most `timeout`). A client that allows `count` simultaneous requests then
        reaches exactly that many in flight."""
        with self._lock:
            self._group_size, self._hold_timeout = count, timeout

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [request for request in self.requests if request.path.endswith("/chat/completions")]

    def start(self) -> FakeOpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                server._handle(self)

            def log_message(self, format, *args):  # noqa: A002  (the signature of BaseHTTPRequestHandler)
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _next_behaviour(self):
        with self._lock:
            return self._script.pop(0) if self._script else self.standing

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(handler, 400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
            return
        if not handler.path.rstrip("/").endswith("/chat/completions"):
            self._send(handler, 404, {"error": {"message": f"no route {handler.path}", "type": "not_found"}})
            return
        behaviour = self._next_behaviour()
        headers = {name.lower(): value for name, value in handler.headers.items()}
        with self._lock:
            self.requests.append(RecordedRequest(handler.path, headers, body, behaviour))
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            self._changed.notify_all()
            if self._group_size:
                self._wait_for_group()
        try:
            answer = self._answer(behaviour, body, headers)
        finally:
            # Counted out before the reply is written: the client may send its next request as soon
            # as it reads this one, and max_in_flight must never count a request it has finished with.
            with self._lock:
                self._in_flight -= 1
                self._changed.notify_all()
        if answer is not None:
            try:
                self._send(handler, *answer)
            except (BrokenPipeError, ConnectionResetError):
                pass

    def _wait_for_group(self) -> None:
        """Called with the lock held."""
        self._held += 1
        generation = self._group_generation
        if self._held >= self._group_size:
            self._held = 0
            self._group_generation += 1
            self._changed.notify_all()
            return
        deadline = time.monotonic() + self._hold_timeout
        while self._group_generation == generation and time.monotonic() < deadline:
            self._changed.wait(timeout=max(0.0, deadline - time.monotonic()))
        if self._group_generation == generation:
            self._held -= 1

    def _answer(self, behaviour, body: dict, headers: dict[str, str]) -> tuple[int, object, dict] | None:
        """The status, JSON payload and extra headers of the reply; None when the server is stopping."""
        if isinstance(behaviour, Status):
            extra = {"Retry-After": behaviour.retry_after} if behaviour.retry_after is not None else {}
            error = {"message": behaviour.message, "type": "server_error" if behaviour.code >= 500 else "error"}
            return behaviour.code, {"error": error}, extra
        if isinstance(behaviour, Raw):
            return behaviour.code, behaviour, {}
        if isinstance(behaviour, Redirect):
            return 307, {"error": {"message": "moved", "type": "redirect"}}, {"Location": behaviour.location}
        if isinstance(behaviour, Slow):
            if self._stopping.wait(behaviour.seconds):
                return None
            behaviour = behaviour.then
        if isinstance(behaviour, EchoAuthorization):
            content, finish_reason = behaviour.prefix + headers.get("authorization", ""), "stop"
        else:
            content = (
                behaviour.content if behaviour.content is not None else prompt_driven_answer(body.get("messages", []))
            )
            finish_reason = behaviour.finish_reason
        prompt_tokens = sum(len(str(message.get("content", "")).split()) for message in body.get("messages", []))
        completion_tokens = len(content.split())
        with self._lock:
            number = len(self.requests)
        return (
            200,
            {
                "id": f"chatcmpl-fake-{number}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", ""),
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
            {},
        )

    @staticmethod
    def _send(handler, code: int, payload, extra_headers: dict[str, str] | None = None) -> None:
        if isinstance(payload, Raw):
            data, content_type = payload.body.encode("utf-8"), payload.content_type
        else:
            data, content_type = json.dumps(payload).encode("utf-8"), "application/json"
        handler.send_response(code)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (extra_headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)


@pytest.fixture
def fake_openai():
    """A running FakeOpenAIServer; `fake_openai.base_url` ends in /v1."""
    server = FakeOpenAIServer().start()
    yield server
    server.stop()
