"""Parsing and validation of benchmark import files. Pure Python: no Django imports here."""
from .formats import (
    ANY,
    BOOLEAN,
    IDENTIFIER,
    INTEGER,
    LIST,
    NON_NEGATIVE_INTEGER,
    OBJECT,
    TEXT,
    TEXT_OR_NUMBER,
    TEXT_OR_OBJECT,
    FieldKind,
    RecordFormat,
    UnknownFormat,
    WrittenRecord,
    detect_format,
    format_names,
    get_format,
    register_format,
    unregister_format,
)
from .hashing import completion_content_hash, normalize_text, question_content_hash
from .reader import LineOutcome, RecordReader
from .records import CompletionRecord, FieldError, ParsedRecord, PriorLabelRecord, QuestionRecord
from .report import Conflict, ImportReport, LineError

__all__ = [
    "ANY", "BOOLEAN", "IDENTIFIER", "INTEGER", "LIST", "NON_NEGATIVE_INTEGER", "OBJECT", "TEXT", "TEXT_OR_NUMBER",
    "TEXT_OR_OBJECT", "FieldKind", "RecordFormat", "UnknownFormat", "WrittenRecord", "detect_format",
    "format_names", "get_format", "register_format", "unregister_format", "completion_content_hash",
    "normalize_text", "question_content_hash", "LineOutcome", "RecordReader", "CompletionRecord", "FieldError",
    "ParsedRecord", "PriorLabelRecord", "QuestionRecord", "Conflict", "ImportReport", "LineError",
]
