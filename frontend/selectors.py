"""Read-side queries behind the pages."""
from __future__ import annotations

from django.db.models import Count, Prefetch, Q

from annotation import selectors as annotation_selectors
from annotation import workflow
from annotation.models import AnnotationProject, Item, ProjectMember
from verifybench.models import Completion, Dataset, PriorLabel, Question, ReferenceAnswer


def datasets_with_counts():
    return Dataset.objects.annotate(
        question_count=Count("questions", distinct=True),
        completion_count=Count("questions__completions", distinct=True),
    ).order_by("name")


def dataset_totals() -> dict:
    return {
        "datasets": Dataset.objects.count(),
        "questions": Question.objects.count(),
        "completions": Completion.objects.count(),
        "prior_labels": PriorLabel.objects.count(),
    }


def projects_with_item_counts(projects):
    return projects.annotate(
        item_count=Count("items", filter=Q(items__is_gold=False), distinct=True),
        resolved_count=Count(
            "items", filter=Q(items__is_gold=False, items__state=workflow.RESOLVED), distinct=True
        ),
        awaiting_adjudication=Count(
            "items", filter=Q(items__is_gold=False, items__state=workflow.NEEDS_ADJUDICATION), distinct=True
        ),
    )


def annotator_projects(user) -> list[dict]:
    """Active projects the user labels in, with their own progress."""
    projects = AnnotationProject.objects.select_related("dataset").filter(
        is_active=True, memberships__user=user, memberships__role=ProjectMember.Role.ANNOTATOR,
        memberships__is_active=True,
    ).distinct()
    return [
        {"project": project, "progress": annotation_selectors.my_progress(project, user)}
        for project in projects
    ]


def adjudicator_projects(user):
    projects = AnnotationProject.objects.select_related("dataset").filter(
        is_active=True, memberships__user=user, memberships__role=ProjectMember.Role.ADJUDICATOR,
        memberships__is_active=True,
    ).distinct()
    return projects_with_item_counts(projects)


def all_projects():
    return projects_with_item_counts(AnnotationProject.objects.select_related("dataset"))


def items_awaiting_adjudication(projects) -> int:
    return Item.objects.filter(project__in=projects, is_gold=False, state=workflow.NEEDS_ADJUDICATION).count()


def completion_for_display(completion_id: int) -> Completion | None:
    references = Prefetch("question__references", queryset=ReferenceAnswer.objects.order_by("-is_primary", "id"))
    return (
        Completion.objects.select_related("question__dataset")
        .prefetch_related(references, "prior_labels")
        .filter(pk=completion_id)
        .first()
    )


def dataset_questions(dataset: Dataset):
    return (
        Question.objects.filter(dataset=dataset)
        .prefetch_related(Prefetch("completions", queryset=Completion.objects.only(
            "id", "question_id", "model_name", "sample_index", "external_id")))
        .order_by("id")
    )
