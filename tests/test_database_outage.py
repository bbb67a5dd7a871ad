"""While PostgreSQL is down, the app answers 503 with Retry-After (JSON for the API, a page for a browser), and 200s
again once it is back. The test starts a private PostgreSQL instance of its own (initdb and pg_ctl in a temporary
directory, on a free port) and a server pointed at it, then stops and restarts that instance; the shared server is
never touched."""

from __future__ import annotations

import glob
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.postgres

INITDB = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PrivatePostgres:
    """A throwaway cluster; as root, its files belong to the postgres account, which runs it."""

    def __init__(self, directory: Path):
        self.bin = Path(INITDB[-1]).parent
        self.directory = directory
        self.data = directory / "data"
        self.port = free_port()
        self.as_postgres = os.geteuid() == 0

    def _run(self, *args: str) -> None:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=120)

    def init(self) -> None:
        if self.as_postgres:
            shutil.chown(self.directory, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.directory / "log"), "-w", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"


def request(port: int, method: str, path: str, *, body: dict | None = None, headers: dict | None = None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    payload = json.dumps(body).encode() if body is not None else None
    all_headers = {"Content-Type": "application/json", **(headers or {})} if payload else dict(headers or {})
    connection.request(method, path, body=payload, headers=all_headers)
    response = connection.getresponse()
    result = response.status, dict(response.getheaders()), response.read()
    connection.close()
    return result


def token_request(port: int):
    return request(
        port,
        "POST",
        "/api/auth/token/",
        body={"username": "nobody", "password": "wrong-password"},
        headers={"Accept": "application/json"},
    )


def page_request(port: int):
    return request(port, "GET", "/projects/", headers={"Accept": "text/html", "Cookie": "sessionid=nosuchsession"})


def wait_for(check, *, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while True:
        try:
            result = check()
            if result:
                return result
        except (ConnectionError, OSError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError("the server did not reach the expected state in time")
        time.sleep(0.3)


@pytest.mark.skipif(not INITDB, reason="PostgreSQL's initdb is not installed under /usr/lib/postgresql")
def test_a_database_outage_answers_503_with_retry_after_and_recovers():
    directory = Path(tempfile.mkdtemp(prefix="outage-pg-"))
    cluster = PrivatePostgres(directory)
    server = None
    try:
        cluster.init()
        cluster.start()
        env = {
            **os.environ,
            "DATABASE_URL": cluster.url,
            "DEBUG": "0",
            "SECRET_KEY": "outage-test-" + "k" * 40,
            "SECURE_COOKIES": "0",
            "ALLOWED_HOSTS": "127.0.0.1",
            "DATABASE_RETRY_AFTER_SECONDS": "7",
            "VAR_DIR": str(directory / "var"),
        }
        env.pop("PYTEST_VERSION", None)
        env.pop("DJANGO_SETTINGS_MODULE", None)
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput"],
            cwd=REPO_ROOT,
            env=env,
            check=True,
            capture_output=True,
            timeout=600,
        )
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert wait_for(lambda: token_request(port)[0] == 400)
        assert page_request(port)[0] == 302  # to the login page: the session was looked up and not found

        cluster.stop()
        status, headers, body = token_request(port)
        assert status == 503 and headers["Retry-After"] == "7"
        assert headers["Content-Type"].startswith("application/json") and "database" in json.loads(body)["detail"]
        status, headers, body = page_request(port)
        assert status == 503 and headers["Retry-After"] == "7"
        assert headers["Content-Type"].startswith("text/html") and b"Temporarily unavailable" in body

        cluster.start()
        assert wait_for(lambda: token_request(port)[0] == 400)
        assert page_request(port)[0] == 302
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=20)
        try:
            cluster.stop()
        except subprocess.CalledProcessError:
            pass  # already stopped, or never started
        shutil.rmtree(directory, ignore_errors=True)
