"""Datasets and their imports: list and create datasets, import a file, a list of dicts or a pandas DataFrame (the
import runs on the server as a job, followed with a progress bar), and read what was imported."""

from __future__ import annotations

import builtins
import io
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from . import _optional
from ._http import Http
from .jobs import wait_for
from .types import Dataset, ImportJob

FileSource = str | os.PathLike[str] | IO[bytes]


class Datasets:
    def __init__(self, http: Http):
        self._http = http

    # -- datasets

    def list(self, *, search: str | None = None, ordering: str | None = None) -> builtins.list[Dataset]:
        """Every dataset with its question, completion and model counts (all pages)."""
        return self._http.all("/api/datasets/", search=search, ordering=ordering)

    def get(self, dataset_id: int) -> Dataset:
        return self._http.get(f"/api/datasets/{dataset_id}/")

    def get_by_name(self, name: str) -> Dataset:
        """The dataset with exactly this name; NotFound when there is none."""
        from .errors import NotFound

        found = self._http.all("/api/datasets/", name=name)
        if not found:
            raise NotFound(f"no dataset is named {name!r}", status_code=404)
        return found[0]

    def create(self, name: str, *, description: str = "") -> Dataset:
        return self._http.post("/api/datasets/", {"name": name, "description": description})

    def update(self, dataset_id: int, *, name: str | None = None, description: str | None = None) -> Dataset:
        changes = {key: value for key, value in (("name", name), ("description", description)) if value is not None}
        return self._http.patch(f"/api/datasets/{dataset_id}/", changes)

    def delete(self, dataset_id: int) -> None:
        """Delete a dataset no project uses (Conflict otherwise, naming what still uses it)."""
        self._http.delete(f"/api/datasets/{dataset_id}/")

    def questions(self, dataset_id: int, **filters: Any) -> builtins.list[dict[str, Any]]:
        """The dataset's questions with their primary reference (filters: answer_type, domain, source, ...)."""
        return self._http.all("/api/questions/", dataset=dataset_id, **filters)

    def completions(
        self, dataset_id: int, *, model_name: str | None = None, include_text: bool = True, **filters: Any
    ) -> builtins.list[dict[str, Any]]:
        """The dataset's completions (without their text when `include_text` is false)."""
        return self._http.all(
            "/api/completions/",
            dataset=dataset_id,
            model_name=model_name,
            include_text=None if include_text else "0",
            **filters,
        )

    # -- imports

    def import_file(
        self,
        source: FileSource,
        dataset: str,
        *,
        format: str | None = None,
        file_type: str | None = None,
        skip_invalid: bool = False,
        filename: str | None = None,
        wait: bool = True,
        progress: bool = True,
        poll_interval: float = 1.0,
        timeout: float | None = None,
    ) -> ImportJob:
        """Upload a JSON Lines, CSV or Parquet file into the dataset named `dataset` (created if new).

        The server imports it as a job; with `wait` (the default) this follows it with a progress bar and returns the
        finished import with its report, raising JobFailed (its `job` holds the report) when the file was rejected.
        `format` (verifybench, mumath, matharena, ...) and `file_type` are detected when not given."""
        if isinstance(source, str | os.PathLike):
            path = Path(source)
            with open(path, "rb") as handle:
                created = self._upload(handle, filename or path.name, dataset, format, file_type, skip_invalid)
        else:
            name = filename or Path(getattr(source, "name", "") or "upload").name
            created = self._upload(source, name, dataset, format, file_type, skip_invalid)
        if not wait:
            return created
        return self.wait_import(created["id"], progress=progress, poll_interval=poll_interval, timeout=timeout)

    def _upload(
        self,
        handle: IO[bytes],
        filename: str,
        dataset: str,
        format: str | None,
        file_type: str | None,
        skip_invalid: bool,
    ) -> ImportJob:
        start = handle.tell() if handle.seekable() else None

        def files() -> dict[str, Any]:
            if start is not None:
                handle.seek(start)  # a retried upload sends the file from its start again
            return {"file": (filename, handle, "application/octet-stream")}

        form = {
            "dataset": dataset,
            "format": format or "",
            "file_type": file_type or "",
            "skip_invalid": "true" if skip_invalid else "false",
        }
        return self._http.json("POST", "/api/datasets/import/", data=form, files=files)

    def import_records(self, records: Iterable[Mapping[str, Any]], dataset: str, **options: Any) -> ImportJob:
        """Import rows given as dicts (the app's minimal format or a public layout), sent as JSON Lines."""
        lines = "".join(json.dumps(dict(record), default=str) + "\n" for record in records)
        return self.import_file(
            io.BytesIO(lines.encode()),
            dataset,
            file_type="jsonl",
            filename=options.pop("filename", "records.jsonl"),
            **options,
        )

    def import_dataframe(self, frame: Any, dataset: str, **options: Any) -> ImportJob:
        """Import the rows of a pandas DataFrame (one row per completion), sent as JSON Lines; missing values
        become null."""
        _optional.pandas()
        text = frame.to_json(orient="records", lines=True, date_format="iso", force_ascii=False)
        if text and not text.endswith("\n"):
            text += "\n"
        return self.import_file(
            io.BytesIO(text.encode()),
            dataset,
            file_type="jsonl",
            filename=options.pop("filename", "dataframe.jsonl"),
            **options,
        )

    def import_verdicts(self, source: FileSource, dataset: str, **options: Any) -> ImportJob:
        """Upload verdicts computed elsewhere about the completions of the dataset named `dataset`: a file (JSON
        Lines, CSV or Parquet) of `completion_id`, `verifier`, `verdict` rows, optionally `question_id`,
        `raw_output`, `prompt_tokens`, `completion_tokens`, `cost`, `judged_at`. Each verifier becomes an
        imported-verdict configuration; the options are `import_file`'s."""
        return self.import_file(source, dataset, format="verdicts", **options)

    def import_verdict_records(self, records: Iterable[Mapping[str, Any]], dataset: str, **options: Any) -> ImportJob:
        """`import_verdicts` for rows given as dicts."""
        return self.import_records(records, dataset, format="verdicts", **options)

    def imports(self, *, status: str | None = None, dataset: int | None = None) -> builtins.list[ImportJob]:
        """Import jobs, newest first."""
        return self._http.all("/api/imports/", status=status, dataset=dataset)

    def get_import(self, import_id: int) -> ImportJob:
        return self._http.get(f"/api/imports/{import_id}/")

    def wait_import(
        self, import_id: int, *, progress: bool = True, poll_interval: float = 1.0, timeout: float | None = None
    ) -> ImportJob:
        """Follow an import to its end with a progress bar (bytes read); JobFailed when it was rejected."""
        return wait_for(
            lambda: self._http.get(f"/api/imports/{import_id}/"),
            progress=progress,
            poll_interval=poll_interval,
            timeout=timeout,
            unit="B",
        )

    def import_rejects(self, import_id: int) -> builtins.list[dict[str, Any]]:
        """The lines a skip_invalid import left out, each with its reasons."""
        text = self._http.request("GET", f"/api/imports/{import_id}/rejects/").text
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def cancel_import(self, import_id: int) -> ImportJob:
        return self._http.post(f"/api/imports/{import_id}/cancel/")

    def restart_import(self, import_id: int, *, wait: bool = False, progress: bool = True) -> ImportJob:
        """Import a failed or cancelled upload again from the start (the server keeps the file until it succeeds)."""
        restarted = self._http.post(f"/api/imports/{import_id}/restart/", {"force": False})
        return self.wait_import(import_id, progress=progress) if wait else restarted
