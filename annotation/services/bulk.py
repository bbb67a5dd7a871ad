"""Bulk actions on a selection of items (exclude, re-open, priority, ...), a chunk per transaction."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from core import labels, roles

from .. import aggregates, completion, workflow
from ..models import (
    AnnotationProject,
    Item,
    ItemEvent,
)
from .errors import InvalidSubmission, NotAllowed
from .projects import gold_refusal

BULK_LIMIT = 2000  # items one request may change; a larger selection is refused with a word to narrow the filter
BULK_CHUNK = 200  # items changed per transaction, so no lock is held on many rows for long
MAX_PRIORITY_STEP = 1000

EXCLUDE, REOPEN, MARK_GOLD, PRIORITY = "exclude", "reopen", "mark_gold", "priority"
BULK_ACTIONS = {
    EXCLUDE: "Exclude from the workflow",
    REOPEN: "Re-open for one more label",
    MARK_GOLD: "Mark as gold",
    PRIORITY: "Change priority",
}


class SelectionTooLarge(InvalidSubmission):
    pass


@dataclass
class BulkResult:
    action: str
    applied: int
    skipped: dict[str, int]  # why items were left as they were -> how many

    def as_dict(self) -> dict:
        return {"action": self.action, "applied": self.applied, "skipped": self.skipped}

    def summary(self) -> str:
        text = f"{BULK_ACTIONS[self.action]}: {self.applied} item{'s' if self.applied != 1 else ''} changed"
        if self.skipped:
            text += "; left as they were: " + "; ".join(f"{count} ({why})" for why, count in self.skipped.items())
        return text + "."


def _bulk_change(item: Item, action: str, *, cleaned, change: int) -> tuple[str | None, list[str], dict]:
    """Apply one action to one locked item in memory: (why it was skipped or None, fields changed, event fields)."""
    before = item.state
    if action == EXCLUDE:
        if item.is_gold:
            return "gold items are not in the workflow", [], {}
        if item.state == workflow.EXCLUDED:
            return "already excluded", [], {}
        outcome = workflow.exclude(item.state, item.required_labels)
        previous = {"final_value": item.final_value, "resolution": item.resolution}
        item.state, item.excluded = outcome.state, outcome.excluded
        return (
            None,
            ["state", "excluded"],
            {
                "kind": ItemEvent.Kind.EXCLUDED,
                "from_state": before,
                "to_state": item.state,
                "value": {"previous": previous},
            },
        )
    if action == REOPEN:
        if item.is_gold:
            return "gold items are not in the workflow", [], {}
        if item.state != workflow.RESOLVED:
            return "only resolved items can be re-opened", [], {}
        outcome = workflow.reopen(item.state, item.label_count)
        previous = {"final_value": item.final_value, "resolution": item.resolution, "excluded": item.excluded}
        item.state, item.required_labels = outcome.state, outcome.required_labels
        item.resolution, item.final_value, item.excluded, item.resolved_at = "", None, False, None
        item.confidence = None
        return (
            None,
            ["state", "required_labels", "resolution", "final_value", "excluded", "resolved_at", "confidence"],
            {
                "kind": ItemEvent.Kind.REOPENED,
                "from_state": before,
                "to_state": item.state,
                "value": {"previous": previous, "required_labels": item.required_labels},
            },
        )
    if action == MARK_GOLD:
        refusal = gold_refusal(item)
        if refusal:
            return ("has labels" if item.label_count else "excluded"), [], {}
        item.is_gold, item.gold_value = True, cleaned
        return (
            None,
            ["is_gold", "gold_value"],
            {"kind": ItemEvent.Kind.GOLD_SET, "from_state": before, "to_state": before, "value": cleaned},
        )
    old = item.priority
    item.priority = old + change
    return (
        None,
        ["priority"],
        {
            "kind": ItemEvent.Kind.PRIORITY_CHANGED,
            "from_state": before,
            "to_state": before,
            "value": {"from": old, "to": item.priority},
        },
    )


def bulk_apply(
    project: AnnotationProject, items, action: str, *, actor, rationale: str = "", value=None, change: int = 0
) -> BulkResult:
    """Apply one action to a selection of the project's items (a query: ticked ids, or everything a filter matches).

    exclude: the item leaves the workflow (no one is given it, no export includes it); rationale required.
    reopen: a resolved item goes back to the annotators for one more label, its final value set aside; rationale
    required. mark_gold: unlabeled items become gold with the known answer `value`. priority: priority + change.
    Items an action does not fit are left alone and counted by reason. Each change is an event in the item's
    history with the actor and the rationale. Selections over BULK_LIMIT items are refused; the rest is applied
    BULK_CHUNK items per transaction, in id order, under row locks.
    """
    if not roles.is_researcher(actor):
        raise NotAllowed("only researchers and admins change items in bulk")
    if action not in BULK_ACTIONS:
        raise InvalidSubmission(f"{action!r} is not an action; choose from {', '.join(BULK_ACTIONS)}")
    rationale = (rationale or "").strip()
    if action in (EXCLUDE, REOPEN) and not rationale:
        raise InvalidSubmission("a written rationale is required: this changes what the item's final label is")
    cleaned = None
    if action == MARK_GOLD:
        try:
            cleaned = project.judgement.clean(value)
        except labels.InvalidValue as exc:
            raise InvalidSubmission(f"the known answer: {exc}") from exc
    if action == PRIORITY:
        if isinstance(change, bool) or not isinstance(change, int) or not change or abs(change) > MAX_PRIORITY_STEP:
            raise InvalidSubmission(
                f"the priority change is a whole number between -{MAX_PRIORITY_STEP} and {MAX_PRIORITY_STEP}, not 0"
            )
    item_ids = list(items.filter(project=project).order_by("id").values_list("id", flat=True)[: BULK_LIMIT + 1])
    if len(item_ids) > BULK_LIMIT:
        raise SelectionTooLarge(
            f"this selection holds more than {BULK_LIMIT:,} items; narrow the filter and apply the action to each part"
        )
    if not item_ids:
        raise InvalidSubmission("no items are selected")
    result = BulkResult(action, 0, {})
    for start in range(0, len(item_ids), BULK_CHUNK):
        with transaction.atomic():
            locked = list(
                Item.objects.select_for_update().filter(pk__in=item_ids[start : start + BULK_CHUNK]).order_by("id")
            )
            changed, fields, events = [], set(), []
            tracker = aggregates.track(project, locked, actor_id=actor.pk) if action != PRIORITY else None
            for item in locked:
                skipped, item_fields, event = _bulk_change(item, action, cleaned=cleaned, change=change)
                if skipped:
                    result.skipped[skipped] = result.skipped.get(skipped, 0) + 1
                    continue
                changed.append(item)
                fields.update(item_fields)
                events.append(ItemEvent(item=item, actor=actor, rationale=rationale, **event))
            if changed:
                Item.objects.bulk_update(changed, sorted(fields))
                ItemEvent.objects.bulk_create(events)
                if tracker is not None:
                    tracker.done()
                if action == EXCLUDE:
                    completion.item_closed(project.pk)
                elif action == REOPEN:
                    completion.items_opened(project.pk)
            result.applied += len(changed)
    return result
