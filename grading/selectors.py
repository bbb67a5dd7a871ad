"""Queries of the grading app: selection candidates from stored verdicts, run and selection payloads."""
from __future__ import annotations

from collections import defaultdict

from django.db.models import Q

from core.jobs.api import job_payload
from verifybench.models import Completion

from .models import SelectionRecord, Verdict, VerificationRun, VerifierConfig
from .selection import Candidate, SelectionFilters


def answer_type_condition(codes, prefix: str = "question__") -> Q:
    """Completions whose question has one of the fine codes (A1), or belongs to one of the coarse classes (A)."""
    condition = Q(**{f"{prefix}answer_type__in": [code for code in codes if len(code) > 1]})
    for letter in (code for code in codes if len(code) == 1):
        condition |= Q(**{f"{prefix}answer_class": letter}) | Q(**{f"{prefix}answer_type__startswith": letter})
    return condition


def selection_candidates(dataset, verifiers: list[VerifierConfig], filters: SelectionFilters = SelectionFilters()):
    """Every completion of the dataset admitted by `filters`, with the usable verdicts of `verifiers` as votes.

    The filters are applied in the database as well, so only admitted completions are loaded.
    """
    completions = Completion.objects.filter(question__dataset=dataset)
    if filters.answer_types:
        completions = completions.filter(answer_type_condition(filters.answer_types))
    if filters.domains:
        completions = completions.filter(question__domain__in=filters.domains)
    if filters.models:
        completions = completions.filter(model_name__in=filters.models)
    names = {config.pk: config.name for config in verifiers}
    votes: dict[int, dict[str, str]] = defaultdict(dict)
    verdicts = Verdict.objects.filter(
        verifier_id__in=names, failed=False, completion__in=completions.values("pk")
    ).values_list("completion_id", "verifier_id", "status")
    for completion_id, verifier_id, status in verdicts.iterator(chunk_size=5000):
        votes[completion_id][names[verifier_id]] = status
    rows = completions.order_by("pk").values_list(
        "pk", "question_id", "question__domain", "question__source", "question__answer_type", "model_name"
    )
    return [
        Candidate(completion_id=pk, question_id=question_id, domain=domain, source=source, answer_type=answer_type,
                  model=model, votes=votes.get(pk, {}))
        for pk, question_id, domain, source, answer_type, model in rows.iterator(chunk_size=5000)
    ]


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


def selection_payload(record: SelectionRecord, *, with_report: bool = True) -> dict:
    payload = {
        "id": record.pk,
        "project": {"id": record.project_id, "name": record.project.name},
        "dataset": {"id": record.dataset_id, "name": record.dataset.name},
        "strategy": record.strategy,
        "verifiers": sorted(config.name for config in record.verifiers.all()),
        "seed": record.seed,
        "parameters": record.parameters,
        "picked": record.picked,
        "created_by": record.created_by.username if record.created_by_id else None,
        "created_at": record.created_at.isoformat() if record.created_at else None,
    }
    if with_report:
        payload["report"] = record.report
    return payload
