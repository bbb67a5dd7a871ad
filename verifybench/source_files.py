"""The files an import reads and writes: a path or an uploaded file object read line by line, the rejects file of
`--skip-invalid`, and the progress bar of the command."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO

from django.conf import settings

from .importing.sources import OverlongLine, csv_rows, detect_file_type, jsonl_rows, parquet_rows


class open_rows:
    """Context manager yielding (rows of the file, total size in bytes or None, file type).

    `source` is a path or a binary file object; the file type is detected from its first bytes and its name unless
    given. Lines longer than `max_line_bytes` are reported on their line without being held in memory."""

    def __init__(
        self, source, *, source_name: str = "", file_type: str | None = None, max_line_bytes: int | None = None
    ):
        self.source = source
        self.source_name = source_name
        self.file_type = file_type
        self.max_line_bytes = max_line_bytes
        self._owned: IO[bytes] | None = None

    def __enter__(self):
        if isinstance(self.source, (str, os.PathLike)):
            self._owned = open(self.source, "rb")
            handle, size = self._owned, os.fstat(self._owned.fileno()).st_size
        else:
            handle, size = self.source, size_of(self.source)
        file_type = self.file_type or detect_file_type(
            self.source_name or str(getattr(handle, "name", "")), _peek(handle)
        )
        if file_type == "parquet":
            return parquet_rows(handle), size, file_type
        lines = bounded_lines(handle, self.max_line_bytes)
        if file_type == "csv":
            return csv_rows(lines, max_line_bytes=self.max_line_bytes), size, file_type
        return jsonl_rows(lines, max_line_bytes=self.max_line_bytes), size, file_type

    def __exit__(self, *exc_info):
        if self._owned is not None:
            self._owned.close()
        return False


def _peek(handle) -> bytes:
    """The first bytes of a file object, leaving it where it was."""
    try:
        position = handle.tell()
        head = handle.read(64)
        handle.seek(position)
    except (AttributeError, OSError, ValueError):
        return b""
    return head.encode("utf-8") if isinstance(head, str) else head


_CHUNK = 1 << 20


def bounded_lines(file, max_bytes: int | None) -> Iterator[bytes | str | OverlongLine]:
    """Lines of a file object one at a time; a line longer than `max_bytes` comes out as an OverlongLine, read past
    in chunks without being kept."""
    readline = getattr(file, "readline", None)
    if readline is None:
        yield from file
        return
    if max_bytes is None:
        while line := readline():
            yield line
        return
    while line := readline(max_bytes + 1):
        if len(line) <= max_bytes or line.endswith(b"\n" if isinstance(line, bytes) else "\n"):
            yield line
            continue
        head, length = line[:200], len(line)
        while chunk := readline(_CHUNK):
            length += len(chunk)
            if chunk.endswith(b"\n" if isinstance(chunk, bytes) else "\n"):
                break
        yield OverlongLine(head if isinstance(head, bytes) else head.encode("utf-8", "replace"), length)


def size_of(file) -> int | None:
    size = getattr(file, "size", None)
    if isinstance(size, int):
        return size
    try:
        return os.fstat(file.fileno()).st_size
    except (AttributeError, OSError, ValueError):
        return None


def default_rejects_path(source, source_name: str, dataset_name: str, rejects_path) -> Path:
    if rejects_path:
        return Path(rejects_path)
    if isinstance(source, (str, os.PathLike)):
        return Path(f"{os.fspath(source)}.rejects.jsonl")
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(source_name).name or dataset_name).strip("-") or "import"
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(settings.VAR_DIR) / "import-rejects" / f"{stem}-{stamp}.rejects.jsonl"


class RejectsFile:
    """The skipped lines, each with its original text and reasons, written as they are found."""

    def __init__(self, path: Path):
        self.path = path
        self.count = 0
        self._handle: IO[str] | None = None

    def write(self, line: int, raw: bytes, problems) -> None:
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open(self.path, "w", encoding="utf-8")
        self.count += 1
        entry = {
            "line": line,
            "errors": [{"field": p.field, "reason": p.reason} for p in problems],
            "original": raw.decode("utf-8", "replace").rstrip("\r\n"),
        }
        self._handle.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def discard(self) -> None:
        self.close()
        if self.count:
            self.path.unlink(missing_ok=True)
        self.count = 0


class progress_bar:
    """Reports the bytes read: to a rich progress bar when asked for (the command), and to `on_progress(done, total)`
    when given (a background job's progress)."""

    def __init__(
        self,
        enabled: bool,
        total: int | None,
        description: str,
        on_progress: Callable[[int, int | None], None] | None = None,
    ):
        self.enabled = enabled
        self.total = total
        self.description = Path(description).name or "import"
        self.on_progress = on_progress
        self._progress = None

    def __enter__(self) -> Callable[[int], None]:
        update: Callable[[int], None] = lambda done: None  # noqa: E731
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

            self._progress = progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TimeRemainingColumn(),
                console=Console(file=sys.stderr),
                transient=True,
            )
            progress.start()
            task = progress.add_task(self.description, total=self.total)
            update = lambda done: progress.update(task, completed=done)  # noqa: E731
        if self.on_progress is None:
            return update
        report, total = self.on_progress, self.total

        def both(done: int) -> None:
            update(done)
            report(done, total)

        return both

    def __exit__(self, *exc_info):
        if self._progress is not None:
            self._progress.stop()
        return False
