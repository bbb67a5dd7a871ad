"""Model instances from rows of fixed SQL, without the ORM's per-query work.

A raw queryset works out, on every query, which column is which field and how to convert each value; on the label
path (a few statements per request, every request) that bookkeeping cost more CPU than PostgreSQL spends running
the statements. Here the column list and the converters are worked out once per model and backend, and a row is
turned into an instance as the ORM would (`Model.from_db`, the fields' own converters: JSON text, SQLite's dates
and booleans).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Model

_CONVERTERS: dict = {}
_COLUMNS: dict = {}


def columns(model: type[Model], alias: str) -> str:
    """The model's columns as a SELECT list, in field order, qualified by `alias`."""
    key = (model, alias, connection.vendor)
    if key not in _COLUMNS:
        quote = connection.ops.quote_name
        # a concrete field always has a column (only a field that is not stored has none)
        _COLUMNS[key] = ", ".join(f"{alias}.{quote(str(field.column))}" for field in model._meta.concrete_fields)
    return _COLUMNS[key]


def width(model: type[Model]) -> int:
    """How many values of a row `columns` gives."""
    return len(model._meta.concrete_fields)


def _converters(model: type[Model]) -> list[tuple[object, list]]:
    key = (model, connection.vendor)
    if key not in _CONVERTERS:
        cols = [field.get_col(model._meta.db_table) for field in model._meta.concrete_fields]
        _CONVERTERS[key] = [
            (col, [*connection.ops.get_db_converters(col), *col.field.get_db_converters(connection)]) for col in cols
        ]
    return _CONVERTERS[key]


def instance(model: type[Model], values: Sequence):
    """The instance a row of `columns(model, ...)` describes."""
    converted = list(values)
    db = connections[DEFAULT_DB_ALIAS]
    for index, (col, converters) in enumerate(_converters(model)):
        for convert in converters:
            converted[index] = convert(converted[index], col, db)
    return model.from_db(connection.alias, _attnames(model), converted)


_ATTNAMES: dict = {}


def _attnames(model: type[Model]) -> list[str]:
    if model not in _ATTNAMES:
        _ATTNAMES[model] = [field.attname for field in model._meta.concrete_fields]
    return _ATTNAMES[model]


def prepared_cursor():
    """A cursor for fixed SQL that runs on every label: on PostgreSQL its statements are prepared on first use and
    their plans kept for the connection's life. Planning these joins cost PostgreSQL several times what running them
    does (0.8 ms against 0.07 ms for a task with its item and project). Elsewhere, or with
    DATABASE_PREPARED_STATEMENTS off, Django's own cursor. Logging and error translation are Django's either way."""
    if connection.vendor != "postgresql" or not settings.DATABASE_PREPARED_STATEMENTS:
        return connection.cursor()
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    preparing, logging = _preparing_cursor_classes()
    with connection.wrap_database_errors:
        cursor = preparing(connection.connection)
    return logging(cursor, connection) if connection.queries_logged else connection.make_cursor(cursor)


@functools.cache
def _preparing_cursor_classes():
    import psycopg
    from django.db.backends.postgresql.base import CursorDebugWrapper

    class PreparingCursor(psycopg.Cursor):
        """Binds parameters on the server and prepares every statement (Django turns automatic preparing off)."""

        def execute(self, query, params=None, *, prepare=None, binary=None):
            return super().execute(query, params, prepare=True, binary=binary)

    class LoggingPreparedCursor(CursorDebugWrapper):
        """Django's query log (DEBUG, tests) with the statement and its values, as for Django's own cursors: the
        driver keeps no text of a statement it runs by its prepared name."""

        def debug_sql(self, sql=None, params=None, use_last_executed_query=False, many=False):
            if use_last_executed_query and not many:
                try:
                    sql, use_last_executed_query = self.db.ops.compose_sql(sql, params), False
                except Exception:  # values the statement itself will refuse: log its text, let it fail as it would
                    use_last_executed_query = False
            return super().debug_sql(sql, params, use_last_executed_query, many)

    return PreparingCursor, LoggingPreparedCursor


def fetch_one(sql: str, params) -> tuple | None:
    """The first row the statement gives (a prepared statement on PostgreSQL), or None."""
    with prepared_cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def split(row: Sequence, *models: type[Model]) -> list:
    """The instances of `models`, whose `columns` come one after another at the start of the row, followed by the
    row's remaining values."""
    parts: list = []
    start = 0
    for model in models:
        end = start + width(model)
        parts.append(instance(model, row[start:end]))
        start = end
    return [*parts, *row[start:]]
