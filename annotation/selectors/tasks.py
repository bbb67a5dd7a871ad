"""What an annotator sees: their own tasks, the task payload (the only way an annotator sees an item) and their recent labels."""

from __future__ import annotations

from core.subjects import ViewContext

from .. import claim_queries
from ..models import (
    AnnotationProject,
    Label,
    Task,
)
from .items import label_dict


def own_task(user, task_id: int) -> Task | None:
    return Task.objects.select_related("item__project").filter(pk=task_id, annotator=user).first()


def own_task_to_submit(user, task_id) -> Task | None:
    """The user's task, for submitting to: without its item and project, which the submit reads under lock."""
    try:
        task_id = int(task_id)
    except (TypeError, ValueError):
        return None
    if not 0 < task_id < 2**63:
        return None
    return claim_queries.task_with_project_id(task_id, user.pk)


def own_tasks(user, task_ids) -> list[Task]:
    return list(Task.objects.select_related("item").filter(pk__in=list(task_ids), annotator=user))


def task_payload(task: Task) -> dict:
    """The task as its annotator may see it: no one else's label or note, no prior label, no model name
    unless the project shows it, no verdicts unless the project shows them, nothing that marks gold items.

    The subject's part comes from the project kind's subject plug-in (core.subjects), given only what the
    project allows this annotator to see."""
    item = task.item
    project = item.project
    # only a submitted task has a label (submitting is what ends a lease), so a fresh claim needs no lookup
    label = Label.objects.filter(task=task).first() if task.status == Task.Status.SUBMITTED else None
    context = ViewContext(
        kind=project.kind,
        project={"id": project.pk, "name": project.name, "kind": project.kind},
        show_model_names=project.show_model_names,
        show_verdicts=project.verdict_visibility == AnnotationProject.VerdictVisibility.EVERYONE,
        my_label=label_dict(label, with_annotator=False) if label is not None else None,
        threshold=project.agreement_threshold,
    )
    return {
        "task_id": task.pk,
        "item_id": item.pk,
        "project": {"id": project.pk, "name": project.name, "kind": project.kind},
        "status": task.status,
        "lease_expires_at": task.expires_at.isoformat(),
        **project.subject_kind.task_view(item.subject_id, context),
    }
