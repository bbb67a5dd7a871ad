"""Fixtures for webhooks: a local receiver, loopback allowed on the egress list, a project, and the verification
snippet exactly as the README documents it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.annotation.conftest import _fast_password_hashing, corpus, make_project  # noqa: F401  (fixtures)
from tests.exports.conftest import export_root, three_annotators, verifybench_data  # noqa: F401  (fixtures)

README = Path(__file__).resolve().parents[2] / "README.md"


def documented_verifier():
    """`verify_mathlabel_webhook` from the README's webhooks section, run as a receiver would paste it."""
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    snippet = next(block for block in blocks if "def verify_mathlabel_webhook" in block)
    namespace: dict = {}
    exec(compile(snippet, "README.md (webhook verification)", "exec"), namespace)
    return namespace["verify_mathlabel_webhook"]


@pytest.fixture
def verify_webhook():
    return documented_verifier()


@pytest.fixture
def fast_retries(settings):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0
    settings.WEBHOOK_MAX_ATTEMPTS = 4
    settings.WEBHOOK_TIMEOUT_SECONDS = 5
    return settings
