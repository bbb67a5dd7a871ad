"""A local OpenAI-compatible judge for load: aiohttp, a latency per call, 429 and 500 rates, and counters.

    python -m tests.fakes.judge_server --port 8765 --latency 1.0 [--rate-429 0.01] [--rate-500 0.01]

It answers `POST /v1/chat/completions` after `latency` seconds in the VerifyBench judge format ("Final Judgment:
Yes" when the prompt holds the correct marker of tests.fakes.openai_server, "No" otherwise), and refuses a share of
requests with 429 (with Retry-After) or 500. `GET /stats` gives what it saw: requests, requests in flight now and at
most, calls whose caller went away while they were in flight (orphaned), answers by status, and how many distinct prompts were asked more than once (paid twice); `POST /stats/reset`
starts the counters again. Every other process of a test or benchmark (a Celery worker) can reach it.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from aiohttp import web

from tests.fakes.openai_server import CORRECT_MARKER

ROOT = Path(__file__).resolve().parents[2]


class JudgeState:
    def __init__(self, latency: float, rate_429: float, rate_500: float, retry_after: float, seed: int):
        self.latency, self.rate_429, self.rate_500, self.retry_after = latency, rate_429, rate_500, retry_after
        self.random = random.Random(seed)
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.orphaned = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.by_status: Counter[int] = Counter()
        self.prompts: Counter[str] = Counter()
        self.answered_prompts: Counter[str] = Counter()
        self.started = time.monotonic()
        self.first_at: float | None = None
        self.last_at: float | None = None

    def stats(self) -> dict:
        return {
            "requests": self.requests,
            "in_flight": self.in_flight,
            "orphaned": self.orphaned,
            "max_in_flight": self.max_in_flight,
            "by_status": {str(code): count for code, count in sorted(self.by_status.items())},
            "distinct_prompts": len(self.prompts),
            "prompts_answered_twice": sum(1 for count in self.answered_prompts.values() if count > 1),
            "answers_paid_again": sum(count - 1 for count in self.answered_prompts.values() if count > 1),
            "answered": sum(self.answered_prompts.values()),
            "first_at": self.first_at,
            "last_at": self.last_at,
        }


def _answer(body: dict) -> str:
    messages = body.get("messages") or []
    user = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    correct = CORRECT_MARKER in user
    return f"The final answers {'agree' if correct else 'differ'}.\nFinal Judgment: {'Yes' if correct else 'No'}"


async def chat(request: web.Request) -> web.Response:
    state: JudgeState = request.app["state"]
    body = await request.json()
    prompt = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()
    now = time.monotonic()
    state.requests += 1
    state.first_at = state.first_at or now
    state.prompts[prompt] += 1
    state.in_flight += 1
    state.max_in_flight = max(state.max_in_flight, state.in_flight)
    try:
        await asyncio.sleep(state.latency)
        if request.transport is None or request.transport.is_closing():
            state.orphaned += 1  # the caller went away (killed) while its call was in flight
        draw = state.random.random()
        if draw < state.rate_429:
            state.by_status[429] += 1
            return web.json_response(
                {"error": {"message": "rate limited", "type": "rate_limit_error"}},
                status=429,
                headers={"Retry-After": f"{state.retry_after:g}"},
            )
        if draw < state.rate_429 + state.rate_500:
            state.by_status[500] += 1
            return web.json_response({"error": {"message": "overloaded", "type": "server_error"}}, status=500)
        state.by_status[200] += 1
        state.answered_prompts[prompt] += 1
        text = _answer(body)
        return web.json_response(
            {
                "id": f"chatcmpl-{state.requests}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "fake-judge"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 12, "total_tokens": 112},
            }
        )
    finally:
        state.in_flight -= 1
        state.last_at = time.monotonic()


async def stats(request: web.Request) -> web.Response:
    return web.json_response(request.app["state"].stats())


async def reset(request: web.Request) -> web.Response:
    request.app["state"].reset()
    return web.json_response({"reset": True})


def make_app(state: JudgeState) -> web.Application:
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app["state"] = state
    app.add_routes([web.post("/v1/chat/completions", chat), web.get("/stats", stats), web.post("/stats/reset", reset)])
    return app


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class JudgeServerProcess:
    """The server in a process of its own (so its event loop never competes with the caller's threads)."""

    def __init__(self, *, latency: float = 1.0, rate_429: float = 0.0, rate_500: float = 0.0, retry_after: float = 1.0):
        self.port = free_port()
        self.arguments = [
            "--port",
            str(self.port),
            "--latency",
            str(latency),
            "--rate-429",
            str(rate_429),
            "--rate-500",
            str(rate_500),
            "--retry-after",
            str(retry_after),
        ]
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> JudgeServerProcess:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.fakes.judge_server", *self.arguments],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                self.stats()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the fake judge server did not start")

    def _call(self, method: str, path: str) -> dict:
        import http.client

        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request(method, path)
            return json.loads(connection.getresponse().read())
        finally:
            connection.close()

    def stats(self) -> dict:
        return self._call("GET", "/stats")

    def reset(self) -> None:
        self._call("POST", "/stats/reset")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--rate-429", type=float, default=0.0)
    parser.add_argument("--rate-500", type=float, default=0.0)
    parser.add_argument("--retry-after", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=7)
    arguments = parser.parse_args()
    state = JudgeState(arguments.latency, arguments.rate_429, arguments.rate_500, arguments.retry_after, arguments.seed)
    web.run_app(make_app(state), host="127.0.0.1", port=arguments.port, print=None, access_log=None, backlog=2048)


if __name__ == "__main__":
    main()
