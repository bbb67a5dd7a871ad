"""The PostgreSQL database a benchmark fills: the one given, or its own on the local server, created if missing."""

from __future__ import annotations

LOCAL_SERVER = "postgres://postgres@127.0.0.1:5432"


def ensure_database(url: str | None, name: str, server: str = LOCAL_SERVER) -> str:
    if url:
        return url
    import psycopg

    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"
