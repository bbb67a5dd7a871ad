"""The client as a package: versioned with the app, installable with pip in a fresh environment that has no
Django, and its webhook check the same as the app's signature."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import mathlabel_client
from mathlabel_client import WebhookSignatureError, verify_webhook
from tests.fakes.http_receiver import Answer
from webhooks import signing

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "client"


def test_the_client_is_versioned_with_the_app():
    app = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    client = tomllib.loads((CLIENT / "pyproject.toml").read_text())["project"]
    assert client["version"] == app == mathlabel_client.__version__
    assert [requirement.split(">")[0] for requirement in client["dependencies"]] == ["httpx2", "tqdm"]


def test_pip_installs_the_client_in_a_fresh_environment_without_django(tmp_path, receiver):
    """`pip install ./client` in a new virtual environment (pip's usual indexes), then a request with it."""
    source = tmp_path / "client"  # a clean copy: no build folder or egg-info left by an editable install
    shutil.copytree(CLIENT, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(source)], env=env, capture_output=True, text=True
    )
    assert installed.returncode == 0, installed.stderr[-3000:]

    receiver.handler = lambda request: Answer.json(200, [{"kind": "export", "id": 4, "status": "succeeded"}])
    script = (
        "import importlib.util, sys\n"
        "from mathlabel_client import Client\n"
        "assert importlib.util.find_spec('django') is None, 'Django is installed'\n"
        "assert importlib.util.find_spec('pandas') is None, 'pandas came along'\n"
        f"jobs = Client({receiver.url!r}, 'a-token').jobs.list(kind='export')\n"
        "print(jobs[0]['kind'], jobs[0]['id'])\n"
    )
    ran = subprocess.run([str(python), "-c", script], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "export 4"
    assert receiver.requests[0].path == "/api/jobs/?kind=export"


def test_the_clients_webhook_check_accepts_what_the_app_signs_and_refuses_the_rest():
    secret, body = signing.new_secret(), b'{"event": "export.ready"}'
    headers = signing.signed_headers(secret, body, event="export.ready", event_id="e1", delivery_id=1, attempt=1)
    verify_webhook(secret, headers, body)
    verify_webhook(secret, {name.lower(): value for name, value in headers.items()}, body)
    for wrong_secret, wrong_body in ((secret, body + b" "), ("whsec_other", body)):
        with pytest.raises(WebhookSignatureError, match="does not match"):
            verify_webhook(wrong_secret, headers, wrong_body)
    old = signing.signed_headers(secret, body, event="e", event_id="e1", delivery_id=1, attempt=1, timestamp=1000)
    with pytest.raises(WebhookSignatureError, match="too old"):
        verify_webhook(secret, old, body)
    verify_webhook(secret, old, body, now=1100)
