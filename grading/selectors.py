"""Queries of the grading app: selection candidates from stored verdicts, run and selection payloads."""
from __future__ import annotations

from django.db.models import Q

from core.jobs.api import job_payload

from .models import VerificationRun


def answer_type_condition(codes, prefix: str = "question__") -> Q:
    """Completions whose question has one of the fine codes (A1), or belongs to one of the coarse classes (A)."""
    condition = Q(**{f"{prefix}answer_type__in": [code for code in codes if len(code) > 1]})
    for letter in (code for code in codes if len(code) == 1):
        condition |= Q(**{f"{prefix}answer_class": letter}) | Q(**{f"{prefix}answer_type__startswith": letter})
    return condition


def run_payload(run: VerificationRun) -> dict:
    counts = {key: int(run.counts.get(key, 0)) for key in ("correct", "incorrect", "inconclusive", "failed")}
    return {
        "id": run.pk,
        "verifier": {"id": run.verifier_id, "name": run.verifier.name, "kind": run.verifier.kind},
        "scope": {
            "dataset": run.dataset_id,
            "project": run.project_id,
            "answer_types": run.answer_types,
            "domains": run.domains,
            "models": run.model_names,
        },
        "status": run.status,
        "total": run.total,
        "done": run.done,
        "progress": round(run.done / run.total, 4) if run.total else (1.0 if run.is_finished else 0.0),
        "counts": counts,
        "chunk_size": run.chunk_size,
        "options": run.options,
        "cancel_requested": run.cancel_requested,
        "error": run.error,
        "attempt": run.attempt,
        "created_by": run.created_by.username if run.created_by_id else None,
        "created_at": run.created_at.isoformat() if run.created_at else None,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "heartbeat_at": run.heartbeat_at.isoformat() if run.heartbeat_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "job": job_payload(run),
    }


def runs_list():
    return VerificationRun.objects.select_related("verifier", "created_by").order_by("-created_at", "-id")
