"""Read-only queries over the benchmark data."""
from __future__ import annotations

from django.db.models import Count

from .models import Completion, Dataset, PriorLabel, Question


def dataset_stats(dataset: Dataset) -> dict:
    """Counts of a dataset: questions, completions, questions per answer type, completions per model, prior labels.

    Questions without an answer type are counted under "unclassified".
    """
    by_answer_type = {
        (answer_type or "unclassified"): count
        for answer_type, count in Question.objects.filter(dataset=dataset)
        .order_by("answer_type").values_list("answer_type").annotate(count=Count("id"))
    }
    by_model = {
        model: count
        for model, count in Completion.objects.filter(question__dataset=dataset)
        .order_by("model_name").values_list("model_name").annotate(count=Count("id"))
    }
    return {
        "questions": sum(by_answer_type.values()),
        "completions": sum(by_model.values()),
        "by_answer_type": by_answer_type,
        "by_model": by_model,
        "prior_labels": PriorLabel.objects.filter(completion__question__dataset=dataset).count(),
    }


# ---------------------------------------------------------------- evaluation inputs


def final_correctness_labels(project) -> list[dict]:
    """The final human labels of a correctness project: one dict per resolved, non-excluded, non-gold item.

    Keys: item_id, completion_id, question_id, model, answer_class (None when the question has none),
    is_greedy and final_value (the item's stored final value, not yet checked).
    """
    from annotation.models import Item

    rows = (
        Item.objects.filter(
            project=project, state=Item.State.RESOLVED, excluded=False, is_gold=False, completion__isnull=False
        )
        .order_by("id")
        .values_list(
            "id", "completion_id", "completion__question_id", "completion__model_name",
            "completion__question__answer_class", "completion__is_greedy", "final_value",
        )
    )
    return [
        {
            "item_id": item_id,
            "completion_id": completion_id,
            "question_id": question_id,
            "model": model,
            "answer_class": answer_class or None,
            "is_greedy": is_greedy,
            "final_value": final_value,
        }
        for item_id, completion_id, question_id, model, answer_class, is_greedy, final_value in rows
    ]


def verdict_statuses(verifier_ids, completion_ids=None, dataset=None) -> dict[int, dict[int, str]]:
    """`{verifier_id: {completion_id: status}}` for the given verifiers, limited to some completions or a dataset."""
    from grading.models import Verdict

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
    """VerifierConfigs (by name) that judged at least one completion of the project's items."""
    from annotation.models import Item
    from grading.models import VerifierConfig

    completions = Item.objects.filter(project=project, completion__isnull=False).values("completion_id")
    return list(VerifierConfig.objects.filter(verdicts__completion_id__in=completions).distinct().order_by("name"))


def verifiers_with_verdicts_on_dataset(dataset) -> list:
    """VerifierConfigs (by name) that judged at least one completion of the dataset."""
    from grading.models import VerifierConfig

    return list(
        VerifierConfig.objects.filter(verdicts__completion__question__dataset=dataset).distinct().order_by("name")
    )


def correctness_projects_of_dataset(dataset) -> list:
    """The dataset's correctness annotation projects, newest first."""
    from annotation.models import AnnotationProject

    return list(AnnotationProject.objects.filter(dataset=dataset, kind=AnnotationProject.Kind.CORRECTNESS))


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
