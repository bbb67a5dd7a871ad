"""Queries of the grading app: selection candidates from stored verdicts, run and selection payloads."""
from __future__ import annotations

from django.db.models import Q

from annotation import workflow
from annotation.models import Item
from core.jobs.api import job_payload
from core.labels import InvalidValue
from core.metrics import cascade as cascade_metrics
from verifybench.label_rules import CORRECTNESS, CorrectnessRules

from .models import Verdict, VerificationRun


def answer_type_condition(codes, prefix: str = "question__") -> Q:
    """Completions whose question has one of the fine codes (A1), or belongs to one of the coarse classes (A)."""
    condition = Q(**{f"{prefix}answer_type__in": [code for code in codes if len(code) > 1]})
    for letter in (code for code in codes if len(code) == 1):
        condition |= Q(**{f"{prefix}answer_class": letter}) | Q(**{f"{prefix}answer_type__startswith": letter})
    return condition


def human_correctness(completion_ids) -> dict[int, bool]:
    """Final human labels of completions: resolved, non-excluded, non-gold items of correctness projects. A completion
    labeled in several projects counts only where they agree; an unreadable final value is left out."""
    labels: dict[int, set[bool]] = {}
    rules = CorrectnessRules()
    items = Item.objects.filter(
        project__kind=CORRECTNESS, state=workflow.RESOLVED, excluded=False, is_gold=False, subject_id__in=completion_ids,
    ).values_list("subject_id", "final_value")
    for subject_id, final_value in items.iterator(chunk_size=5000):
        try:
            labels.setdefault(subject_id, set()).add(rules.clean(final_value))
        except InvalidValue:
            continue
    return {subject_id: values.pop() for subject_id, values in labels.items() if len(values) == 1}


def cascade_verdict_rows(verifier_id: int, completion_ids, *, since=None, labels: dict[int, bool] | None = None):
    """The rows `core.metrics.cascade.cascade_report` reads: a cascade's usable verdicts on the given completions
    (a queryset of ids or a list), with the human label where there is one."""
    verdicts = Verdict.objects.filter(verifier_id=verifier_id, failed=False, completion_id__in=completion_ids)
    if since is not None:
        verdicts = verdicts.filter(updated_at__gte=since)
    fields = ("completion_id", "stage", "status", "rule_status", "judge_status", "prompt_tokens",
              "completion_tokens", "cost")
    rows = [dict(zip(fields, values, strict=True)) for values in verdicts.values_list(*fields).iterator(chunk_size=5000)]
    if labels is None:
        labels = human_correctness([row["completion_id"] for row in rows])
    for row in rows:
        row["human_correct"] = labels.get(row["completion_id"])
    return rows


def cascade_figures(verifier_id: int, completion_ids, *, since=None, labels: dict[int, bool] | None = None) -> dict:
    """Per-stage figures (decided, coverage, precision against human labels, tokens, money) of a cascade."""
    rows = cascade_verdict_rows(verifier_id, completion_ids, since=since, labels=labels)
    return cascade_metrics.cascade_report(rows).as_dict()


def run_payload(run: VerificationRun, cascade: dict | None = None) -> dict:
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
        **({"cascade": cascade} if cascade is not None else {}),
    }


def runs_list():
    return VerificationRun.objects.select_related("verifier", "created_by").order_by("-created_at", "-id")
