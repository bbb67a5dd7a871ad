"""The files an import reads and writes: a path or an uploaded file object read line by line, the rejects file of
`--skip-invalid`, and the progress bar of the command."""
from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import IO

from django.conf import settings


class open_lines:
    """Context manager yielding (iterator of raw byte lines, total size in bytes or None)."""

    def __init__(self, source):
        self.source = source
        self._owned: IO[bytes] | None = None

    def __enter__(self):
        if isinstance(self.source, (str, os.PathLike)):
            self._owned = open(self.source, "rb")
            return self._owned, os.fstat(self._owned.fileno()).st_size
        return readlines(self.source), size_of(self.source)

    def __exit__(self, *exc_info):
        if self._owned is not None:
            self._owned.close()
        return False


def readlines(file) -> Iterator[bytes | str]:
    """Lines of a file object one at a time (bytes; str lines from a text-mode file are accepted too)."""
    readline = getattr(file, "readline", None)
    if readline is None:
        yield from file
        return
    while line := readline():
        yield line


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
    """A rich progress bar over the bytes read, or nothing when not asked for."""

    def __init__(self, enabled: bool, total: int | None, description: str):
        self.enabled = enabled
        self.total = total
        self.description = Path(description).name or "import"
        self._progress = None

    def __enter__(self):
        if not self.enabled:
            return lambda done: None
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
            console=Console(file=sys.stderr), transient=True,
        )
        self._progress.start()
        task = self._progress.add_task(self.description, total=self.total)
        return lambda done: self._progress.update(task, completed=done)

    def __exit__(self, *exc_info):
        if self._progress is not None:
            self._progress.stop()
        return False
