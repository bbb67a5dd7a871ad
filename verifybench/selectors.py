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
        .order_by("answer_type")
        .values_list("answer_type")
        .annotate(count=Count("id"))
    }
    by_model = {
        model: count
        for model, count in Completion.objects.filter(question__dataset=dataset)
        .order_by("model_name")
        .values_list("model_name")
        .annotate(count=Count("id"))
    }
    return {
        "questions": sum(by_answer_type.values()),
        "completions": sum(by_model.values()),
        "by_answer_type": by_answer_type,
        "by_model": by_model,
        "prior_labels": PriorLabel.objects.filter(completion__question__dataset=dataset).count(),
    }


def external_ids(question_ids, completion_ids) -> tuple[dict[int, str], dict[int, str]]:
    """The file's own ids of the given questions and completions (by primary key), for reports that name them."""
    questions = dict(Question.objects.filter(pk__in=set(question_ids)).values_list("pk", "external_id"))
    completions = dict(Completion.objects.filter(pk__in=set(completion_ids)).values_list("pk", "external_id"))
    return questions, completions


def datasets_with_counts(datasets=None):
    """Datasets with their question_count, completion_count and model_count, kept by `services.recount`."""
    return Dataset.objects.all() if datasets is None else datasets


def counted(dataset: Dataset) -> dict:
    """The dataset's question_count, completion_count, prior_label_count, model_count and model_names counted from
    its rows."""
    completions = Completion.objects.filter(question__dataset=dataset)
    names = list(completions.order_by("model_name").values_list("model_name", flat=True).distinct())
    return {
        "question_count": Question.objects.filter(dataset=dataset).count(),
        "completion_count": completions.count(),
        "prior_label_count": PriorLabel.objects.filter(completion__question__dataset=dataset).count(),
        "model_count": len(names),
        "model_names": names,
    }
