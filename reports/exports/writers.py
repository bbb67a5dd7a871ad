"""Streaming writers of the data files of a bundle: JSONL, CSV and Parquet. Pure module, no Django imports.

Every writer takes rows (dicts keyed by column name) in batches and never holds more than one batch.
CSV spells booleans `true`/`false` and writes lists and JSON values as JSON text; Parquet keeps the typed values
and writes one row group per `row_group_rows` rows.
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .columns import BOOL, FLOAT, INT, JSON, STRING, STRING_LIST, Column, arrow_schema

FILE_TYPES = ("jsonl", "csv", "parquet")


@dataclass(frozen=True)
class WrittenFile:
    name: str
    path: Path
    rows: int
    bytes: int
    sha256: str


def sha256_of(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


class _Writer:
    def __init__(self, path: Path, columns: tuple[Column, ...]):
        self.path = Path(path)
        self.columns = columns
        self.names = [column.name for column in columns]
        self.rows = 0

    def write(self, rows: list[dict[str, Any]]) -> None:
        if rows:
            self._write(rows)
            self.rows += len(rows)

    def _write(self, rows: list[dict[str, Any]]) -> None:
        raise NotImplementedError

    def close(self) -> WrittenFile:
        self._close()
        return WrittenFile(self.path.name, self.path, self.rows, self.path.stat().st_size, sha256_of(self.path))

    def _close(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        try:
            self._close()
        except Exception:  # the file is being thrown away; a second error would hide the first
            pass


class JsonlWriter(_Writer):
    def __init__(self, path, columns):
        super().__init__(path, columns)
        self._handle = open(self.path, "w", encoding="utf-8", newline="\n")

    def _write(self, rows):
        self._handle.write(
            "".join(json.dumps({name: row[name] for name in self.names}, ensure_ascii=False) + "\n" for row in rows)
        )

    def _close(self):
        self._handle.close()


def _csv_cell(value: Any, kind: str) -> Any:
    if value is None:
        return ""
    if kind == BOOL:
        return "true" if value else "false"
    if kind in (STRING_LIST, JSON):
        return json.dumps(value, ensure_ascii=False)
    return value


def _parquet_value(value: Any, kind: str) -> Any:
    if kind == JSON:
        return json.dumps(value, ensure_ascii=False)
    if kind == STRING and value is not None and not isinstance(value, str):
        return str(value)  # e.g. a numeric reference answer in a string column
    return value


class CsvWriter(_Writer):
    def __init__(self, path, columns):
        super().__init__(path, columns)
        self._handle = open(self.path, "w", encoding="utf-8", newline="")
        self._csv = csv.writer(self._handle)
        self._csv.writerow(self.names)

    def _write(self, rows):
        self._csv.writerows([_csv_cell(row[c.name], c.kind) for c in self.columns] for row in rows)

    def _close(self):
        self._handle.close()


class ParquetWriter(_Writer):
    """Row groups end at `row_group_rows` rows or `row_group_bytes` of text, whichever comes first, so long
    completions do not make a row group (held in memory until written) arbitrarily large."""

    def __init__(self, path, columns, row_group_rows: int = 10_000, row_group_bytes: int = 32 * 1024 * 1024):
        super().__init__(path, columns)
        self.schema = arrow_schema(columns)
        self.row_group_rows = row_group_rows
        self.row_group_bytes = row_group_bytes
        self._pending: list[dict[str, Any]] = []
        self._pending_bytes = 0
        self._writer = pq.ParquetWriter(self.path, self.schema, compression="zstd")

    def _write(self, rows):
        for row in rows:
            values = {c.name: _parquet_value(row[c.name], c.kind) for c in self.columns}
            self._pending.append(values)
            self._pending_bytes += sum(len(value) for value in values.values() if isinstance(value, str))
            if len(self._pending) >= self.row_group_rows or self._pending_bytes >= self.row_group_bytes:
                self._flush()

    def _flush(self):
        if self._pending:
            self._writer.write_table(
                pa.Table.from_pylist(self._pending, schema=self.schema), row_group_size=len(self._pending)
            )
            self._pending, self._pending_bytes = [], 0

    def _close(self):
        try:
            self._flush()
        finally:
            self._writer.close()


_WRITERS = {"jsonl": JsonlWriter, "csv": CsvWriter, "parquet": ParquetWriter}


def open_writer(file_type: str, path: Path, columns: tuple[Column, ...]) -> _Writer:
    try:
        return _WRITERS[file_type](path, columns)
    except KeyError:
        raise ValueError(f"unknown file type {file_type!r}; expected one of {', '.join(FILE_TYPES)}") from None


def read_rows(path: Path, columns: tuple[Column, ...]) -> list[dict[str, Any]]:
    """Read a written data file back into typed rows (for checks and tests; loads the whole file)."""
    path = Path(path)
    if path.suffix == ".jsonl":
        with open(path, encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]
    if path.suffix == ".csv":
        with open(path, encoding="utf-8", newline="") as handle:
            return [{c.name: _from_csv(row[c.name], c.kind) for c in columns} for row in csv.DictReader(handle)]
    if path.suffix == ".parquet":
        rows = pq.read_table(path).to_pylist()
        json_columns = [c.name for c in columns if c.kind == JSON]
        for row in rows:
            for name in json_columns:
                row[name] = json.loads(row[name]) if row[name] is not None else None
        return rows
    raise ValueError(f"not a data file: {path.name}")


def _from_csv(text: str, kind: str) -> Any:
    if kind == BOOL:
        return {"true": True, "false": False}.get(text)
    if kind == INT:
        return int(text) if text else None
    if kind == FLOAT:
        return float(text) if text else None
    if kind in (STRING_LIST, JSON):
        return json.loads(text) if text else None
    return text
