"""Row layouts of the exported files, with the field names of the public releases. Pure module, no Django imports."""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

STRING = "string"
BOOL = "bool"
INT = "int"
INT_LIST = "int_list"
JSON = "json"  # any JSON value; a JSON string in CSV and Parquet

_ARROW_TYPES = {
    STRING: pa.string(),
    BOOL: pa.bool_(),
    INT: pa.int64(),
    INT_LIST: pa.list_(pa.int64()),
    JSON: pa.string(),
}


@dataclass(frozen=True)
class Column:
    name: str
    kind: str = STRING

    def __post_init__(self):
        if self.kind not in _ARROW_TYPES:
            raise ValueError(f"unknown column kind {self.kind!r}")


def arrow_schema(columns: tuple[Column, ...]) -> pa.Schema:
    return pa.schema([pa.field(column.name, _ARROW_TYPES[column.kind]) for column in columns])


VERIFYBENCH_COLUMNS: tuple[Column, ...] = (
    Column("question_id"),
    Column("question"),
    Column("answer"),
    Column("completion_id"),
    Column("completion"),
    Column("completion_model"),
    Column("gold_correct", BOOL),
    Column("answer_type"),
    Column("answer_subtype"),
    Column("source"),
    Column("annotator", INT_LIST),
)

MUMATH_COLUMNS: tuple[Column, ...] = (
    Column("uuid"),
    Column("problem_statement"),
    Column("golden_answer"),
    Column("model"),
    Column("model_output"),
    Column("label", BOOL),
)
