"""Shared fixtures: users with roles, API clients, a real Celery worker on Redis."""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from core import roles
from tests.fakes.http_receiver import receiver  # noqa: F401  (fixture)
from tests.fakes.openai_server import fake_openai  # noqa: F401  (fixture)

REPO_ROOT = Path(__file__).resolve().parent.parent
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


def _redis_reachable() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


def pytest_addoption(parser):
    parser.addoption(
        "--update-screenshots",
        action="store_true",
        default=False,
        help="browser tests rewrite the screenshots under docs/screenshots (by default they leave them untouched)",
    )


def pytest_collection_modifyitems(config, items):
    is_postgres = settings.IS_POSTGRES
    skip_pg = pytest.mark.skip(reason="needs PostgreSQL (set DATABASE_URL)")
    skip_worker = pytest.mark.skip(reason="needs PostgreSQL and Redis on 127.0.0.1:6379")
    skip_browser = pytest.mark.skip(reason=f"needs chromium at {CHROMIUM} and PostgreSQL")
    worker_ok = is_postgres and _redis_reachable()
    browser_ok = is_postgres and Path(CHROMIUM).exists()
    for item in items:
        if "postgres" in item.keywords and not is_postgres:
            item.add_marker(skip_pg)
        if "worker" in item.keywords and not worker_ok:
            item.add_marker(skip_worker)
        if "browser" in item.keywords and not browser_ok:
            item.add_marker(skip_browser)


_user_counter = itertools.count(1)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Throttles and sign-in failure counts live in the cache; each test starts with none."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def make_user(db):
    def make(role: str | None = None, username: str | None = None, password: str = "pass-word-123") -> User:
        name = username or f"{role or 'user'}{next(_user_counter)}"
        user = User.objects.create_user(username=name, password=password)
        if role:
            user.groups.add(Group.objects.get_or_create(name=role)[0])  # transactional tests flush the groups
        if role == roles.RESEARCHER:  # a one-team lab: its researchers work in the default workspace
            from core import workspaces

            workspaces.add_member(workspaces.default_workspace(), user)
        return user

    return make


@pytest.fixture
def annotator(make_user):
    return make_user(roles.ANNOTATOR)


@pytest.fixture
def adjudicator(make_user):
    return make_user(roles.ADJUDICATOR)


@pytest.fixture
def researcher(make_user):
    return make_user(roles.RESEARCHER)


@pytest.fixture
def admin_role_user(make_user):
    return make_user(roles.ADMIN)


@pytest.fixture
def local_judge_host(db, fake_openai):  # noqa: F811  (the fixture imported above)
    """Allow judges on the fake OpenAI-compatible server (a loopback address), with the tests' key variables."""
    return allow_judge_endpoint(fake_openai.base_url, *TEST_KEY_ENVS)


TEST_KEY_ENVS = ("JUDGE_KEY_MATHLABEL_TEST", "JUDGE_KEY_MATHLABEL_TEST_RUN", "JUDGE_KEY_EGRESS_TEST", "OPENAI_API_KEY")


def allow_judge_endpoint(base_url: str, *key_envs: str, allow_private: bool = True):
    """Put the endpoint of `base_url` (scheme, host, port) on the judge allow-list with these key variables bound."""
    from grading.judges.egress import parse_entry
    from grading.models import AllowedJudgeHost

    scheme, host, port = parse_entry(base_url)
    entry, _ = AllowedJudgeHost.objects.get_or_create(scheme=scheme, host=host, port=port)
    entry.key_envs = sorted(set(entry.key_envs) | set(key_envs))
    entry.allow_private = allow_private
    entry.save()
    return entry


@pytest.fixture
def api_client_for(db):
    def make(user: User | None) -> APIClient:
        client = APIClient()
        if user is not None:
            token, _ = Token.objects.get_or_create(user=user)
            client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    return make


def database_url_for_current_test_db() -> str:
    """The URL of the database the tests run against (pytest-django's test_ database)."""
    db = settings.DATABASES["default"]
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


class WorkerProcess:
    """A real `celery -A config worker` on Redis, on a queue of its own, against the test database."""

    def __init__(self, queue: str, extra_env: dict[str, str] | None = None, *, beat: bool = False, name: str = ""):
        self.queue = queue
        self.extra_env = extra_env or {}
        self.beat = beat
        self.name = name or queue
        self.process: subprocess.Popen | None = None
        self.log_path = Path(settings.VAR_DIR) / f"worker-{self.name}.log"

    def start(self) -> WorkerProcess:
        env = dict(os.environ)
        env.update(
            DATABASE_URL=database_url_for_current_test_db(),
            CELERY_BROKER_URL=REDIS_URL,
            CELERY_QUEUE=self.queue,
            SECRET_KEY="worker-test-secret",
            PYTHONUNBUFFERED="1",
        )
        env.pop("PYTEST_VERSION", None)
        env.update(self.extra_env)
        self._log = open(self.log_path, "w")
        beat = ["-B", "--schedule", str(Path(settings.VAR_DIR) / f"beat-{self.name}")] if self.beat else []
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--pool=solo",
                "-Q",
                self.queue,
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel=info",
                "-n",
                f"{self.name}@%h",
                *beat,
            ],
            cwd=REPO_ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if "ready." in self.log():
                return self
            if self.process.poll() is not None:
                raise RuntimeError(f"worker exited early:\n{self.log()}")
            time.sleep(0.1)
        raise RuntimeError(f"worker did not become ready:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL the worker's whole process group, as a crash or an OOM kill would."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
        if getattr(self, "_log", None):
            self._log.close()


def _forget_broker_connections(app) -> None:
    """Drop the connection pool and routing that an earlier (eager) send cached with the old broker and queue."""
    app._pool = None
    app.__dict__.pop("amqp", None)


@pytest.fixture
def celery_worker_factory(transactional_db):
    """Start real workers; tasks sent from the test go to Redis and run in the worker process.

    Tests that use it must be marked `@pytest.mark.worker`.
    """
    from config.celery import app

    queue = f"test-{uuid.uuid4().hex[:10]}"
    saved = {key: app.conf.get(key) for key in ("task_always_eager", "broker_url", "task_default_queue")}
    app.conf.update(task_always_eager=False, broker_url=REDIS_URL, task_default_queue=queue)
    _forget_broker_connections(app)
    workers: list[WorkerProcess] = []

    def start(extra_env: dict[str, str] | None = None, *, beat: bool = False) -> WorkerProcess:
        worker = WorkerProcess(queue, extra_env, beat=beat, name=f"{queue}-{len(workers) + 1}").start()
        workers.append(worker)
        return worker

    start.queue = queue
    yield start
    for worker in workers:
        worker.stop()
    app.conf.update(saved)
    _forget_broker_connections(app)
    try:
        import redis

        client = redis.Redis.from_url(REDIS_URL)
        client.delete(queue)
    except Exception:
        pass


def chromium_launch_options() -> dict:
    return {
        "executable_path": CHROMIUM,
        "headless": True,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    }


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, **chromium_launch_options()}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1280, "height": 800}}


@pytest.fixture(autouse=True)
def _no_playwright_download(monkeypatch):
    monkeypatch.setenv("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")


def have_command(name: str) -> bool:
    return shutil.which(name) is not None


@pytest.fixture
def allowed_receiver(db, receiver):  # noqa: F811  (the fixture imported above)
    """The local HTTP receiver's endpoint (and port 9 of loopback, which answers nothing) on the egress allow-list."""
    allow_judge_endpoint("http://127.0.0.1:9")
    return allow_judge_endpoint(receiver.url)
