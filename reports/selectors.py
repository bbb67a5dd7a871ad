"""Queries behind the reports: final human labels, verdict statuses, and the samples of a dataset."""

from __future__ import annotations

import json

from django.db.models import Count, Exists, OuterRef, Subquery

from annotation import aggregates, workflow
from annotation.models import AnnotationProject, GroupTally, Item
from grading.models import Verdict, VerifierConfig
from verifybench.label_rules import CORRECTNESS
from verifybench.models import Completion


def final_correctness_labels(project) -> list[dict]:
    """The final human labels of a correctness project: one dict per resolved, non-excluded, non-gold item.

    Keys: item_id, completion_id, question_id, model, answer_class and answer_type (None when the question has
    none), is_greedy and final_value (the item's stored final value, not yet checked).
    """
    items = Item.objects.filter(project=project, state=workflow.RESOLVED, excluded=False, is_gold=False)
    item_of = Item.objects.filter(project=project, subject_id=OuterRef("pk")).values("pk")[:1]
    rows = (
        Completion.objects.filter(pk__in=items.values("subject_id"))
        .annotate(item_id=Subquery(item_of))
        .order_by("item_id")
        .values_list(
            "item_id", "pk", "question_id", "model_name", "question__answer_class", "is_greedy", "question__answer_type"
        )
    )
    finals = dict(items.values_list("subject_id", "final_value").iterator(chunk_size=5000))
    return [
        {
            "item_id": item_id,
            "completion_id": completion_id,
            "question_id": question_id,
            "model": model,
            "answer_class": answer_class or None,
            "is_greedy": is_greedy,
            "answer_type": answer_type or None,
            "final_value": finals[completion_id],
        }
        for item_id, completion_id, question_id, model, answer_class, is_greedy, answer_type in rows.iterator(
            chunk_size=5000
        )
    ]


def first_bad_final_value(project) -> dict | None:
    """A resolved, non-excluded, non-gold item whose final value is not true or false: {item_id, final_value}."""
    item = (
        Item.objects.filter(project=project, state=workflow.RESOLVED, excluded=False, is_gold=False)
        .exclude(final_value=True)
        .exclude(final_value=False)
        .order_by("pk")
        .values("pk", "final_value")
        .first()
    )
    return {"item_id": item["pk"], "final_value": item["final_value"]} if item else None


def items_missing_verdicts(project, verifier, limit: int) -> list[int]:
    """Ids of the first `limit` items with a final human label that the verifier has no verdict on."""
    judged = Verdict.objects.filter(verifier=verifier, completion_id=OuterRef("subject_id"))
    return list(
        Item.objects.filter(project=project, state=workflow.RESOLVED, excluded=False, is_gold=False)
        .exclude(Exists(judged))
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )


def verdict_statuses(verifier_ids, completion_ids=None, dataset=None) -> dict[int, dict[int, str]]:
    """`{verifier_id: {completion_id: status}}` for the given verifiers, limited to some completions or a dataset."""
    verdicts = Verdict.objects.filter(verifier_id__in=list(verifier_ids))
    if completion_ids is not None:
        verdicts = verdicts.filter(completion_id__in=list(completion_ids))
    if dataset is not None:
        verdicts = verdicts.filter(completion__question__dataset=dataset)
    statuses: dict[int, dict[int, str]] = {verifier_id: {} for verifier_id in verifier_ids}
    for verifier_id, completion_id, status in verdicts.values_list("verifier_id", "completion_id", "status").iterator():
        statuses[verifier_id][completion_id] = status
    return statuses


def verifiers_with_verdicts_on_project(project) -> list:
    """VerifierConfigs (by name) that judged at least one completion of the project's items, from the project's
    tallies (grading.verdict_tallies counts them per verifier as verdicts arrive)."""
    judged = {int(key[3:]) for key in aggregates.project_tallies(project, ("vv|",))}
    return list(VerifierConfig.objects.filter(pk__in=judged).order_by("name"))


def verifiers_with_verdicts_on_dataset(dataset) -> list:
    """VerifierConfigs (by name) that judged at least one completion of the dataset ."""
    # One query a verifier, each stopping at its first verdict on the dataset: as one query PostgreSQL reads every
    # verdict of the dataset instead.
    return [
        verifier
        for verifier in VerifierConfig.objects.order_by("name")
        if Verdict.objects.filter(verifier=verifier, completion__question__dataset=dataset).exists()
    ]


def sample_counts(project) -> dict[str, dict[tuple[int, int], int]]:
    """{author model: {(n, c): questions}}: how many of the model's questions have n sampled answers with a final
    human label in the project, c of them correct (from the GroupTally rows grading.verdict_tallies keeps)."""
    rows = (
        GroupTally.objects.filter(project=project, n__gt=0)
        .values_list("series", "n", "c")
        .annotate(questions=Count("pk"))
        .order_by()
    )
    found: dict[str, dict[tuple[int, int], int]] = {}
    for model, n, c, questions in rows:
        found.setdefault(model, {})[(n, c)] = questions
    return found


def greedy_counts(project) -> dict[str, tuple[int, int]]:
    """{author model: (greedy answers with a final human label, correct ones)} from the project's tallies."""
    found: dict[str, list[int]] = {}
    for key, count in aggregates.project_tallies(project, ("qg|",)).items():
        _, counter, model = key.split("|", 2)
        found.setdefault(json.loads(model), [0, 0])["nc".index(counter)] += count
    return {model: (n, c) for model, (n, c) in found.items()}


def questions_with_samples(project, model: str, n: int, limit: int) -> list[str]:
    """Ids (as text, in the index's order) of the first `limit` of the model's questions with n labeled samples."""
    rows = GroupTally.objects.filter(project=project, series=model, n=n).order_by("group")
    return list(rows.values_list("group", flat=True)[:limit])


def correctness_projects_of_dataset(dataset) -> list:
    """The dataset's correctness annotation projects, newest first."""
    return list(AnnotationProject.objects.filter(dataset=dataset, kind=CORRECTNESS))


def dataset_completion_samples(dataset) -> list[dict]:
    """Every completion of a dataset as `{completion_id, question_id, model, is_greedy}`, in id order."""
    rows = (
        Completion.objects.filter(question__dataset=dataset)
        .order_by("id")
        .values_list("id", "question_id", "model_name", "is_greedy")
    )
    return [
        {"completion_id": completion_id, "question_id": question_id, "model": model, "is_greedy": is_greedy}
        for completion_id, question_id, model, is_greedy in rows.iterator()
    ]


def export_previews(project, export_formats) -> dict:
    """{format name: ExportPreview or None}: the rows each format would write now from the project's final labels,
    with its default options, counted by aggregate queries."""
    return {
        export_format.name: export_format.preview_of(project, export_format.clean_options({}))
        for export_format in export_formats
    }
