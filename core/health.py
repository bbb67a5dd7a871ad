"""Probes for a load balancer or an orchestrator: `/healthz` says the process serves requests, `/readyz` that it can
do its work: the database answers, every migration is applied, and the broker accepts connections.

Neither needs a session or says anything about the deployment beyond what each check found (no host, no URL)."""

from __future__ import annotations

from celery import current_app
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

_migrations_applied = [False]  # once applied, they stay applied for this process's code


@never_cache
@require_GET
def healthz(request):
    return JsonResponse({"status": "ok"})


def _database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return "ok"


def _migrations() -> str:
    if _migrations_applied[0]:
        return "ok"
    executor = MigrationExecutor(connection)
    pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if pending:
        return f"{len(pending)} migration(s) not applied"
    _migrations_applied[0] = True
    return "ok"


def _broker() -> str:
    with current_app.connection_for_write() as broker:
        broker.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=2)
    return "ok"


CHECKS = {"database": _database, "migrations": _migrations, "broker": _broker}


@never_cache
@require_GET
def readyz(request):
    results = {}
    for name, check in CHECKS.items():
        try:
            results[name] = check()
        except Exception as error:  # a probe reports what failed; it never fails itself
            results[name] = f"unavailable ({type(error).__name__})"
    ready = all(value == "ok" for value in results.values())
    return JsonResponse({"status": "ready" if ready else "not ready", "checks": results}, status=200 if ready else 503)
