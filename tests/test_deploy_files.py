"""The production files under deploy/ (no container runtime here, so they are checked as files): the compose file
parses, runs exactly one scheduler and names only settings the app reads; the systemd units agree with it; the
gunicorn configuration loads; and with deploy/app.env's settings `manage.py check --deploy` reports nothing."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DEPLOY = REPO / "deploy"
APP_SERVICES = ("migrate", "web", "worker", "scheduler")


def settings_the_app_reads() -> set[str]:
    names = set()
    for source in (REPO / "config" / "settings.py", DEPLOY / "gunicorn.conf.py"):
        names |= set(
            re.findall(
                r"""(?:environ\.get|env_bool|env_list|getenv)\(\s*["']([A-Z][A-Z0-9_]*)["']""", source.read_text()
            )
        )
    judge_keys = re.search(
        r'env_list\("JUDGE_API_KEY_ENVS", "([^"]*)"\)', (REPO / "config" / "settings.py").read_text()
    )
    return names | set(judge_keys.group(1).split(","))


def env_file(path: Path) -> dict[str, str]:
    pairs = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.partition("=")
            pairs[name.strip()] = value.strip()
    return pairs


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def command(service: dict) -> str:
    value = service.get("command", "")
    return " ".join(value) if isinstance(value, list) else value


def test_the_compose_file_names_only_settings_the_app_reads(compose):
    known = settings_the_app_reads()
    assert "DATABASE_URL" in known and "OPENAI_API_KEY" in known  # the reading of settings.py works
    assert set(env_file(DEPLOY / "app.env")) <= known, set(env_file(DEPLOY / "app.env")) - known
    for name in APP_SERVICES:
        service = compose["services"][name]
        assert service["env_file"] == "app.env", name
        assert set(service.get("environment", {})) <= known, (name, service.get("environment"))
    assert set(compose["services"]["db"]["environment"]) <= {"POSTGRES_USER", "POSTGRES_PASSWORD", "POSTGRES_DB"}


def test_exactly_one_scheduler_and_workers_without_one(compose):
    services = compose["services"]
    schedulers = [name for name, service in services.items() if " beat" in command(service)]
    assert schedulers == ["scheduler"] and services["scheduler"]["deploy"]["replicas"] == 1
    assert "celery -A config worker" in command(services["worker"])
    assert not any(re.search(r"(?:^| )(?:-B|--beat)(?: |$)", command(service)) for service in services.values())
    assert "gunicorn -c deploy/gunicorn.conf.py config.wsgi" in command(services["web"])
    assert "/readyz" in " ".join(services["web"]["healthcheck"]["test"])


def test_the_systemd_units_run_what_the_compose_file_runs(compose):
    units = {path.stem: path.read_text() for path in (DEPLOY / "systemd").glob("*.service")}
    assert set(units) == {"mathlabel-web", "mathlabel-worker", "mathlabel-scheduler"}
    starts = {name: re.search(r"^ExecStart=(.*)$", text, re.MULTILINE).group(1) for name, text in units.items()}
    assert starts["mathlabel-web"].endswith("gunicorn -c deploy/gunicorn.conf.py config.wsgi")
    assert "celery -A config worker" in starts["mathlabel-worker"] and " beat" not in starts["mathlabel-worker"]
    assert "celery -A config beat" in starts["mathlabel-scheduler"]
    assert all("EnvironmentFile=/etc/mathlabel/app.env" in text for text in units.values())


def test_the_gunicorn_configuration_loads():
    namespace: dict = {}
    exec(compile((DEPLOY / "gunicorn.conf.py").read_text(), "gunicorn.conf.py", "exec"), namespace)  # noqa: S102
    assert namespace["bind"] == "0.0.0.0:8000" and namespace["workers"] >= 3 and namespace["timeout"] >= 30


def test_the_documented_files_exist():
    text = (REPO / "docs" / "deployment.md").read_text()
    for path in set(re.findall(r"deploy/[\w./-]+\w", text)):
        if path != "deploy/tls":
            assert (REPO / path).exists(), path


def test_check_deploy_is_clean_with_the_documented_settings(tmp_path):
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO", "PYTEST"))}
    env.update(env_file(DEPLOY / "app.env"))
    env.update(
        SECRET_KEY=secrets.token_urlsafe(50),
        VAR_DIR=str(tmp_path / "var"),
        EXPORT_ROOT=str(tmp_path / "exports"),
        IMPORT_UPLOAD_DIR=str(tmp_path / "uploads"),
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
