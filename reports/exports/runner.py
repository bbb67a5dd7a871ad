"""Running one ExportJob: claim it, build the bundle in temporary files, publish it atomically.

Files of job 12 under EXPORT_ROOT:
  .export-12-<token>.work/        data files being written by the run <token>
  .export-12-<token>.zip.part     the zip being assembled
  export-12-<format>.zip          the published bundle; exists only once the job is marked succeeded

Publishing renames the .zip.part onto the final name with os.replace inside the transaction that marks the job
succeeded: if that transaction fails, the final file is removed again. A run that is killed leaves only
temporary files (or, at worst, a final file whose job is not marked succeeded); the next run of the same job deletes
every file of the job before it starts, so it starts clean. Downloads are served only for succeeded jobs.

Each run owns the job through a fresh `run_token`. A run that finds the token changed (the job was restarted while
it was presumed dead) stops without touching the job; a run that finds `cancel_requested` set between two chunks
ends the job `cancelled` without publishing anything.
"""
from __future__ import annotations

import logging
import os
import shutil
import time
import tomllib
import zipfile
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from annotation import selectors as annotation_selectors
from annotation.models import AnnotationProject
from core.jobs import protocol as jobs
from reports.models import ExportJob

from .manifest import ManifestCounts, manifest_json, render_card
from .registry import get_export_format
from .writers import open_writer, sha256_of

logger = logging.getLogger(__name__)

DEFAULT_STALE_SECONDS = 120


def export_root() -> Path:
    root = Path(settings.EXPORT_ROOT)
    root.mkdir(parents=True, exist_ok=True)
    return root


def stale_after() -> timedelta:
    return timedelta(seconds=getattr(settings, "EXPORT_STALE_SECONDS", DEFAULT_STALE_SECONDS))


def final_name(job: ExportJob) -> str:
    return f"export-{job.pk}-{job.format}.zip"


def bundle_file(job: ExportJob) -> Path | None:
    """The published zip of a succeeded job, or None."""
    if job.status != ExportJob.Status.SUCCEEDED or not job.bundle_path:
        return None
    path = export_root() / job.bundle_path
    return path if path.is_file() else None


def remove_job_files(job: ExportJob, *, keep_final: bool = False) -> list[Path]:
    """Delete the temporary files of every run of this job (and its final zip unless kept). Returns what went."""
    root = export_root()
    removed = []
    for path in root.glob(f".export-{job.pk}-*"):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    final = root / final_name(job)
    if not keep_final and final.exists():
        final.unlink(missing_ok=True)
        removed.append(final)
    return removed


