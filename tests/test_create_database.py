"""`make run` on a PostgreSQL server that has no database of that name yet: `create_database` makes it (once), so
the README's PostgreSQL steps need no `createdb`."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.db import connection

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

ROOT = Path(__file__).resolve().parent.parent


def test_the_database_is_created_once_when_missing():
    settings = connection.settings_dict
    name = f"fresh_{uuid.uuid4().hex[:10]}"
    user = settings.get("USER") or "postgres"
    url = f"postgres://{user}@{settings.get('HOST') or '127.0.0.1'}:{settings.get('PORT') or 5432}/{name}"
    env = {**os.environ, "DATABASE_URL": url}
    try:
        first = subprocess.run(
            [sys.executable, "manage.py", "create_database"], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert first.returncode == 0, first.stderr
        assert f"created the PostgreSQL database {name!r}" in first.stdout
        second = subprocess.run(
            [sys.executable, "manage.py", "create_database"], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert second.returncode == 0 and second.stdout == ""
    finally:
        with psycopg.connect(
            dbname="postgres", host=settings.get("HOST") or "127.0.0.1", user=user, autocommit=True
        ) as server:
            server.execute(f'DROP DATABASE IF EXISTS "{name}"')
