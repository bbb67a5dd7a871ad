"""Queries of selections: the candidates a recipe chooses from, with stored verdicts as votes, and a selection's
payload."""

from __future__ import annotations

from collections import defaultdict

from grading import cascade
from grading.models import SelectionRecord, Verdict, VerifierConfig
from grading.selectors import answer_type_condition
from verifybench.models import Completion

from .recipes import Candidate, SelectionFilters


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
    routes: dict[int, dict[str, str]] = defaultdict(dict)
    verdicts = Verdict.objects.filter(
        verifier_id__in=names, failed=False, completion__in=completions.values("pk")
    ).values_list("completion_id", "verifier_id", "status", "stage", "rule_status", "judge_status")
    for completion_id, verifier_id, status, stage, rule_status, judge_status in verdicts.iterator(chunk_size=5000):
        votes[completion_id][names[verifier_id]] = status
        route = cascade.route_of(stage, rule_status, judge_status)
        if route:
            routes[completion_id][names[verifier_id]] = route
    rows = completions.order_by("pk").values_list(
        "pk", "question_id", "question__domain", "question__source", "question__answer_type", "model_name"
    )
    return [
        Candidate(
            completion_id=pk,
            question_id=question_id,
            domain=domain,
            source=source,
            answer_type=answer_type,
            model=model,
            votes=votes.get(pk, {}),
            routes=routes.get(pk, {}),
        )
        for pk, question_id, domain, source, answer_type, model in rows.iterator(chunk_size=5000)
    ]


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
        "created_by": record.created_by.username if record.created_by else None,
        "created_at": record.created_at.isoformat() if record.created_at else None,
    }
    if with_report:
        payload["report"] = record.report
    return payload
