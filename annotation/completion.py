"""What the workflow tells others through core.events: an item adjudicated, and a project complete.

A project is complete when it has items in the workflow and every one of them is resolved or excluded (gold items
are not in the workflow). Whether the item just closed was the last one is checked after its transaction commits, so
two annotators closing the last two items at once never both miss it (each check sees the other's commit or runs
after it); the `ProjectCompletion` row, inserted by the first check that finds the project complete, makes that check
the only one that announces it. Re-opening an item, or adding items, removes the row, so the project's next
completion is announced again.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from core import events

from . import workflow
from .models import AnnotationProject, Item, ProjectCompletion

PROJECT_COMPLETED = events.declare("project.completed", "Every item of a project is resolved or excluded")
ITEM_ADJUDICATED = events.declare("item.adjudicated", "An adjudicator decided an item's final label")

CLOSED_STATES = (workflow.RESOLVED, workflow.EXCLUDED)


def item_closed(project_id: int) -> None:
    """Call in the transaction that resolved or excluded an item: once it commits, see whether it was the last."""
    transaction.on_commit(lambda: check(project_id), robust=True)


def items_opened(project_id: int) -> None:
    """Call in the transaction that re-opens items or adds new ones: the project is no longer complete."""
    ProjectCompletion.objects.filter(project_id=project_id).delete()


def check(project_id: int) -> bool:
    """Record and announce the project's completion if every item in its workflow is closed and nobody has yet."""
    in_workflow = Item.objects.filter(project_id=project_id, is_gold=False)
    if not in_workflow.exists() or in_workflow.exclude(state__in=CLOSED_STATES).exists():
        return False
    project = AnnotationProject.objects.filter(pk=project_id, preparing=False).first()
    if project is None:
        return False
    try:
        with transaction.atomic():
            completion = ProjectCompletion.objects.create(project=project, completed_at=timezone.now())
    except IntegrityError:  # another check recorded it first
        return False
    events.emit(
        PROJECT_COMPLETED,
        {
            "project": _project(project),
            "completed_at": completion.completed_at.isoformat(),
            "items": {
                "resolved": in_workflow.filter(state=workflow.RESOLVED, excluded=False).count(),
                "excluded": in_workflow.filter(excluded=True).count(),
            },
        },
        project_id=project.pk,
        dataset_id=project.dataset_id,
    )
    return True


def item_adjudicated(item: Item, adjudicator, rationale: str) -> None:
    """Announce an adjudication once its transaction commits."""
    project = item.project
    events.emit(
        ITEM_ADJUDICATED,
        {
            "project": _project(project),
            "item": {
                "id": item.pk,
                "url": f"/api/items/{item.pk}/",
                "subject_id": item.subject_id,
                "state": item.state,
                "resolution": item.resolution,
                "final_value": item.final_value,
                "excluded": item.excluded,
            },
            "adjudicator": adjudicator.get_username(),
            "rationale": rationale,
        },
        project_id=project.pk,
        dataset_id=project.dataset_id,
    )


def _project(project: AnnotationProject) -> dict[str, Any]:
    return {"id": project.pk, "name": project.name, "kind": project.kind, "dataset": project.dataset_id}
