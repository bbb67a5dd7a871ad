"""What a label writes, as fixed SQL in two round trips: the label itself, then its task, its item and the item's
history events together.

A label is written on every submit, and each ORM save cost the web process more CPU than PostgreSQL spends on the
row, and a round trip of its own. The label goes first and alone (later reads of the same transaction, such as the
annotator model's refit count, see it). The rest are rows of other tables, none of which needs to see another's
change, so PostgreSQL takes them as one statement of data-modifying CTEs; SQLite runs them one after another.
Values are prepared by the models' own fields, so JSON and datetimes are stored exactly as the ORM stores them.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Model

from core.rows import prepared_cursor

from .models import Item, ItemEvent, Label, Task

# what moving an item through the workflow after a label may change; the caller holds the item's row lock
ITEM_FIELDS_A_LABEL_MOVES = (
    "state",
    "required_labels",
    "label_count",
    "started",
    "resolution",
    "final_value",
    "excluded",
    "confidence",
    "resolved_at",
)
_TASK_FIELDS_A_SUBMIT_MOVES = ("status", "finished_at")


_FIELDS: dict = {}


def _fields(model: type[Model], names: Sequence[str]) -> tuple[list, list[str]]:
    key = (model, tuple(names), connection.vendor)
    if key not in _FIELDS:
        fields = [model._meta.get_field(name) for name in names]
        _FIELDS[key] = (fields, [connection.ops.quote_name(field.column) for field in fields])
    return _FIELDS[key]


def _prepared(obj: Model, names: Sequence[str]) -> tuple[list[str], list]:
    fields, columns = _fields(type(obj), names)
    db = connections[DEFAULT_DB_ALIAS]  # the thread's connection, looked up once rather than once per field
    return columns, [field.get_db_prep_save(getattr(obj, field.attname), db) for field in fields]


def _insert_fields(model: type[Model]) -> list[str]:
    return [field.name for field in model._meta.concrete_fields if not field.primary_key]


def _insert(rows: Sequence[Model], *, returning: bool = False) -> tuple[str, list]:
    model = type(rows[0])
    params: list = []
    columns: list[str] = []
    for row in rows:
        columns, values = _prepared(row, _insert_fields(model))
        params += values
    placeholders = ", ".join(["(" + ", ".join(["%s"] * len(columns)) + ")"] * len(rows))
    sql = f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) VALUES {placeholders}"
    return (sql + " RETURNING id" if returning else sql), params


def _update(obj: Model, names: Sequence[str]) -> tuple[str, list]:
    columns, values = _prepared(obj, names)
    assignments = ", ".join(f"{column} = %s" for column in columns)
    return f"UPDATE {obj._meta.db_table} SET {assignments} WHERE id = %s", [*values, obj.pk]


def insert_label(label: Label) -> None:
    """Insert the label (its timestamps already set) and give it its id. The (item, annotator) constraint raises
    IntegrityError when the annotator already labeled the item."""
    sql, params = _insert([label], returning=True)
    with prepared_cursor() as cursor:
        cursor.execute(sql, params)
        label.pk = cursor.fetchone()[0]


def save_moves(*, item: Item, events: Sequence[ItemEvent], task: Task | None = None) -> None:
    """Store what a label moved, in one round trip on PostgreSQL: the item's workflow fields, the task's status
    (when the label ended a lease) and the history events (their created_at already set), in order."""
    statements = [_update(item, ITEM_FIELDS_A_LABEL_MOVES)]
    if task is not None:
        statements.append(_update(task, _TASK_FIELDS_A_SUBMIT_MOVES))
    if events:
        statements.append(_insert(events))
    with prepared_cursor() as cursor:
        if connection.vendor == "postgresql":
            ctes = ", ".join(f"w{index} AS ({sql})" for index, (sql, _) in enumerate(statements))
            cursor.execute(f"WITH {ctes} SELECT 1", [param for _, params in statements for param in params])
            return
        for sql, params in statements:
            cursor.execute(sql, params)