def app_version() -> str:
    with open(Path(settings.BASE_DIR) / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["project"]["version"]


def _start_fresh(job: ExportJob, now) -> list[str]:
    job.started_at, job.progress_done, job.progress_total, job.finished_at = now, 0, 0, None
    return ["started_at", "progress_done", "progress_total", "finished_at"]


def _report_progress(job: ExportJob, token: str, **fields) -> None:
    jobs.beat(ExportJob, job.pk, token, **fields)


def run_job(job_id: int, attempt: int | None = None) -> ExportJob | None:
    """Run the job if it is waiting (or was left running by a run that died); return it as it ended."""
    claimed = jobs.claim(ExportJob, job_id, attempt, stale_after=stale_after(), on_claim=_start_fresh)
    if claimed is None:
        return ExportJob.objects.filter(pk=job_id).first()
    job, token = claimed
    removed = remove_job_files(job)
    if removed:
        logger.info("export %s: removed %d stale file(s) of an earlier run", job.pk, len(removed))
    root = export_root()
    workdir = root / f".export-{job.pk}-{token}.work"
    part = root / f".export-{job.pk}-{token}.zip.part"
    try:
        manifest = _build(job, token, workdir, part)
        _publish(job, token, part, manifest)
    except jobs.Cancelled:
        jobs.finish(ExportJob, job.pk, token, ExportJob.Status.CANCELLED)
    except jobs.Superseded:
        logger.info("export %s: run %s was superseded", job.pk, token)
    except Exception as exc:
        logger.exception("export %s failed", job.pk)
        jobs.finish(ExportJob, job.pk, token, ExportJob.Status.FAILED, f"{type(exc).__name__}: {exc}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        part.unlink(missing_ok=True)
    return ExportJob.objects.get(pk=job.pk)


def _project_figures(project_id: int) -> tuple[dict, dict]:
    project = AnnotationProject.objects.get(pk=project_id)
    return annotation_selectors.agreement_figures(project), annotation_selectors.state_counts(project)


def _project_figures_on_own_connection(project_id: int) -> tuple[dict, dict]:
    try:
        return _project_figures(project_id)
    finally:
        connection.close()


class _ProjectFigures:
    """The project's agreement figures and state counts for the manifest.

    On a large project they take seconds of their own, so outside a transaction (a worker, the command) they are
    computed on a second database connection in a thread while the rows are written. Inside a transaction another
    connection would not see the same data, so they are computed in line when asked for.
    """

    def __init__(self, project_id: int):
        self.project_id = project_id
        self._executor: ThreadPoolExecutor | None = None
        self._future: Future | None = None
        if not connection.in_atomic_block and connection.vendor == "postgresql":
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="export-figures")
            self._future = self._executor.submit(_project_figures_on_own_connection, project_id)

    def result(self) -> tuple[dict, dict]:
        if self._future is None:
            return _project_figures(self.project_id)
        try:
            return self._future.result()
        finally:
            self._executor.shutdown(wait=False)

    def discard(self) -> None:
        if self._executor is not None:
            self._future.cancel()
            self._executor.shutdown(wait=False)


def _build(job: ExportJob, token: str, workdir: Path, part: Path) -> dict:
    export_format = get_export_format(job.format)
    options = export_format.clean_options(job.options)
    project = job.project
    plan = export_format.plan(project, options)
    figures = _ProjectFigures(project.pk)
    try:
        return _write_bundle(job, token, workdir, part, export_format, options, project, plan, figures)
    finally:
        figures.discard()


def _write_bundle(job, token, workdir, part, export_format, options, project, plan, figures) -> dict:
    _report_progress(job, token, progress_total=plan.total)

    workdir.mkdir(parents=True)
    writers = {
        file_type: open_writer(file_type, workdir / f"{export_format.stem}.{file_type}", export_format.columns)
        for file_type in job.file_types
    }
    counts = ManifestCounts()
    try:
        for chunk in plan.chunks:
            rows = [row.data for row in chunk]
            for writer in writers.values():
                writer.write(rows)
            for row in chunk:
                counts.add(row.facts)
            _report_progress(job, token, progress_done=counts.rows)
            if options["chunk_delay"]:
                time.sleep(options["chunk_delay"])
        written = [writer.close() for writer in writers.values()]
    except BaseException:
        for writer in writers.values():
            writer.abort()
        raise

    agreement, state = figures.result()
    manifest = {
        "format": export_format.name,
        "title": export_format.title,
        "app_version": app_version(),
        "created_at": timezone.now().isoformat(),
        "job": job.pk,
        "project": {
            "id": project.pk, "name": project.name, "dataset": project.dataset.name, "kind": project.kind,
            "policy": {"labels_per_item": project.labels_per_item,
                       "tiebreak_annotators": project.tiebreak_annotators},
        },
        "seed": options["seed"],
        "parameters": plan.parameters,
        "columns": [column.name for column in export_format.columns],
        "counts": counts.as_dict(),
        "agreement": agreement,
        "project_state": state,
        "shortfalls": plan.shortfalls,
        "notes": plan.notes,
        "files": {f.name: {"rows": f.rows, "bytes": f.bytes, "sha256": f.sha256} for f in written},
    }
    card = render_card(manifest, export_format.describe(options))
    _report_progress(job, token)
    # Level 1: several times faster than the default on large JSONL and CSV files, for a slightly larger zip.
    with zipfile.ZipFile(part, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as bundle:
        for f in written:
            compression = zipfile.ZIP_STORED if f.name.endswith(".parquet") else zipfile.ZIP_DEFLATED
            bundle.write(f.path, arcname=f.name, compress_type=compression)
        bundle.writestr("manifest.json", manifest_json(manifest))
        bundle.writestr("README.md", card)
    return manifest


def _publish(job: ExportJob, token: str, part: Path, manifest: dict) -> None:
    final = export_root() / final_name(job)
    digest, size = sha256_of(part), part.stat().st_size
    replaced = False
    try:
        with transaction.atomic():
            locked = ExportJob.objects.select_for_update().get(pk=job.pk)
            if locked.run_token != token:
                raise jobs.Superseded
            if locked.cancel_requested:
                raise jobs.Cancelled
            os.replace(part, final)
            replaced = True
            locked.status = ExportJob.Status.SUCCEEDED
            locked.bundle_path, locked.bundle_sha256, locked.bundle_size = final.name, digest, size
            locked.manifest = manifest
            locked.progress_done = manifest["counts"]["rows"]
            locked.finished_at = locked.heartbeat_at = timezone.now()
            locked.save(update_fields=["status", "bundle_path", "bundle_sha256", "bundle_size", "manifest",
                                       "progress_done", "finished_at", "heartbeat_at"])
    except BaseException:
        if replaced:
            final.unlink(missing_ok=True)
        raise
