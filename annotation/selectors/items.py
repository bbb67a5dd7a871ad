"""Items for reviewers: labels side by side, history, one-line summaries and the conflicts queue."""

from __future__ import annotations

from django.db.models import Q

from core.metrics import tallies
from core.subjects import ViewContext

from .. import aggregates, workflow
from ..models import (
    AnnotationProject,
    Item,
    ItemEvent,
    Label,
)


class InvalidFilter(ValueError):
    """A filter, order or page key the item browser cannot use; the message is meant for the person who sent it."""


def label_dict(label: Label, *, with_annotator: bool = True) -> dict:
    data = {
        "value": label.value,
        "unsuitable": label.unsuitable,
        "unsuitable_reason": label.unsuitable_reason,
        "note": label.note,
        "details": label.details,
        "is_tiebreak": label.is_tiebreak,
        "seconds_spent": label.seconds_spent,
        "created_at": label.created_at.isoformat(),
        "updated_at": label.updated_at.isoformat(),
    }
    if with_annotator:
        data["annotator"] = {"id": label.annotator_id, "username": label.annotator.username}
    return data


def item_review(item: Item) -> dict:
    """Everything about an item for adjudicators and researchers: all labels with who gave them, and what the
    subject plug-in shows reviewers (the verdicts too, unless the project hides them from everyone)."""
    project = item.project
    rules = project.judgement
    labels_given = item_labels(item)
    context = ViewContext(
        kind=project.kind,
        project={"id": project.pk, "name": project.name, "kind": project.kind},
        show_model_names=True,
        show_verdicts=project.verdict_visibility != AnnotationProject.VerdictVisibility.NOBODY,
        labels=labels_given,
        threshold=project.agreement_threshold,
    )
    return {
        "item_id": item.pk,
        "project": {"id": item.project_id, "name": project.name, "kind": project.kind},
        "state": item.state,
        "resolution": item.resolution,
        "final_value": item.final_value,
        "final_display": rules.display(item.final_value) if item.final_value is not None else None,
        "excluded": item.excluded,
        "is_gold": item.is_gold,
        "gold_value": item.gold_value,
        "required_labels": item.required_labels,
        "labels": labels_given,
        **project.subject_kind.review_view(item.subject_id, context),
    }


def item_labels(item: Item) -> list[dict]:
    """Every label of an item with who gave it and how it reads, the same for every subject kind."""
    rules = item.project.judgement
    return [
        {**label_dict(label), "display": "Unsuitable" if label.unsuitable else rules.display(label.value)}
        for label in Label.objects.filter(item=item).select_related("annotator").order_by("created_at", "id")
    ]


def summaries(items) -> dict[int, dict]:
    """{item_id: the subject plug-in's summary (name, title, detail)} for a list of items."""
    by_kind: dict[str, list] = {}
    for item in items:
        by_kind.setdefault(item.project.kind, []).append(item)
    found: dict[int, dict] = {}
    for kind_items in by_kind.values():
        of_subject = kind_items[0].project.subject_kind.summaries([item.subject_id for item in kind_items])
        for item in kind_items:
            found[item.pk] = of_subject.get(item.subject_id, {"name": str(item.subject_id), "title": "", "detail": ""})
    return found


def history(item: Item) -> list[dict]:
    return [
        {
            "at": event.created_at.isoformat(),
            "actor": event.actor.username if event.actor else None,
            "event": event.kind,
            "from_state": event.from_state,
            "to_state": event.to_state,
            "value": event.value,
            "rationale": event.rationale,
        }
        for event in ItemEvent.objects.filter(item=item).select_related("actor").order_by("created_at", "id")
    ]


def conflicts(project: AnnotationProject):
    return (
        Item.objects.filter(project=project, state=workflow.NEEDS_ADJUDICATION, is_gold=False)
        .select_related("project")
        .order_by("priority", "id")
    )


CONFLICTS_PAGE_SIZE = 50


def conflicts_page(project: AnnotationProject, after: str = "", page_size: int = CONFLICTS_PAGE_SIZE):
    """One page of the conflicts queue read from a key (the last "priority~id" seen), and the key of the next page
    (None on the last). One query on the conflict-queue index whatever the number of conflicts."""
    rows = conflicts(project)
    if after:
        priority, item_id = parse_page_key(after)
        rows = rows.filter(Q(priority__gt=priority) | Q(priority=priority, id__gt=item_id))
    found = list(rows[: page_size + 1])
    next_key = page_key(found[page_size - 1], "priority") if len(found) > page_size else None
    return found[:page_size], next_key


def conflict_count(project: AnnotationProject) -> int:
    return tallies.state_counts(aggregates.project_tallies(project, ("s|",)))["by_state"][workflow.NEEDS_ADJUDICATION]


def parse_page_key(key: str) -> tuple[int, int]:
    value, _, item_id = key.partition("~")
    try:
        return int(value), int(item_id)
    except ValueError:
        raise InvalidFilter(f"{key!r} is not a page key") from None


def page_key(item: Item, sort_field: str) -> str:
    return f"{getattr(item, sort_field)}~{item.pk}"
