"""Exports of a project's final labels: start one (a job, followed with a progress bar), download the bundle, or open
its rows as a pandas DataFrame or a Hugging Face `datasets.Dataset`."""

from __future__ import annotations

import builtins
import io
import json
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import _optional
from ._http import Http
from .jobs import wait_for
from .types import Export

READ_ORDER = ("parquet", "jsonl", "csv")  # the file a bundle is read from, when it has several


class Exports:
    def __init__(self, http: Http):
        self._http = http

    def start(
        self,
        project_id: int,
        format: str,
        *,
        file_types: Sequence[str] | None = None,
        options: dict[str, Any] | None = None,
        wait: bool = False,
        progress: bool = True,
        timeout: float | None = None,
    ) -> Export:
        """Export the project's final labels in a public format ("verifybench", "verifybench-hard", "mumath",
        "matharena-proofs"), as any of jsonl, csv and parquet; with `wait`, return once the bundle is ready."""
        body: dict[str, Any] = {"project": project_id, "format": format}
        if file_types is not None:
            body["file_types"] = list(file_types)
        if options is not None:
            body["options"] = options
        export = self._http.post("/api/exports/", body)
        return self.wait(export["id"], progress=progress, timeout=timeout) if wait else export

    def list(
        self, *, project: int | None = None, status: str | None = None, format: str | None = None
    ) -> builtins.list[Export]:
        """Export jobs, newest first."""
        return self._http.all("/api/exports/", project=project, status=status, format=format)

    def get(self, export_id: int) -> Export:
        """One export: status, progress, and once it succeeded its manifest and download URL."""
        return self._http.get(f"/api/exports/{export_id}/")

    def wait(
        self, export_id: int, *, progress: bool = True, poll_interval: float = 1.0, timeout: float | None = None
    ) -> Export:
        """Follow an export to its end with a progress bar of rows written; JobFailed if it failed."""
        return wait_for(
            lambda: self._http.get(f"/api/exports/{export_id}/"),
            progress=progress,
            poll_interval=poll_interval,
            timeout=timeout,
            unit="row",
        )

    def cancel(self, export_id: int) -> Export:
        return self._http.post(f"/api/exports/{export_id}/cancel/")

    def restart(self, export_id: int) -> Export:
        """Run a failed or cancelled export again (an export always starts over)."""
        return self._http.post(f"/api/exports/{export_id}/restart/", {"force": False})

    def download(self, export_id: int, path: str | Path | None = None) -> Path:
        """Save the bundle (a zip: the data files, manifest.json and a dataset card). `path` is a file or a folder;
        the server's file name in the current folder when absent. Returns where it was saved."""
        response = self._http.request("GET", f"/api/exports/{export_id}/download/", stream=True)
        try:
            name = _filename(response.headers.get("Content-Disposition", "")) or f"export-{export_id}.zip"
            target = Path(path) if path is not None else Path.cwd() / name
            if target.is_dir():
                target = target / name
            with open(target, "wb") as out:
                for chunk in response.iter_bytes():
                    out.write(chunk)
        finally:
            response.close()
        return target

    def bundle(self, export_id: int) -> zipfile.ZipFile:
        """The bundle opened in memory."""
        return zipfile.ZipFile(io.BytesIO(self._http.request("GET", f"/api/exports/{export_id}/download/").content))

    def manifest(self, export_id: int) -> dict[str, Any]:
        """The bundle's manifest: format, columns, counts, agreement, files and their sha256."""
        with self.bundle(export_id) as bundle:
            return json.loads(bundle.read("manifest.json"))

    def to_pandas(self, export_id: int, *, file_type: str | None = None) -> Any:
        """The exported rows as a DataFrame, read from the bundle's parquet file when it has one (types kept), else
        its JSON Lines or CSV file; `file_type` chooses."""
        pandas = _optional.pandas()
        with self.bundle(export_id) as bundle:
            name = _data_file(bundle, file_type)
            data = bundle.read(name)
        if name.endswith(".parquet"):
            _optional.require("pyarrow", "pyarrow")
            return pandas.read_parquet(io.BytesIO(data))
        if name.endswith(".jsonl"):
            return pandas.read_json(io.BytesIO(data), lines=True, dtype=False)
        return pandas.read_csv(io.BytesIO(data))

    def to_dataset(self, export_id: int, *, file_type: str | None = None) -> Any:
        """The exported rows as a Hugging Face `datasets.Dataset`."""
        datasets = _optional.datasets()
        return datasets.Dataset.from_pandas(self.to_pandas(export_id, file_type=file_type), preserve_index=False)


def _filename(disposition: str) -> str | None:
    match = re.search(r'filename="?([^";]+)"?', disposition)
    return Path(match.group(1)).name if match else None


def _data_file(bundle: zipfile.ZipFile, file_type: str | None) -> str:
    manifest = json.loads(bundle.read("manifest.json"))
    names = list(manifest.get("files", {})) or [
        name for name in bundle.namelist() if name.rsplit(".", 1)[-1] in READ_ORDER
    ]
    for wanted in [file_type] if file_type else READ_ORDER:
        for name in names:
            if name.endswith(f".{wanted}"):
                return name
    raise ValueError(f"the bundle has no {file_type or 'data'} file; it has {', '.join(names) or 'none'}")
