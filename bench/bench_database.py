"""The PostgreSQL database a benchmark fills: the one given, or its own on the local server, created if missing;
Django set up on it, and rows written with COPY."""

from __future__ import annotations

import os
import sys
from pathlib import Path

LOCAL_SERVER = "postgres://postgres@127.0.0.1:5432"
REPO_ROOT = Path(__file__).resolve().parent.parent


def ensure_database(url: str | None, name: str, server: str = LOCAL_SERVER) -> str:
    if url:
        return url
    import psycopg

    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"


def setup_django(database_url: str, *, migrate: bool = False) -> None:
    """Django on `database_url` with production settings (DEBUG off), answering Django's test client."""
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("SECRET_KEY", "benchmark-only")
    os.environ["DEBUG"] = "0"
    os.environ["ALLOWED_HOSTS"] = "testserver"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(REPO_ROOT))
    import django

    django.setup()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)


def copy_rows(model, columns: list[str], rows) -> None:
    """Write `rows` (tuples in the order of `columns`, the model's field names) into the model's table with COPY."""
    from django.db import connection

    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    names = ", ".join(quote(model._meta.get_field(column).column) for column in columns)
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as pg_copy:
            for row in rows:
                pg_copy.write_row(row)


def reset_sequences(*models) -> None:
    """Move the id sequences of tables filled with explicit ids past their largest id."""
    from django.db import connection

    with connection.cursor() as cursor:
        for model in models:
            table = model._meta.db_table
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence(%s, 'id'), (SELECT MAX(id) FROM {connection.ops.quote_name(table)}))",
                [table],
            )


def copy_dataset(dataset, size: int, models: list[str], codes: list[str], now) -> int:
    """Fill `dataset` with size/4 short questions (one primary reference each) and `size` completions spread over
    them by `models`, numbered from 1 (the tables must be empty); returns the number of questions."""
    from verifybench.models import Completion, Question, ReferenceAnswer

    questions = max(1, size // 4)
    copy_rows(
        Question,
        [
            "id",
            "dataset",
            "external_id",
            "text",
            "domain",
            "source",
            "subject",
            "answer_type",
            "answer_class",
            "image",
            "metadata",
            "origin",
            "content_hash",
            "created_at",
        ],
        (
            (
                q + 1,
                dataset.pk,
                f"q{q}",
                f"Question {q}: compute $x^{q % 7}$.",
                "math_reasoning",
                "math_reasoning/MATH",
                "",
                codes[q % len(codes)],
                codes[q % len(codes)][0],
                "",
                "{}",
                "{}",
                f"q{q}",
                now,
            )
            for q in range(questions)
        ),
    )
    copy_rows(
        ReferenceAnswer,
        ["question", "final_answer", "solution", "is_primary", "created_at"],
        ((q + 1, str(q), "", True, now) for q in range(questions)),
    )
    copy_rows(
        Completion,
        [
            "id",
            "question",
            "external_id",
            "model_name",
            "sampling",
            "sample_index",
            "is_greedy",
            "text",
            "content_hash",
            "metadata",
            "origin",
            "created_at",
        ],
        (
            (
                c + 1,
                c % questions + 1,
                f"c{c}",
                models[c % len(models)],
                "{}",
                c // questions,
                False,
                f"So the answer is \\boxed{{{c % 11}}}.",
                f"c{c}",
                "{}",
                "{}",
                now,
            )
            for c in range(size)
        ),
    )
    reset_sequences(Question, Completion)
    return questions
