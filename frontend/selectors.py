"""Read-side queries behind the pages."""

from __future__ import annotations

from django.db.models import BigIntegerField, Count, OuterRef, Prefetch, Subquery, Sum, Value
from django.db.models.functions import Coalesce

from annotation import selectors as annotation_selectors
from annotation import workflow
from annotation.models import AnnotationProject, Item, ProjectMember, ProjectTally
from core import workspaces
from verifybench import selectors as verifybench_selectors
from verifybench.models import Completion, Dataset, Question, ReferenceAnswer


def datasets_with_counts(user):
    visible = Dataset.objects.filter(workspaces.condition(user))
    return verifybench_selectors.datasets_with_counts(visible).order_by("name")


def researcher_workspaces(user):
    """The workspaces the user works in as a researcher (every one for an admin), with how many datasets and
    workspace webhooks each has."""
    return workspaces.workspaces_for(user).annotate(
        dataset_count=Count("datasets", distinct=True), webhook_count=Count("webhooks", distinct=True)
    )


def dataset_totals(user) -> dict:
    """Totals over the datasets of the user's workspaces, from the counts each dataset keeps."""
    summed = Dataset.objects.filter(workspaces.condition(user)).aggregate(
        datasets=Count("pk"),
        questions=Sum("question_count"),
        completions=Sum("completion_count"),
        prior_labels=Sum("prior_label_count"),
    )
    return {
        "datasets": summed["datasets"],
        "questions": summed["questions"] or 0,
        "completions": summed["completions"] or 0,
        "prior_labels": summed["prior_labels"] or 0,
    }


def _tally(*keys: str):
    """The sum of some of a project's tallies (annotation.aggregates), as a subquery: a few indexed rows a project."""
    summed = (
        ProjectTally.objects.filter(project=OuterRef("pk"), key__in=keys)
        .order_by()
        .values("project")
        .annotate(total=Sum("count"))
        .values("total")
    )
    return Coalesce(Subquery(summed, output_field=BigIntegerField()), Value(0))


def projects_with_item_counts(projects):
    return projects.annotate(
        item_count=_tally(*(f"s|{state}" for state in workflow.STATES)),
        resolved_count=_tally(f"s|{workflow.RESOLVED}"),
        awaiting_adjudication=_tally(f"s|{workflow.NEEDS_ADJUDICATION}"),
    )


def annotator_projects(user) -> list[dict]:
    """Active projects the user labels in, with their own progress."""
    projects = (
        AnnotationProject.objects.select_related("dataset")
        .filter(
            is_active=True,
            preparing=False,
            memberships__user=user,
            memberships__role=ProjectMember.Role.ANNOTATOR,
            memberships__is_active=True,
        )
        .distinct()
    )
    return [{"project": project, "progress": annotation_selectors.my_progress(project, user)} for project in projects]


def adjudicator_projects(user):
    projects = (
        AnnotationProject.objects.select_related("dataset")
        .filter(
            is_active=True,
            preparing=False,
            memberships__user=user,
            memberships__role=ProjectMember.Role.ADJUDICATOR,
            memberships__is_active=True,
        )
        .distinct()
    )
    return projects_with_item_counts(projects)


def all_projects(user):
    """The projects of the user's workspaces."""
    visible = AnnotationProject.objects.filter(workspaces.condition(user, "dataset__workspace"))
    return projects_with_item_counts(visible.select_related("dataset"))


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
        .prefetch_related(
            Prefetch(
                "completions",
                queryset=Completion.objects.only("id", "question_id", "model_name", "sample_index", "external_id"),
            )
        )
        .order_by("id")
    )
