"""One row shape for every background job, read by `jobs/_job_rows.html` and, while the job is active, kept current
by `src/jobs.js` from the job's own API endpoint (which carries the common payload under "job").

Each kind adds what only it has: what the job works on (`what`), what it produced (`result`) and extra links (an
export's download). Kinds are looked up by their registered name (core.jobs.runner).
"""

from __future__ import annotations

from django.urls import reverse

from core.jobs import runner
from grading import runs
from reports.exports import get_export_format

ACTIVE = ("queued", "running")


def _run_parts(run) -> dict:
    if run.project_id is not None:
        scope = f"project {run.project.name}" if run.project else f"project {run.project_id}"
    else:
        scope = "whole dataset"
    filters = [", ".join(values) for values in (run.answer_types, run.domains, run.model_names) if values]
    counts = {key: int(run.counts.get(key, 0)) for key in ("correct", "incorrect", "inconclusive", "failed")}
    return {
        "what_template": "jobs/kinds/verification_run_what.html",
        "result_template": "jobs/kinds/verification_run_result.html",
        "verifier": run.verifier,
        "verifier_kind": run.verifier.get_kind_display(),
        "scope_label": scope,
        "filters_label": "; ".join(filters),
        "counts": counts,
        "api_url": reverse("verification-run-detail", args=[run.pk]),
        "home_url": (
            reverse("dashboard-project", args=[run.project_id])
            if run.project_id is not None
            else reverse("jobs-dataset", args=[run.dataset_id])
        )
        + "#verification-runs",
        "links": [],
        "unit": "",
    }


def _export_parts(job) -> dict:
    manifest = job.manifest or {}
    counts = manifest.get("counts") or {}
    by_label = counts.get("by_label") or {}
    try:
        title = get_export_format(job.format).title
    except KeyError:
        title = job.format
    succeeded = job.status == job.Status.SUCCEEDED
    download_url = reverse("jobs-export-download", args=[job.pk])
    return {
        "what_template": "jobs/kinds/export_what.html",
        "result_template": "jobs/kinds/export_result.html",
        "format_title": title,
        "file_types": job.file_types,
        "seed": (job.options or {}).get("seed"),
        "rows": counts.get("rows"),
        "correct": by_label.get("correct"),
        "incorrect": by_label.get("incorrect"),
        "graded": "by_score" in counts,
        "points": counts.get("points"),
        "max_points": counts.get("max_points"),
        "by_answer_subtype": counts.get("by_answer_subtype") or {},
        "shortfalls": [{"group": group, **info} for group, info in (manifest.get("shortfalls") or {}).items()],
        "api_url": reverse("export-detail", args=[job.pk]),
        "home_url": reverse("dashboard-project", args=[job.project_id]) + "#exports",
        "download_url": download_url,
        "links": [{"label": "Download", "url": download_url, "download": True}] if succeeded else [],
        "unit": "rows",
        "succeeded": succeeded,
    }


PARTS = {"verification-run": _run_parts, "export": _export_parts}


def _run_detail(run) -> dict:
    return {"cascade": runs.cascade_report(run)}


DETAIL_PARTS = {"verification-run": _run_detail}


def detail_context(job) -> dict:
    """What a job's own page shows beyond its row (a cascade run's per-stage figures)."""
    build = DETAIL_PARTS.get(runner.kind_of(job).name)
    return build(job) if build is not None else {}


def register_parts(kind_name: str, build) -> None:
    """Let another kind (e.g. imports) describe its own rows."""
    PARTS[kind_name] = build


def job_row(job) -> dict:
    kind = runner.kind_of(job)
    row = {
        "job": job,
        "kind": kind.name,
        "key": f"{kind.noun}-{job.pk}",
        "id": job.pk,
        "noun": kind.noun,
        "title": kind.title,
        "status": job.status,
        "status_label": job.get_status_display(),
        "done": job.progress_done,
        "total": job.progress_total,
        "fraction": job.progress_done / job.progress_total
        if job.progress_total
        else (1.0 if job.status == job.Status.SUCCEEDED else 0.0),
        "active": job.status in ACTIVE,
        "attempt": job.attempt,
        "error": job.error,
        "cancel_requested": job.cancel_requested,
        "actions": [name for name in ("cancel", "resume", "restart") if runner.can(job, name)],
        "detail_url": reverse("job-detail", args=[kind.name, job.pk]),
    }
    row.update(PARTS[kind.name](job))
    return row
