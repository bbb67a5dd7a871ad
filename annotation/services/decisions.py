"""Decisions: adjudication and override of an item's final label, each with a written rationale."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from core import labels, roles

from .. import aggregates, completion, workflow
from ..models import (
    Item,
    ItemEvent,
)
from .errors import InvalidSubmission, NotAllowed, WorkflowError


def _decide(item: Item, user, *, value, unsuitable: bool, rationale: str, event: str) -> Item:
    if not rationale or not rationale.strip():
        raise InvalidSubmission("a written rationale is required")
    project = item.project
    if unsuitable:
        cleaned = labels.UNSUITABLE
    else:
        try:
            cleaned = project.judgement.clean(value)
        except labels.InvalidValue as exc:
            raise InvalidSubmission(str(exc)) from exc
    with transaction.atomic():
        item = Item.objects.select_for_update().get(pk=item.pk)
        if item.is_gold:
            raise WorkflowError("gold items are not part of the workflow")
        try:
            outcome = workflow.decide(item.state, cleaned, event=event, required_labels=item.required_labels)
        except workflow.IllegalTransition:
            if event == "adjudicate":
                raise WorkflowError(
                    f"only items that need adjudication can be adjudicated (this one is "
                    f"{item.get_state_display().lower()})"
                ) from None
            raise WorkflowError("only resolved items can be overridden") from None
        before = item.state
        tracker = aggregates.track(project, [item], actor_id=user.pk)
        item.state, item.resolution, item.confidence = outcome.state, outcome.resolution, None
        item.final_value, item.excluded, item.resolved_at = outcome.final_value, outcome.excluded, timezone.now()
        item.save()
        tracker.done()
        ItemEvent.objects.create(
            item=item,
            actor=user,
            kind=ItemEvent.Kind.ADJUDICATED if event == "adjudicate" else ItemEvent.Kind.OVERRIDDEN,
            from_state=before,
            to_state=item.state,
            rationale=rationale.strip(),
            value={"final_value": item.final_value, "excluded": item.excluded},
        )
        if event == "adjudicate":
            completion.item_adjudicated(item, user, rationale.strip())
        if before not in completion.CLOSED_STATES:
            completion.item_closed(project.pk)
    return item


def adjudicate(item: Item, user, *, value=None, unsuitable: bool = False, rationale: str) -> Item:
    if not roles.is_adjudicator(user):
        raise NotAllowed("only adjudicators can adjudicate")
    return _decide(item, user, value=value, unsuitable=unsuitable, rationale=rationale, event="adjudicate")


def override(item: Item, user, *, value=None, unsuitable: bool = False, rationale: str) -> Item:
    if not roles.is_admin(user):
        raise NotAllowed("only admins can override a final label")
    return _decide(item, user, value=value, unsuitable=unsuitable, rationale=rationale, event="override")
