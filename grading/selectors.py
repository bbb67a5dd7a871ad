"""Queries of the grading app: selection candidates from stored verdicts, run and selection payloads."""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import Count, Exists, OuterRef, Q, Sum

from annotation import workflow
from annotation.models import Item
from core.jobs.api import job_payload
from core.metrics import cascade as cascade_metrics
from verifybench.label_rules import CORRECTNESS

from .models import Verdict, VerificationRun


def answer_type_condition(codes, prefix: str = "question__") -> Q:
    """Completions whose question has one of the fine codes (A1), or belongs to one of the coarse classes (A)."""
    condition = Q(**{f"{prefix}answer_type__in": [code for code in codes if len(code) > 1]})
    for letter in (code for code in codes if len(code) == 1):
        condition |= Q(**{f"{prefix}answer_class": letter}) | Q(**{f"{prefix}answer_type__startswith": letter})
    return condition


def final_label_items(project=None):
    """Items with a final human label: resolved, non-excluded, non-gold items of correctness projects (or of one)."""
    items = Item.objects.filter(state=workflow.RESOLVED, excluded=False, is_gold=False)
    return items.filter(project=project) if project is not None else items.filter(project__kind=CORRECTNESS)


def _cascade_verdicts(verifier_id: int, completion_ids, since):
    verdicts = Verdict.objects.filter(verifier_id=verifier_id, failed=False, completion_id__in=completion_ids)
    return verdicts if since is None else verdicts.filter(updated_at__gte=since)


def _without_jit(queryset) -> list:
    """The rows of a grouped query, with PostgreSQL's JIT compilation off: the planner's high estimate for the
    correlated label lookups makes it compile the query, which took longer than running it (1.7 s against 0.5 s on
    100,000 verdicts, bench/cascade_report_bench.py)."""
    if connection.vendor != "postgresql":
        return list(queryset)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL jit = off")
        return list(queryset)


def cascade_verdict_groups(verifier_id: int, completion_ids, *, since=None, project=None) -> list[dict]:
    """The rows `core.metrics.cascade.cascade_report` reads, one per group of a cascade's usable verdicts on the
    given completions (a queryset of ids or a list) with the same stage, verdicts and human label (`n` verdicts,
    summed tokens and cost), counted in the database. The human label is the final label of the completion's items
    in correctness projects (or in `project` only); a completion whose projects disagree counts as unlabeled."""
    labels = final_label_items(project).filter(subject_id=OuterRef("completion_id"))
    groups = (
        _cascade_verdicts(verifier_id, completion_ids, since)
        .annotate(
            says_correct=Exists(labels.filter(final_value=True)),
            says_incorrect=Exists(labels.filter(final_value=False)),
        )
        .values("stage", "status", "rule_status", "judge_status", "says_correct", "says_incorrect")
        .annotate(
            n=Count("pk"),
            prompt_tokens=Sum("prompt_tokens"),
            completion_tokens=Sum("completion_tokens"),
            cost=Sum("cost"),
        )
        .order_by()
    )
    rows = []
    for group in _without_jit(groups):
        says_correct, says_incorrect = group.pop("says_correct"), group.pop("says_incorrect")
        group["human_correct"] = says_correct if says_correct != says_incorrect else None
        rows.append(group)
    return rows


def cascade_figures(verifier_id: int, completion_ids, *, since=None, project=None) -> dict:
    """Per-stage figures (decided, coverage, precision against human labels, tokens, money) of a cascade on the
    given completions, against the final labels of every correctness project or of `project` only."""
    rows = cascade_verdict_groups(verifier_id, completion_ids, since=since, project=project)
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
