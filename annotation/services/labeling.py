"""Labels: storing an annotator's label and moving the item through the state machine."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone

from core import labels

from .. import aggregates, aggregation, claim_queries, completion, label_writes, workflow
from ..models import (
    AnnotationProject,
    Item,
    ItemEvent,
    Label,
    ProjectMember,
    Task,
)
from .claims import capacity_left
from .errors import InvalidSubmission, NotAllowed, WorkflowError
from .project_settings import policy_lock
from .projects import is_member


@dataclass
class SubmitResult:
    label: Label
    created: bool
    item: Item


def submit_label(
    task: Task,
    user,
    *,
    value=None,
    note: str = "",
    unsuitable: bool = False,
    unsuitable_reason: str = "",
    seconds_spent: float | None = None,
    details: dict | None = None,
) -> SubmitResult:
    """Store an annotator's label for their task and move the item through the state machine.

    Idempotent: the same submission again returns the existing label (created=False). A different value for
    the same task before the item is resolved is recorded as a change. A submission after the lease expired
    is accepted if the item still has a free slot, refused otherwise.
    """
    if unsuitable and not unsuitable_reason.strip() and not note.strip():
        raise InvalidSubmission("say why the item is unsuitable")
    now = timezone.now()
    with transaction.atomic():
        policy_lock(_project_id_of(task))
        # the policy cannot change while this transaction holds the policy lock: the project read with the
        # item is the one in force
        item, task = claim_queries.locked_submission(task.item_id, task.pk)
        project = item.project
        cleaned = _cleaned_value(project, value, unsuitable=unsuitable)
        if task.annotator_id != user.pk:
            raise NotAllowed("this task is not yours")
        lease_live = task.status == Task.Status.LEASED and task.expires_at > now
        # every label of the item, read once: the existing one, the votes and the tallies all come from it
        stored = claim_queries.item_labels(item.pk)
        existing = next((label for label in stored if label.task_id == task.pk), None)
        if existing is not None:
            same = (
                existing.value == cleaned
                and existing.unsuitable == unsuitable
                and existing.note == note
                and (details is None or existing.details == details)
            )
            if same:
                return SubmitResult(existing, False, item)
            _check_still_annotator(project, user)
            refusal = workflow.label_change_refusal(item.state, is_gold=item.is_gold)
            if refusal is not None:
                raise WorkflowError(refusal)
            tracker = aggregates.track(project, [item], actor_id=user.pk, labels=stored)
            changed = _change_label(item, existing, user, cleaned, note, unsuitable, unsuitable_reason, details)
            event = _label_event(item, user, ItemEvent.Kind.LABEL_CHANGED, cleaned, unsuitable, unsuitable_reason, note)
            if item.is_gold:
                event.save()
            else:
                _advance(item, project, actor=user, stored=stored, events=[event])
            tracker.done(labels=stored)
            return SubmitResult(changed, False, item)
        if not lease_live:
            # removing a member ends their leases, so only a lease that ran out needs this look-up
            _check_still_annotator(project, user)
        if item.is_gold:
            tracker = aggregates.track(project, [item], actor_id=user.pk, labels=stored)
            label = _create_label(
                item, task, user, cleaned, note, unsuitable, unsuitable_reason, seconds_spent, details, now
            )
            task.save(update_fields=["status", "finished_at"])
            _label_event(item, user, ItemEvent.Kind.LABELED, cleaned, unsuitable, unsuitable_reason, note).save()
            tracker.done(labels=[*stored, label])
            return SubmitResult(label, True, item)
        if item.state not in workflow.OPEN_STATES:
            raise WorkflowError(f"this item no longer takes labels (it is {item.get_state_display().lower()})")
        if lease_live or capacity_left(item, now, exclude_task=task) > 0:
            tracker = aggregates.track(project, [item], actor_id=user.pk, labels=stored)
            label = _create_label(
                item, task, user, cleaned, note, unsuitable, unsuitable_reason, seconds_spent, details, now
            )
            event = _label_event(item, user, ItemEvent.Kind.LABELED, cleaned, unsuitable, unsuitable_reason, note)
            item.label_count += 1
            item.started = True
            stored.append(label)
            _advance(item, project, actor=user, stored=stored, events=[event], task=task)
            tracker.done(labels=stored)
            return SubmitResult(label, True, item)
        # recorded in a transaction of its own: the refusal below must not roll the record back
        ItemEvent.objects.create(
            item=item, actor=user, kind=ItemEvent.Kind.LATE_SUBMIT_REFUSED, from_state=item.state, to_state=item.state
        )
    raise WorkflowError(
        "your lease on this item expired and the item has since been given to someone else; "
        "your label was not stored — take the next task"
    )


def _project_id_of(task: Task) -> int:
    if Task.item.is_cached(task):
        return task.item.project_id
    # read with the task by claim_queries.task_with_project_id, so the item need not be loaded twice
    project_id = getattr(task, "project_id", None)
    if project_id is None:
        project_id = Item.objects.values_list("project_id", flat=True).get(pk=task.item_id)
    return project_id


def _cleaned_value(project: AnnotationProject, value, *, unsuitable: bool):
    """The value as the project's judgement stores it (None for an unsuitable item)."""
    if unsuitable:
        return None
    try:
        return project.judgement.clean(value)
    except labels.InvalidValue as exc:
        raise InvalidSubmission(str(exc)) from exc


