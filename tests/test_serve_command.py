"""`manage.py serve` (what `make run` ends in) starts the web server, a worker and the scheduler as separate processes
on embedded defaults (SQLite, a broker that needs no server), and Ctrl-C stops all three."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def children_of(pid: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(status.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until(condition, what: str, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def test_serve_runs_web_worker_and_scheduler_apart_and_ctrl_c_stops_all_three(tmp_path):
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(VAR_DIR=str(tmp_path), PYTHONUNBUFFERED="1")
    env.pop("PYTEST_VERSION", None)
    port = free_port()
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", f"127.0.0.1:{port}", "--concurrency", "1"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until(lambda: answers(f"http://127.0.0.1:{port}/healthz"), "the web server")
        worker_log, scheduler_log = tmp_path / "worker.log", tmp_path / "scheduler.log"
        wait_until(lambda: worker_log.exists() and "ready." in worker_log.read_text(), "the worker")
        wait_until(lambda: scheduler_log.exists() and "beat: Starting" in scheduler_log.read_text(), "the scheduler")
        children = children_of(serve.pid)
        assert len(children) == 3, children
        commands = [Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode() for pid in children]
        assert sum(" worker " in command for command in commands) == 1, commands
        assert sum(" beat " in command for command in commands) == 1, commands
        assert not any(" -B " in command for command in commands), commands  # no beat inside the worker

        serve.send_signal(signal.SIGINT)
        output, _ = serve.communicate(timeout=60)
        assert serve.returncode == 0, output
        assert "Stopped the web server, the worker and the scheduler." in output
        wait_until(lambda: not any(alive(pid) for pid in children), "every child to stop", timeout=30)
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()
