"""Streaming row-by-row validation of an import file; no database access.

Each row (a JSONL line, a CSV row, a Parquet row: see `sources`) is checked on its own (decoding, a JSON object,
required fields and their types, the format's own rules) and against the rows before it (a key seen twice, one
question id with two different contents).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from .formats import RecordFormat, detect_format, format_names, get_format, json_type
from .hashing import completion_content_hash, question_content_hash
from .records import FieldError, ParsedRecord
from .report import LineError
from .sources import SourceRow, coerce_cell, jsonl_rows

# JSON escapes that decode to a NUL or to a surrogate; the exact check only runs on lines that have one.
_MAYBE_UNSTORABLE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


@dataclass(slots=True)
class LineOutcome:
    line: int
    raw: bytes
    record: ParsedRecord | None = None
    errors: list[LineError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.record is not None and not self.errors


@dataclass(slots=True)
class _SeenQuestion:
    line: int
    text: int
    final_answer: int
    solution: int
    attributes: tuple
    content_hash: str


class RecordReader:
    """Iterate over LineOutcome for every row: `rows` are SourceRows (see `sources`), or the byte lines of a JSONL
    file."""

    def __init__(self, rows: Iterable[SourceRow] | Iterable[bytes], fmt: str | None = None):
        self._rows = rows
        self.format: RecordFormat | None = get_format(fmt) if fmt else None
        self.bytes_read = 0
        self.line_count = 0
        self._seen_keys: set[str] = set()
        self._questions: dict[str, _SeenQuestion] = {}

    def _source_rows(self) -> Iterator[SourceRow]:
        rows = iter(self._rows)
        first = next(rows, None)
        if first is None:
            return
        if isinstance(first, SourceRow):
            yield from cast(Iterator[SourceRow], itertools.chain([first], rows))
        else:
            yield from jsonl_rows(cast(Iterator[bytes], itertools.chain([first], rows)))

    def __iter__(self) -> Iterator[LineOutcome]:
        for row in self._source_rows():
            self.bytes_read += len(row.raw)
            self.line_count += 1
            yield self._read_row(row)

    def _read_row(self, row: SourceRow) -> LineOutcome:
        number, obj = row.number, row.obj
        outcome = LineOutcome(line=number, raw=row.raw)
        if row.error:
            outcome.errors.append(LineError(number, "", row.error))
            return outcome
        if not isinstance(obj, dict):
            outcome.errors.append(LineError(number, "", f"expected a JSON object, got {json_type(obj)}"))
            return outcome
        record_format = self.format or self._detect(obj, number, outcome)
        if record_format is None:
            return outcome
        if row.cells_are_text:
            obj = _typed_cells(obj, record_format)
        for name, kind in record_format.required.items():
            if name not in obj:
                outcome.errors.append(LineError(number, name, "required field is missing"))
            elif not kind.check(obj[name]):
                outcome.errors.append(LineError(number, name, f"must be {kind.expected}, got {json_type(obj[name])}"))
        if _MAYBE_UNSTORABLE.search(row.raw.decode("utf-8", "replace")) or row.cells_are_text:
            outcome.errors.extend(_unstorable_strings(obj, number))
        if outcome.errors:
            return outcome
        try:
            record = record_format.parse(obj)
        except FieldError as exc:
            outcome.errors.append(LineError(number, exc.field, exc.reason))
            return outcome
        self._check_against_earlier_lines(record, outcome)
        if not outcome.errors:
            outcome.record = record
        return outcome

    def _detect(self, obj: dict[str, Any], number: int, outcome: LineOutcome) -> RecordFormat | None:
        detected = detect_format(obj)
        if detected is not None:
            self.format = detected
            return detected
        closest = _closest_format(obj)
        if closest is not None:
            # Report this line's missing fields against the format it most resembles, without adopting it.
            return closest
        outcome.errors.append(
            LineError(
                number,
                "",
                f"cannot tell the format from the fields {', '.join(sorted(obj)) or '(none)'}; "
                f"known formats: {', '.join(format_names())}",
            )
        )
        return None

    def _check_against_earlier_lines(self, record: ParsedRecord, outcome: LineOutcome) -> None:
        number = outcome.line
        key = "\x1f".join(record.key)
        if key in self._seen_keys:
            ids = ", ".join(record.key)
            outcome.errors.append(LineError(number, "", f"duplicate key ({ids}): this line repeats an earlier one"))
            return
        question = record.question
        attributes = (question.answer_type, question.answer_class, question.domain, question.source, question.subject)
        seen = self._questions.get(question.external_id)
        if seen is None:
            question.content_hash = question_content_hash(question.text, question.final_answer, question.solution)
            self._questions[question.external_id] = _SeenQuestion(
                number,
                hash(question.text),
                hash(question.final_answer),
                hash(question.solution),
                attributes,
                question.content_hash,
            )
        else:
            differences = [
                name
                for name, same in (
                    ("question text", hash(question.text) == seen.text),
                    ("reference answer", hash(question.final_answer) == seen.final_answer),
                    ("reference solution", hash(question.solution) == seen.solution),
                )
                if not same
            ]
            differences += [
                name
                for name, before, now in zip(
                    ("answer type", "answer class", "domain", "source", "subject"),
                    seen.attributes,
                    attributes,
                )
                if before != now
            ]
            if differences:
                outcome.errors.append(
                    LineError(
                        number,
                        differences[0],
                        f"question {question.external_id!r} has a different {' and '.join(differences)} "
                        f"than on line {seen.line}",
                    )
                )
                return
            question.content_hash = seen.content_hash
        if record.completion is not None:
            completion = record.completion
            completion.content_hash = completion_content_hash(completion.model_name, completion.text)
        self._seen_keys.add(key)


def _typed_cells(obj: dict[str, Any], record_format: RecordFormat) -> dict[str, Any]:
    kinds = {**record_format.optional, **record_format.required}
    return {
        name: coerce_cell(kinds[name].expected, value) if name in kinds and isinstance(value, str) else value
        for name, value in obj.items()
    }


def _closest_format(obj: dict[str, Any]) -> RecordFormat | None:
    best, best_overlap = None, 0.0
    for name in format_names():
        candidate = get_format(name)
        overlap = sum(1 for field_name in candidate.required if field_name in obj) / max(len(candidate.required), 1)
        if overlap > best_overlap:
            best, best_overlap = candidate, overlap
    return best if best_overlap >= 0.5 else None


def _unstorable_strings(obj: dict[str, Any], number: int) -> list[LineError]:
    """NUL characters and unpaired surrogates decode from JSON escapes but no database can store them."""
    errors = []
    for name, value in obj.items():
        reason = _unstorable_reason(value)
        if reason:
            errors.append(LineError(number, name, reason))
    return errors


def _unstorable_reason(value: Any) -> str | None:
    if isinstance(value, str):
        if "\x00" in value:
            return "contains a NUL character (\\u0000), which cannot be stored"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "contains an unpaired surrogate escape, which is not valid Unicode"
        return None
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list):
        for item in value:
            reason = _unstorable_reason(item)
            if reason:
                return reason
    return None