def _check_still_annotator(project: AnnotationProject, user) -> None:
    if not is_member(project, user, ProjectMember.Role.ANNOTATOR):
        raise NotAllowed("you are no longer an annotator on this project; your earlier labels are kept")


def _create_label(item, task, user, cleaned, note, unsuitable, reason, seconds_spent, details, now) -> Label:
    """Insert the label; the task's new status and the LABELED event are stored with the item's move (`_advance`)."""
    written = timezone.now()
    label = Label(
        item=item,
        task=task,
        annotator=user,
        value=cleaned,
        note=note,
        unsuitable=unsuitable,
        unsuitable_reason=reason,
        seconds_spent=seconds_spent,
        # a late first-round submission can land in the tie-break slot
        is_tiebreak=task.is_tiebreak or item.state == workflow.NEEDS_TIEBREAK,
        details=details or {},
        created_at=written,
        updated_at=written,
    )
    # The caller holds the item's row lock and has checked that this task has no label, so the unique
    # (item, annotator) constraint is a last line of defence here: its error ends the whole transaction.
    try:
        label_writes.insert_label(label)
    except IntegrityError:
        raise WorkflowError("you have already labeled this item") from None
    task.status, task.finished_at = Task.Status.SUBMITTED, now
    return label


def _label_event(item, user, kind, cleaned, unsuitable, reason, note) -> ItemEvent:
    return ItemEvent(
        item=item,
        actor=user,
        kind=kind,
        from_state=item.state,
        to_state=item.state,
        value=_event_value(cleaned, unsuitable, reason, note),
        created_at=timezone.now(),
    )


def _change_label(item, label, user, cleaned, note, unsuitable, reason, details) -> Label:
    label.value, label.note, label.unsuitable, label.unsuitable_reason = cleaned, note, unsuitable, reason
    if details is not None:
        label.details = details
    label.save()
    return label


def _event_value(value, unsuitable, reason, note):
    return {"value": value, "unsuitable": unsuitable, "unsuitable_reason": reason, "note": note}


def votes_for(item: Item, stored: Sequence[Label] | None = None) -> list[labels.Vote]:
    """The item's votes in the order they came; from `stored` (every label of the item, oldest first) if given."""
    given = stored if stored is not None else list(Label.objects.filter(item=item).order_by("created_at", "id"))
    return [labels.Vote(label.annotator_id, label.value, label.unsuitable) for label in given]


def _advance(
    item: Item,
    project: AnnotationProject,
    *,
    actor,
    stored: Sequence[Label] | None = None,
    events: Sequence[ItemEvent] = (),
    task: Task | None = None,
) -> None:
    """Move the item after a label and store the move with `events` (the label's own) and `task` (a submitted
    task), in one round trip."""
    before = item.state
    votes = votes_for(item, stored)
    outcome, item.confidence = aggregation.after_label(
        item, project, votes, workflow.evaluate(project.judgement, project.policy(), votes)
    )
    workflow.check_transition(before, outcome.state, "label")
    item.state, item.required_labels = outcome.state, outcome.required_labels
    if outcome.state == workflow.RESOLVED:
        item.resolution, item.final_value, item.excluded = outcome.resolution, outcome.final_value, outcome.excluded
        item.resolved_at = timezone.now()
    if item.state in completion.CLOSED_STATES and before not in completion.CLOSED_STATES:
        completion.item_closed(project.pk)
    events = list(events)
    event_kind = {
        workflow.NEEDS_TIEBREAK: ItemEvent.Kind.TIEBREAK_REQUESTED,
        workflow.NEEDS_ADJUDICATION: ItemEvent.Kind.ADJUDICATION_REQUESTED,
        workflow.RESOLVED: ItemEvent.Kind.RESOLVED,
    }.get(item.state)
    if before != item.state and event_kind:
        events.append(
            ItemEvent(
                item=item,
                actor=actor,
                kind=event_kind,
                from_state=before,
                to_state=item.state,
                value={
                    "final_value": item.final_value,
                    "resolution": item.resolution,
                    "excluded": item.excluded,
                    **({"confidence": item.confidence} if item.confidence is not None else {}),
                }
                if item.state == workflow.RESOLVED
                else None,
                created_at=timezone.now(),
            )
        )
    label_writes.save_moves(item=item, events=events, task=task)
