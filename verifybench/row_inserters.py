"""How the new rows of an import reach the database: COPY on PostgreSQL, bulk_create elsewhere.

`CopyInserter` writes with COPY through psycopg, with primary keys drawn from the tables' sequences first, and
`BackgroundWriter` runs its inserts on a thread so that one batch is written while the next is parsed, inside the
import's transaction. `OrmInserter` uses bulk_create, for SQLite and any database without COPY. Both take the
parsed records and return the new primary keys in input order; what to insert is decided by `bulk_writer`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from typing import Any

from django.db import connection

from .importing.records import CompletionRecord, PriorLabelRecord, QuestionRecord
from .models import Completion, PriorLabel, Question, ReferenceAnswer


def _json(value: Any) -> str:
    if not value and isinstance(value, (dict, list)):
        return "{}" if isinstance(value, dict) else "[]"
    return json.dumps(value, ensure_ascii=False)


class OrmInserter:
    """bulk_create, for SQLite and any database without COPY. Returns primary keys in input order."""

    def insert_questions(self, dataset_id, questions: list[QuestionRecord], now) -> list[int]:
        objs = Question.objects.bulk_create(
            [
                Question(
                    dataset_id=dataset_id,
                    external_id=q.external_id,
                    text=q.text,
                    domain=q.domain,
                    source=q.source,
                    subject=q.subject,
                    answer_type=q.answer_type,
                    answer_class=q.answer_class,
                    metadata=q.metadata,
                    content_hash=q.content_hash,
                    origin=q.origin,
                )
                for q in questions
            ]
        )
        return [obj.pk for obj in objs]

    def insert_references(self, references: list[tuple[int, QuestionRecord]], now) -> None:
        ReferenceAnswer.objects.bulk_create(
            [
                ReferenceAnswer(question_id=qid, final_answer=q.final_answer, solution=q.solution, is_primary=True)
                for qid, q in references
            ]
        )

    def insert_completions(self, completions: list[tuple[int, CompletionRecord]], now) -> list[int]:
        objs = Completion.objects.bulk_create(
            [
                Completion(
                    question_id=qid,
                    external_id=c.external_id,
                    model_name=c.model_name,
                    sampling=c.sampling,
                    sample_index=c.sample_index,
                    is_greedy=c.is_greedy,
                    text=c.text,
                    content_hash=c.content_hash,
                    metadata=c.metadata,
                    origin=c.origin,
                )
                for qid, c in completions
            ]
        )
        return [obj.pk for obj in objs]

    def insert_prior_labels(self, labels: list[tuple[int, PriorLabelRecord]], source_format, source_file, now):
        PriorLabel.objects.bulk_create(
            [
                PriorLabel(
                    completion_id=cid,
                    is_correct=label.is_correct,
                    source_format=source_format,
                    annotators=label.annotators,
                    source_file=source_file,
                )
                for cid, label in labels
            ]
        )


class BackgroundWriter:
    """Runs submitted insert jobs one after the other on a thread, at most one job queued ahead.

    The jobs use the psycopg connection of the calling thread (psycopg connections are thread-safe), so they run
    inside the import transaction. A failed job's exception is raised again by the next submit() or wait().
    """

    def __init__(self):
        self._pending: Callable[[], None] | None = None
        self._error: BaseException | None = None
        self._condition = threading.Condition()
        self._busy = False
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="import-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            with self._condition:
                while self._pending is None and not self._closed:
                    self._condition.wait()
                if self._pending is None:
                    return
                job, self._pending, self._busy = self._pending, None, True
            try:
                if self._error is None:
                    job()
            except BaseException as exc:  # re-raised on the importing thread
                self._error = exc
            finally:
                with self._condition:
                    self._busy = False
                    self._condition.notify_all()

    def submit(self, job: Callable[[], None]) -> None:
        with self._condition:
            while self._pending is not None:
                self._condition.wait()
            self._raise_error()
            self._pending = job
            self._condition.notify_all()

    def wait(self) -> None:
        with self._condition:
            while self._pending is not None or self._busy:
                self._condition.wait()
            self._raise_error()

    def close(self) -> None:
        with self._condition:
            while self._pending is not None or self._busy:
                self._condition.wait()
            self._closed = True
            self._condition.notify_all()
        self._thread.join()

    def _raise_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error


class CopyInserter:
    """PostgreSQL COPY through psycopg 3, with primary keys drawn from the tables' sequences beforehand.

    Talks to psycopg directly (not through Django's per-thread connection) so that it can run on the
    background writer thread inside the same transaction.
    """

    def __init__(self):
        self._sequences: dict[str, str] = {}
        connection.ensure_connection()
        self._connection = connection.connection
        with self._connection.cursor() as cursor:
            # lz4 compresses the long texts several times faster than the default pglz; this transaction only.
            cursor.execute(
                "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)"
            )
            if cursor.fetchone():
                cursor.execute("SET LOCAL default_toast_compression = 'lz4'")

    def _allocate_ids(self, model, count: int) -> list[int]:
        table = model._meta.db_table
        with self._connection.cursor() as cursor:
            if table not in self._sequences:
                cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [table, model._meta.pk.column])
                self._sequences[table] = cursor.fetchone()[0]
            cursor.execute("SELECT nextval(%s) FROM generate_series(1, %s)", [self._sequences[table], count])
            return [row[0] for row in cursor.fetchall()]

    def _copy(self, model, columns: list[str], rows: Iterable[tuple]) -> None:
        table = connection.ops.quote_name(model._meta.db_table)
        column_list = ", ".join(connection.ops.quote_name(model._meta.get_field(c).column) for c in columns)
        with self._connection.cursor() as cursor:
            with cursor.copy(f"COPY {table} ({column_list}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)

    def insert_questions(self, dataset_id, questions: list[QuestionRecord], now) -> list[int]:
        ids = self._allocate_ids(Question, len(questions))
        self._copy(
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
                    pk,
                    dataset_id,
                    q.external_id,
                    q.text,
                    q.domain,
                    q.source,
                    q.subject,
                    q.answer_type,
                    q.answer_class,
                    "",
                    _json(q.metadata),
                    _json(q.origin),
                    q.content_hash,
                    now,
                )
                for pk, q in zip(ids, questions)
            ),
        )
        return ids

    def insert_references(self, references: list[tuple[int, QuestionRecord]], now) -> None:
        self._copy(
            ReferenceAnswer,
            ["question", "final_answer", "solution", "is_primary", "created_at"],
            ((qid, q.final_answer, q.solution, True, now) for qid, q in references),
        )

    def insert_completions(self, completions: list[tuple[int, CompletionRecord]], now) -> list[int]:
        ids = self._allocate_ids(Completion, len(completions))
        self._copy(
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
                    pk,
                    qid,
                    c.external_id,
                    c.model_name,
                    _json(c.sampling),
                    c.sample_index,
                    c.is_greedy,
                    c.text,
                    c.content_hash,
                    _json(c.metadata),
                    _json(c.origin),
                    now,
                )
                for pk, (qid, c) in zip(ids, completions)
            ),
        )
        return ids

    def insert_prior_labels(self, labels: list[tuple[int, PriorLabelRecord]], source_format, source_file, now):
        self._copy(
            PriorLabel,
            ["completion", "is_correct", "source_format", "annotators", "source_file", "imported_at"],
            (
                (cid, label.is_correct, source_format, _json(label.annotators), source_file, now)
                for cid, label in labels
            ),
        )
