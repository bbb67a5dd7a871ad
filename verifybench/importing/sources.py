"""The rows of an import file, whatever its type: JSON Lines, CSV (with a header row) or Parquet. Pure module.

Each row comes out as a `SourceRow`: its number in the file (the line of JSONL, the line a CSV row starts on, the
row of a Parquet file), its raw text (kept for the rejects file), and either the decoded object or why it could not
be decoded. Validation against a format is the reader's job (`reader.RecordReader`).

CSV cells are text: `RecordReader` turns them into the types the detected format expects (`coerce_cell`), so a
CSV written by the exports (booleans as true/false, lists and objects as JSON) imports back. An empty cell is a
missing value.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from core import jsonlimits

FILE_TYPES = ("jsonl", "csv", "parquet")
_BOM = b"\xef\xbb\xbf"
_PARQUET_MAGIC = b"PAR1"


@dataclass(slots=True)
class SourceRow:
    number: int
    raw: bytes
    obj: Any = None
    error: str = ""
    cells_are_text: bool = False


class LineTooLong(ValueError):
    """A line longer than the import limit; reported on its line, and the file is read on."""


@dataclass(frozen=True, slots=True)
class OverlongLine:
    """What a bounded line reader gives instead of a line over the limit: its first bytes and its length; the rest
    was read past without being kept, so memory stays bounded by the limit."""

    head: bytes
    length: int


def detect_file_type(name: str, head: bytes) -> str:
    """jsonl, csv or parquet, from the first bytes (Parquet's magic number, a JSON object) and the file name."""
    if head.startswith(_PARQUET_MAGIC):
        return "parquet"
    lowered = name.lower()
    if lowered.endswith((".parquet", ".pq")):
        return "parquet"
    if lowered.endswith((".csv", ".tsv")):
        return "csv"
    stripped = head.removeprefix(_BOM).lstrip()
    if stripped.startswith((b"{", b"[")) or lowered.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    return "csv" if b"," in stripped.split(b"\n", 1)[0] else "jsonl"


def decode_json_line(text: str, max_depth: int = jsonlimits.DEFAULT_MAX_DEPTH) -> tuple[Any, str]:
    """(object, "") or (None, why it is not valid JSON); nesting deeper than `max_depth` is an error, never a
    crash."""
    text = text.rstrip("\r\n")  # the line's own end is no part of the value; an error is placed within the line
    try:
        return jsonlimits.loads(text, max_depth=max_depth), ""
    except json.JSONDecodeError as exc:
        return None, describe_json_error(text, exc)
    except jsonlimits.JSONTooDeep as exc:
        return None, f"not valid JSON: {exc}"


def describe_json_error(text: str, exc: json.JSONDecodeError) -> str:
    """Why a line is not JSON and where: the 1-based column (in characters) of the offending character, or, when
    the line stops before its value is complete (a truncated file), that it ends early."""
    what = exc.msg.lower().removesuffix(" at")  # "Unterminated string starting at" names its own position
    if not text[exc.pos :].strip() or what.startswith("unterminated string"):
        return f"not valid JSON: the line ends before the value is complete ({what}); is it truncated?"
    return f"not valid JSON: {what} at column {exc.pos + 1}"


def jsonl_rows(
    lines: Iterable[bytes | str | OverlongLine], *, max_line_bytes: int | None = None
) -> Iterator[SourceRow]:
    for number, raw in enumerate(lines, start=1):
        if isinstance(raw, OverlongLine):
            yield SourceRow(
                number,
                raw.head,
                error=f"the line is {raw.length:,} bytes long; the limit is "
                f"{max_line_bytes or len(raw.head):,} (IMPORT_MAX_LINE_BYTES)",
            )
            continue
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        if number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        if not raw.strip():
            continue
        if max_line_bytes is not None and len(raw) > max_line_bytes:
            yield SourceRow(
                number,
                raw[:200],
                error=f"the line is {len(raw):,} bytes long; the limit is {max_line_bytes:,} (IMPORT_MAX_LINE_BYTES)",
            )
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield SourceRow(number, raw, error=f"invalid UTF-8 at byte {exc.start + 1} of the line")
            continue
        obj, error = decode_json_line(text)
        yield SourceRow(number, raw, obj=obj, error=error)


class _LineCounter:
    """The text lines the csv module reads, counted, so that a row can say on which line of the file it starts."""

    def __init__(self, lines: Iterable[bytes | str | OverlongLine], max_line_bytes: int | None):
        self._lines = iter(lines)
        self.line = 0
        self.max_line_bytes = max_line_bytes

    def __iter__(self):
        return self

    def __next__(self) -> str:
        raw = next(self._lines)
        self.line += 1
        if isinstance(raw, OverlongLine):
            raise LineTooLong(
                f"line {self.line} is {raw.length:,} bytes long; the limit is "
                f"{self.max_line_bytes or len(raw.head):,} (IMPORT_MAX_LINE_BYTES)"
            )
        if isinstance(raw, str):
            return raw
        if self.line == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        if self.max_line_bytes is not None and len(raw) > self.max_line_bytes:
            raise LineTooLong(
                f"line {self.line} is {len(raw):,} bytes long; the limit is {self.max_line_bytes:,} "
                "(IMPORT_MAX_LINE_BYTES)"
            )
        return raw.decode("utf-8")


def csv_rows(lines: Iterable[bytes | str | OverlongLine], *, max_line_bytes: int | None = None) -> Iterator[SourceRow]:
    """Rows of a CSV file with a header row, as objects of text cells (empty cells left out)."""
    stream = _LineCounter(lines, max_line_bytes)
    try:
        reader = csv.reader(stream)
        header = next(reader, None)
    except (UnicodeDecodeError, LineTooLong, csv.Error) as exc:
        yield SourceRow(stream.line or 1, b"", error=_csv_problem(exc))
        return
    if header is None:
        return
    names = [name.strip() for name in header]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates or "" in names:
        yield SourceRow(
            1,
            ",".join(header).encode(),
            error="the header row names a column twice or leaves one "
            f"unnamed ({', '.join(duplicates) or 'empty name'})",
        )
        return
    while True:
        start = stream.line + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except (UnicodeDecodeError, LineTooLong, csv.Error) as exc:
            yield SourceRow(start, b"", error=_csv_problem(exc))
            return
        raw = _csv_line(cells)
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(names):
            yield SourceRow(start, raw, error=f"has {len(cells)} cells; the header has {len(names)}")
            continue
        yield SourceRow(
            start, raw, obj={name: cell for name, cell in zip(names, cells) if cell != ""}, cells_are_text=True
        )


def _csv_line(cells: list[str]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(cells)
    return buffer.getvalue().encode("utf-8")


def _csv_problem(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"invalid UTF-8 at byte {exc.start + 1} of the line"
    if isinstance(exc, LineTooLong):
        return str(exc)
    return f"not valid CSV: {exc}"


def parquet_rows(source: str | IO[bytes], *, batch_rows: int = 1000) -> Iterator[SourceRow]:
    """Rows of a Parquet file, read a batch at a time (memory stays bounded by the batch)."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(source)
    except Exception as exc:  # pyarrow raises several types for a file that is not Parquet
        yield SourceRow(0, b"", error=f"not a readable Parquet file: {exc}")
        return
    number = 0
    for batch in parquet.iter_batches(batch_size=batch_rows):
        for obj in batch.to_pylist():
            number += 1
            row = {name: value for name, value in obj.items() if value is not None}
            yield SourceRow(number, json.dumps(row, ensure_ascii=False, default=str).encode("utf-8"), obj=row)


# -- CSV cells to the types a format expects ----------------------------------------------------------------------

_TRUE, _FALSE = {"true", "yes", "1"}, {"false", "no", "0"}


def coerce_cell(expected: str, text: str) -> Any:
    """A CSV cell as the kind a format expects (`FieldKind.expected`); the text itself when it does not convert,
    so that the format's own check reports the problem."""
    cell = text.strip()
    if expected == "true or false":
        lowered = cell.lower()
        return True if lowered in _TRUE else False if lowered in _FALSE else text
    if "integer" in expected:
        return int(cell) if cell.lstrip("-").isdigit() else text
    if expected in ("a list", "an object", "any value", "a string or an object") and cell[:1] in ("[", "{"):
        obj, error = decode_json_line(cell)
        return text if error else obj
    return text
