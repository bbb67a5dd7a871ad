"""The refit of a project's annotator model, a job kind of core.jobs.runner ("annotator-model").

Reads every label of the project (gold items included: they anchor the fit), fits Dawid-Skene
(core.metrics.annotator_models.fit_dawid_skene) with per-answer-type strata, measures each verifier's confusion
against the humans (every labeled item weighs in with its posterior from the human labels alone, gold items with
their known answer; label_model.fit_weak_confusion), and stores the parameters the label path reads (annotation.label_model) with a
per-annotator summary for the dashboard. Items already resolved keep their final labels: a refit changes what later
labels decide.
"""

from __future__ import annotations

from collections import defaultdict

from django.db import transaction

from core import labels, subjects
from core.jobs import runner
from core.jobs.runner import Execution, JobKind
from core.metrics.annotator_models import fit_dawid_skene

from . import label_model
from .models import AnnotatorModelFit, Item, Label

_PAGE = 20000


def _labels(project) -> tuple[list[tuple[int, int, object]], int]:
    """(item, annotator, token) of every label of the project, read in pages; and the newest label id."""
    triples: list[tuple[int, int, object]] = []
    last = 0
    rows = Label.objects.filter(item__project=project).order_by("pk")
    while True:
        page = list(
            rows.filter(pk__gt=last).values_list("pk", "item_id", "annotator_id", "value", "unsuitable")[:_PAGE]
        )
        if not page:
            return triples, last
        last = page[-1][0]
        triples.extend(
            (item, annotator, labels.UNSUITABLE if unsuitable else value)
            for _, item, annotator, value, unsuitable in page
        )


def _execute(execution: Execution) -> None:
    job = execution.job
    project = job.project
    triples, last_label_id = _labels(project)
    execution.beat(done=0, total=3)
    if not triples:
        execution.succeed(
            last_label_id=0,
            labels_seen=0,
            parameters=None,
            summary={"annotators": {}, "note": "no labels yet"},
            progress_done=3,
        )
        return
    items = Item.objects.filter(project=project)
    gold = {
        pk: value for pk, value in items.filter(is_gold=True).exclude(gold_value=None).values_list("pk", "gold_value")
    }
    item_info = {
        pk: (subject_id, answer_type)
        for pk, subject_id, answer_type in items.filter(pk__in={t[0] for t in triples} | set(gold)).values_list(
            "pk", "subject_id", "answer_type"
        )
    }
    if len({label_model.token_key(t[2]) for t in triples} | {label_model.token_key(v) for v in gold.values()}) < 2:
        execution.succeed(
            last_label_id=last_label_id,
            labels_seen=len(triples),
            parameters=None,
            summary={"annotators": {}, "note": "every label so far has the same value"},
            progress_done=3,
        )
        return
    strata = {pk: answer_type for pk, (_, answer_type) in item_info.items() if answer_type}
    model = fit_dawid_skene(triples, gold=gold, strata=strata)
    execution.beat(done=1)

    # Verifier votes, measured against the humans: each labeled item weighs in with its posterior from the human
    # labels alone (gold items with their known answer), the verifier's confusion fitted by EM on top.
    positions = {item_id: position for position, item_id in enumerate(model.item_ids)}
    posterior = model.posterior_matrix()
    answers: dict[str, list[tuple[int, str]]] = defaultdict(list)
    by_subject = {subject_id: pk for pk, (subject_id, _) in item_info.items() if pk in positions}
    subject_ids = list(by_subject)
    for start in range(0, len(subject_ids), 5000):
        for subject_id, votes in subjects.votes_for(project.kind, subject_ids[start : start + 5000]).items():
            for verifier, status in votes:
                answers[verifier].append((positions[by_subject[subject_id]], status))
    weak = {}
    for verifier, pairs in answers.items():
        rows = [position for position, _ in pairs]
        table = label_model.fit_weak_confusion(posterior[rows], [status for _, status in pairs])
        if table:
            weak[verifier] = table
    observations = {verifier: len(pairs) for verifier, pairs in answers.items()}
    parameters = label_model.FittedParameters.from_model(model, weak)
    execution.beat(done=2)

    annotators = {}
    for annotator_id, estimate in model.annotators().items():
        annotators[str(annotator_id)] = {
            "labels": estimate.n_labels,
            "accuracy": round(estimate.accuracy, 4),
            "accuracy_sd": round(estimate.accuracy_sd, 4),
            "by_type": {
                str(key): {
                    "labels": s.n_labels,
                    "accuracy": round(s.accuracy, 4),
                    "accuracy_sd": round(s.accuracy_sd, 4),
                }
                for key, s in sorted(estimate.by_stratum.items())
            },
        }
    summary = {
        "annotators": annotators,
        "items": len(model.item_ids),
        "gold_items": len(gold),
        "verifiers": observations,
        "converged": model.convergence.converged,
        "iterations": model.convergence.iterations,
    }
    with transaction.atomic():
        execution.succeed(
            last_label_id=last_label_id,
            labels_seen=len(triples),
            parameters=parameters.as_json(),
            summary=summary,
            progress_done=3,
        )


def _reset(job) -> list[str]:
    job.parameters, job.summary = None, {}
    return ["parameters", "summary"]


REFIT = runner.register(
    JobKind(
        name="annotator-model",
        title="Annotator model fit",
        model=AnnotatorModelFit,
        execute=_execute,
        resumable=False,
        reset=_reset,
        noun="model fit",
        workspace_paths=("project__dataset__workspace",),
    )
)
