"""A project's figures from its tallies: counts by state, agreement, per annotator, over time, and an annotator's own progress."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import Count, Sum
from django.utils import timezone

from core.metrics import tallies

from .. import aggregates, workflow
from ..models import (
    AnnotationProject,
    Item,
    Label,
    Task,
)

AGREEMENT_KEYS = ("ai|", "ap|", "aa|", "au|")


def my_progress(project: AnnotationProject, user) -> dict:
    """The annotator's own figures: labels today and in all, seconds spent today, the project's open items, and
    how many of those are left for them (open items they have neither labeled nor skipped).

    "Left for me" is the open items (index on project and state) less the user's own finished tasks on open items
    (index on annotator, status and item), so it costs two index-range counts and never an anti-join over the
    project."""
    today = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    mine = Label.objects.filter(item__project=project, annotator=user)
    open_items = Item.objects.filter(project=project, is_gold=False, state__in=workflow.OPEN_STATES)
    left_in_project = open_items.count()
    finished_on_open = Task.objects.filter(
        annotator=user,
        status__in=[Task.Status.SUBMITTED, Task.Status.SKIPPED],
        item__project=project,
        item__is_gold=False,
        item__state__in=workflow.OPEN_STATES,
    ).count()
    today_figures = mine.filter(created_at__gte=today).aggregate(n=Count("pk"), seconds=Sum("seconds_spent"))
    done_total = mine.count()
    left_for_me = max(0, left_in_project - finished_on_open)
    return {
        "done_today": today_figures["n"],
        "seconds_today": round(today_figures["seconds"] or 0),
        "done_total": done_total,
        "left_in_project": left_in_project,
        "left_for_me": left_for_me,
        "percent_done": round(100 * done_total / (done_total + left_for_me)) if done_total + left_for_me else 100,
    }


def state_counts(project: AnnotationProject, kept: Mapping[str, int] | None = None) -> dict:
    """Items by state and resolution, excluded items, labels and gold items, from the project's tallies."""
    counts = tallies.state_counts(aggregates.project_tallies(project) if kept is None else kept)
    by_resolution = counts["by_resolution"]
    # "model" is listed for projects that aggregate with their annotator model (or have such final labels)
    counts["by_resolution"] = {
        res: by_resolution.get(res, 0)
        for res in workflow.RESOLUTIONS
        if res != workflow.BY_MODEL or project.aggregation == "model" or by_resolution.get(res)
    }
    return counts


def agreement_figures(project: AnnotationProject, kept: Mapping[str, int] | None = None) -> dict:
    """Raw agreement and Cohen's kappa on each item's first two labels; Krippendorff's alpha over all labels
    (nominal for labels, interval for scores). From the project's tallies."""
    kept = aggregates.project_tallies(project, AGREEMENT_KEYS) if kept is None else kept
    return tallies.overall_agreement(project.judgement, kept)


def agreement_by_answer_type(project: AnnotationProject, kept: Mapping[str, int] | None = None) -> dict:
    kept = aggregates.project_tallies(project, AGREEMENT_KEYS) if kept is None else kept
    return tallies.agreement_by_group(project.judgement, kept)


def annotator_table(project: AnnotationProject, kept: Mapping[str, int] | None = None) -> list[dict]:
    """Per annotator: labels given, agreement with the final label, median seconds per item, gold accuracy."""
    kept = aggregates.project_tallies(project, ("n|", "t|")) if kept is None else kept
    rows = tallies.annotator_rows(kept)
    names = dict(get_user_model().objects.filter(pk__in=list(rows)).values_list("pk", "username"))
    table = [{"annotator": names.get(annotator_id, str(annotator_id)), **row} for annotator_id, row in rows.items()]
    return sorted(table, key=lambda r: r["annotator"])


def progress(project: AnnotationProject) -> dict:
    kept = aggregates.project_tallies(project)
    return {
        "project": {"id": project.pk, "name": project.name, "kind": project.kind},
        **state_counts(project, kept),
        "agreement": agreement_figures(project, kept),
        "annotators": annotator_table(project, kept),
    }


def progress_over_time(project: AnnotationProject, days: int = 30) -> list[dict]:
    since = (timezone.now() - timedelta(days=days)).date().isoformat()
    return tallies.timeline(aggregates.project_tallies(project, ("dl|", "dr|")), since)
