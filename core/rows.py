"""Model instances from rows of fixed SQL, without the ORM's per-query work.

A raw queryset works out, on every query, which column is which field and how to convert each value; on the label
path (a few statements per request, every request) that bookkeeping cost more CPU than PostgreSQL spends running
the statements. Here the column list and the converters are worked out once per model and backend, and a row is
turned into an instance as the ORM would (`Model.from_db`, the fields' own converters: JSON text, SQLite's dates
and booleans).
"""

from __future__ import annotations

from collections.abc import Sequence

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


def fetch_one(sql: str, params) -> tuple | None:
    """The first row the statement gives, or None."""
    with connection.cursor() as cursor:
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
