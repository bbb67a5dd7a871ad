"""A live server (pytest-django's, on the test database) and clients signed in as the lab's people.

Jobs run inside the requests here (Celery's eager mode, as everywhere in the tests unless a worker is started);
the README's walk-through runs with a real worker instead (test_readme_walkthrough)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token

from core import roles
from mathlabel_client import Client
from tests.conftest import allow_judge_endpoint

PASSWORD = "mathlabel-demo"


def lab_rows(questions: int = 3) -> list[dict]:
    """Per question two models with two samples each: sample 0 right, sample 1 off by one."""
    rows = []
    for q in range(questions):
        answer = 7 * q + 5
        for model in ("lab-model-a", "lab-model-b"):
            for sample in range(2):
                shown = answer if sample == 0 else answer + 1
                rows.append(
                    {
                        "question_id": f"q{q}",
                        "question": f"Compute ${7 * q} + 5$.",
                        "reference_answer": str(answer),
                        "completion_id": f"q{q}-{model}-{sample}",
                        "completion": f"So the answer is $\\boxed{{{shown}}}$.",
                        "model": model,
                        "sample_index": sample,
                        "answer_type": "A1",
                    }
                )
    return rows


@dataclass
class Lab:
    url: str
    researcher: User
    token: str
    client: Client
    annotators: list[Client]
    adjudicator: Client
    admin: Client

    def close(self) -> None:
        for client in (self.client, *self.annotators, self.adjudicator, self.admin):
            client.close()


def people(make_user) -> dict[str, User]:
    return {
        "rita": make_user(roles.RESEARCHER, username="rita", password=PASSWORD),
        "annotator1": make_user(roles.ANNOTATOR, username="annotator1", password=PASSWORD),
        "annotator2": make_user(roles.ANNOTATOR, username="annotator2", password=PASSWORD),
        "adjudicator1": make_user(roles.ADJUDICATOR, username="adjudicator1", password=PASSWORD),
        "admin1": make_user(roles.ADMIN, username="admin1", password=PASSWORD),
    }


def token_of(user: User) -> str:
    return Token.objects.get_or_create(user=user)[0].key


@pytest.fixture
def server_settings(settings, tmp_path):
    settings.IMPORT_UPLOAD_DIR = tmp_path / "uploads"
    settings.EXPORT_ROOT = tmp_path / "exports"
    settings.API_TOKEN_THROTTLE_RATE = "1000/min"
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0
    return settings


@pytest.fixture
def lab(live_server, server_settings, make_user, receiver):
    users = people(make_user)
    allow_judge_endpoint(receiver.url)
    url = live_server.url
    made = Lab(
        url=url,
        researcher=users["rita"],
        token=token_of(users["rita"]),
        client=Client(url, token_of(users["rita"])),
        annotators=[Client(url, token_of(users[name])) for name in ("annotator1", "annotator2")],
        adjudicator=Client(url, token_of(users["adjudicator1"])),
        admin=Client(url, token_of(users["admin1"])),
    )
    yield made
    made.close()
