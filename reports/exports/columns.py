"""Row layouts of the exported files, with the field names of the public releases. Pure module, no Django imports."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

STRING = "string"
BOOL = "bool"
INT = "int"
STRING_LIST = "string_list"
JSON = "json"  # any JSON value; a JSON string in CSV and Parquet
FLOAT = "float"

_ARROW_TYPES = {
    STRING: pa.string(),
    BOOL: pa.bool_(),
    INT: pa.int64(),
    STRING_LIST: pa.list_(pa.string()),
    JSON: pa.string(),
    FLOAT: pa.float64(),
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


def id_kind(json_types: list[str] | None) -> str:
    """An id column is an integer column when every imported file gave integers, else a string column."""
    return INT if json_types == ["int"] else STRING


def verifybench_columns(field_types: dict[str, list[str]] | None = None) -> tuple[Column, ...]:
    """The VerifyBench release's columns in its order, then `answer_type_code`, the taxonomy code the app added."""
    types = field_types or {}
    return (
        Column("question_id", id_kind(types.get("question_id"))),
        Column("question"),
        Column("answer"),
        Column("completion_id", id_kind(types.get("completion_id"))),
        Column("completion"),
        Column("completion_model"),
        Column("gold_correct", BOOL),
        Column("answer_type"),
        Column("answer_subtype"),
        Column("source"),
        Column("annotator", STRING_LIST),
        Column("answer_type_code"),
    )


def mumath_columns(field_types: dict[str, list[str]] | None = None) -> tuple[Column, ...]:
    return (
        Column("uuid", id_kind((field_types or {}).get("uuid"))),
        Column("problem_statement"),
        Column("golden_answer"),
        Column("model"),
        Column("model_output"),
        Column("label", BOOL),
    )


def matharena_columns(field_types: dict[str, list[str]] | None = None) -> tuple[Column, ...]:
    """MathArena's final-answer outputs: the graded row, with `correct` the final human label."""
    return (
        Column("problem_idx", id_kind((field_types or {}).get("problem_idx"))),
        Column("problem"),
        Column("model_name"),
        Column("model_config", JSON),
        Column("idx_answer", INT),
        Column("answer"),
        Column("gold_answer"),
        Column("parsed_answer", JSON),
        Column("correct", BOOL),
    )


VERIFYBENCH_COLUMNS = verifybench_columns()
MUMATH_COLUMNS = mumath_columns()
MATHARENA_COLUMNS = matharena_columns()


CONFIDENCE = Column("confidence", FLOAT)


def confidence_columns(columns: tuple[Column, ...], model_based: bool) -> tuple[Column, ...]:
    """The columns of a format, with `confidence` (the posterior probability of the final label under the project's
    annotator model; empty for items an adjudicator or an admin decided) added last when the project is model-based."""
    return (*columns, CONFIDENCE) if model_based else columns
