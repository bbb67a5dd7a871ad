"""The probes a load balancer polls: /healthz (the process serves) and /readyz (database, migrations, broker)."""

from __future__ import annotations

import socket

import pytest
from django.db.migrations.recorder import MigrationRecorder

from core import health


@pytest.fixture(autouse=True)
def _forget_applied_migrations(monkeypatch):
    monkeypatch.setattr(health, "_migrations_applied", [False])


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_healthz_answers_anyone_without_the_database(client):
    response = client.get("/healthz")  # no django_db mark: any database access would raise
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db
def test_readyz_reports_each_check_when_everything_is_up(client):
    response = client.get("/readyz")
    assert response.status_code == 200, response.json()
    assert response.json() == {"status": "ready", "checks": {"database": "ok", "migrations": "ok", "broker": "ok"}}
    assert client.post("/readyz").status_code == 405


@pytest.mark.django_db
def test_readyz_is_503_with_a_migration_not_applied(client):
    latest = MigrationRecorder.Migration.objects.filter(app="grading").order_by("-name").first()
    latest.delete()
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["migrations"] == "1 migration(s) not applied"
    assert response.json()["checks"]["database"] == "ok"


@pytest.mark.django_db
def test_readyz_is_503_when_the_broker_is_unreachable_and_names_no_address(client):
    from celery import current_app

    from tests.conftest import _forget_broker_connections

    port = closed_port()
    saved = current_app.conf.broker_url
    current_app.conf.broker_url = f"redis://:s3cret@127.0.0.1:{port}/0"
    _forget_broker_connections(current_app)
    try:
        response = client.get("/readyz")
    finally:
        current_app.conf.broker_url = saved
        _forget_broker_connections(current_app)  # nothing cached with the unreachable broker outlives the test
    assert response.status_code == 503
    assert response.json()["checks"]["broker"].startswith("unavailable (")
    body = response.content.decode()
    assert str(port) not in body and "s3cret" not in body and "127.0.0.1" not in body
