"""The work of one ExportJob: build the bundle in temporary files, publish it atomically.

Exports are a job kind of the shared runner (core.jobs.runner), which claims them, keeps their heartbeat fresh and
records how they ended; an export cannot go on midway, so resuming one starts it over.


Files of job 12 under EXPORT_ROOT:
  .export-12-<token>.work/        data files being written by the run <token>
  .export-12-<token>.zip.part     the zip being assembled
  export-12-<format>.zip          the published bundle; exists only once the job is marked succeeded

Publishing renames the .zip.part onto the final name with os.replace inside the transaction that marks the job
succeeded: if that transaction fails, the final file is removed again. A run that is killed leaves only
temporary files (or, at worst, a final file whose job is not marked succeeded); the next run of the same job deletes
every file of the job before it starts, so it starts clean. Downloads are served only for succeeded jobs.

An export that would write no row fails with the reason its format gives (`nothing_to_export`), before any file is
written or, if the labels changed since the plan counted them, before anything is published.

Each execution owns the job through a fresh `run_token`. One that finds the token changed (the job was restarted
while it was presumed dead) stops without touching the job; one that finds `cancel_requested` set between two chunks
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
from core import events
from core.jobs import runner
from core.jobs.runner import EventDetails, Execution, JobFailed, JobKind
from core.metrics import judge_intervals
from reports import evaluation
from reports.models import ExportJob
from verifybench.label_rules import CORRECTNESS

from . import pseudonyms
from .manifest import ManifestCounts, manifest_json, render_card
from .registry import ExportFormat, get_export_format, nothing_to_export
from .writers import open_writer, sha256_of

logger = logging.getLogger(__name__)

ANNOTATOR_COLUMN = "annotator"


def export_root() -> Path:
    root = Path(settings.EXPORT_ROOT)
    root.mkdir(parents=True, exist_ok=True)
    return root


def stale_after() -> timedelta:
    return EXPORT.stale_after


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


def _forget_bundle(job: ExportJob) -> list[str]:
    remove_job_files(job)
    job.progress_total, job.bundle_path, job.bundle_sha256, job.bundle_size, job.manifest = 0, "", "", None, None
    return ["progress_total", "bundle_path", "bundle_sha256", "bundle_size", "manifest"]


def _execute(execution: Execution) -> None:
    job, token = execution.job, execution.token
    removed = remove_job_files(job)
    if removed:
        logger.info("export %s: removed %d stale file(s) of an earlier run", job.pk, len(removed))
    root = export_root()
    workdir = root / f".export-{job.pk}-{token}.work"
    part = root / f".export-{job.pk}-{token}.zip.part"
    try:
        manifest = _build(execution, workdir, part)
        shutil.rmtree(workdir, ignore_errors=True)  # before the job says it succeeded: then only the bundle is left
        _publish(execution, part, manifest)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        part.unlink(missing_ok=True)


def run_job(job_id: int, attempt: int | None = None) -> ExportJob | None:
    """Run the job if it is waiting (or was left running by a run that died); return it as it ended."""
    return runner.run(EXPORT.name, job_id, attempt)


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
        if self._future is None or self._executor is None:
            return _project_figures(self.project_id)
        try:
            return self._future.result()
        finally:
            self._executor.shutdown(wait=False)

    def discard(self) -> None:
        if self._future is not None and self._executor is not None:
            self._future.cancel()
            self._executor.shutdown(wait=False)


def verifier_figures(project: AnnotationProject) -> dict | None:
    """The meta-evaluation of a correctness project for the manifest and the dataset card: every verifier's figures
    on the project's labeled items with their 95% intervals, and the plain sentences of the paired comparisons.
    None for other kinds of project."""
    if project.kind != CORRECTNESS:
        return None
    try:
        result = evaluation.meta_evaluate(project, None, evaluation.Uncertainty())
    except evaluation.EvaluationError as error:
        return {"error": str(error), "verifiers": []}
    rows = []
    for report in result.reports:
        overall = (report.intervals or {}).get("overall") or {}
        rows.append(
            {
                "name": report.verifier.name,
                "kind": report.verifier.kind,
                "judged_items": report.judged_items,
                "questions": overall.get("questions", 0),
                "figures": {figure: overall.get(figure) for figure in judge_intervals.FIGURES},
            }
        )
    return {
        "labeled_items": result.labeled_items,
        "resamples": judge_intervals.RESAMPLES,
        "seed": 0,
        "verifiers": rows,
        "comparisons": [sentence["text"] for comparison in result.comparisons for sentence in comparison["sentences"]],
    }


def _build(execution: Execution, workdir: Path, part: Path) -> dict:
    job = execution.job
    export_format = get_export_format(job.format)
    options = export_format.clean_options(job.options)
    project = job.project
    plan = export_format.plan(project, options)
    figures = _ProjectFigures(project.pk)
    try:
        return _write_bundle(execution, workdir, part, export_format, options, project, plan, figures)
    finally:
        figures.discard()


def _refusal(export_format: ExportFormat, project, options: dict) -> JobFailed:
    """An export that would write no row fails with the reason, and publishes nothing."""
    preview = export_format.preview_of(project, options)
    reason = preview.reason if preview is not None and preview.reason else f"{export_format.title} selects no row."
    return JobFailed(nothing_to_export(reason))


def _write_bundle(execution, workdir, part, export_format, options, project, plan, figures) -> dict:
    job = execution.job
    columns = export_format.columns_of(project)
    if plan.total == 0:
        raise _refusal(export_format, project, options)
    execution.beat(done=0, total=plan.total)

    workdir.mkdir(parents=True)
    writers = {
        file_type: open_writer(file_type, workdir / f"{export_format.stem}.{file_type}", columns)
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
            execution.beat(done=counts.rows)
            if options["chunk_delay"]:
                time.sleep(options["chunk_delay"])
        if counts.rows == 0:  # the labels changed since the plan counted them
            raise _refusal(export_format, project, options)
        written = [writer.close() for writer in writers.values()]
    except BaseException:
        for writer in writers.values():
            writer.abort()
        raise

    agreement, state = figures.result()
    verifiers = verifier_figures(project)
    manifest = {
        "format": export_format.name,
        "title": export_format.title,
        "app_version": app_version(),
        "created_at": timezone.now().isoformat(),
        "job": job.pk,
        "project": {
            "id": project.pk,
            "name": project.name,
            "dataset": project.dataset.name,
            "kind": project.kind,
            "policy": {"labels_per_item": project.labels_per_item, "tiebreak_annotators": project.tiebreak_annotators},
        },
        "seed": options["seed"],
        "parameters": plan.parameters,
        "columns": [column.name for column in columns],
        **(
            {"annotator_pseudonyms": pseudonyms.SCHEME}
            if any(column.name == ANNOTATOR_COLUMN for column in columns)
            else {}
        ),
        "counts": counts.as_dict(),
        "agreement": agreement,
        "project_state": state,
        "shortfalls": plan.shortfalls,
        "notes": plan.notes,
        **({"verifiers": verifiers} if verifiers is not None else {}),
        "files": {f.name: {"rows": f.rows, "bytes": f.bytes, "sha256": f.sha256} for f in written},
    }
    card = render_card(manifest, export_format.describe(options))
    execution.beat()
    # Level 1: several times faster than the default on large JSONL and CSV files, for a slightly larger zip.
    with zipfile.ZipFile(part, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as bundle:
        for f in written:
            compression = zipfile.ZIP_STORED if f.name.endswith(".parquet") else zipfile.ZIP_DEFLATED
            bundle.write(f.path, arcname=f.name, compress_type=compression)
        bundle.writestr("manifest.json", manifest_json(manifest))
        bundle.writestr("README.md", card)
    return manifest


def _publish(execution: Execution, part: Path, manifest: dict) -> None:
    job = execution.job
    final = export_root() / final_name(job)
    digest, size = sha256_of(part), part.stat().st_size
    replaced = False
    try:
        with transaction.atomic():
            execution.owned()  # locked: a restart or a cancel cannot slip in between the rename and the status
            os.replace(part, final)
            replaced = True
            execution.succeed(
                bundle_path=final.name,
                bundle_sha256=digest,
                bundle_size=size,
                manifest=manifest,
                progress_done=manifest["counts"]["rows"],
            )
    except BaseException:
        if replaced:
            final.unlink(missing_ok=True)
        raise


EXPORT_READY = events.declare("export.ready", "An export bundle is ready to download")
EXPORT_FAILED = events.declare("export.failed", "An export stopped on an error")


def _describe(job: ExportJob) -> EventDetails:
    data = {
        "export": {
            "id": job.pk,
            "url": f"/api/exports/{job.pk}/",
            "download_url": f"/api/exports/{job.pk}/download/" if job.status == ExportJob.Status.SUCCEEDED else None,
            "project": job.project_id,
            "format": job.format,
            "file_types": job.file_types,
            "bundle_sha256": job.bundle_sha256,
            "bundle_size": job.bundle_size,
            "rows": ((job.manifest or {}).get("counts") or {}).get("rows"),
        }
    }
    return EventDetails(data, project_id=job.project_id, dataset_id=job.project.dataset_id)


EXPORT = runner.register(
    JobKind(
        name="export",
        title="Export",
        model=ExportJob,
        execute=_execute,
        resumable=False,
        on_start=_start_fresh,
        reset=_forget_bundle,
        stale_setting="EXPORT_STALE_SECONDS",
        workspace_paths=("project__dataset__workspace",),
        events={ExportJob.Status.SUCCEEDED: EXPORT_READY, ExportJob.Status.FAILED: EXPORT_FAILED},
        describe=_describe,
    )
)
