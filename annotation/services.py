"""Writes and business rules of the annotation workflow: projects, assignment, labels, decisions."""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from core import labels, roles, subjects

from . import workflow
from .models import AnnotationProject, Item, ItemEvent, Label, ProjectMember, Task


class WorkflowError(Exception):
    """A request the workflow refuses; the message is meant for the person who made it."""

    status_code = 409


class NotAllowed(WorkflowError):
    status_code = 403


class InvalidSubmission(WorkflowError):
    status_code = 400


# ---------------------------------------------------------------- projects

def create_project(
    *,
    dataset,
    kind: str,
    name: str = "",
    created_by=None,
    subject_ids: list[int] | None = None,
    seed: int | None = None,
    **settings,
) -> AnnotationProject:
    """Create a project and its items: every subject the dataset offers for this kind (every completion for
    correctness, every question for answer types), or the chosen ones."""
    try:
        subject_kind = subjects.get(kind)
    except subjects.UnknownSubjectKind as exc:
        raise InvalidSubmission(exc.args[0]) from None
    if subject_kind.subject_ids is None:
        raise InvalidSubmission(subject_kind.extra.get(
            "created_from", f"{subject_kind.title} projects are not made from a dataset's rows."))
    with transaction.atomic():
        project = AnnotationProject.objects.create(
            dataset=dataset, kind=kind, name=name or f"{dataset.name} {kind}", created_by=created_by, **settings
        )
        populate_items(project, subject_ids=subject_ids, seed=seed)
    return project


def populate_items(project: AnnotationProject, *, subject_ids: list[int] | None = None, seed: int | None = None) -> int:
    """Give a new project its items: every subject its dataset offers for the project's kind, or the chosen ones.
    Returns how many were created."""
    subject_ids_of = project.subject_kind.subject_ids
    if subject_ids_of is None:
        raise InvalidSubmission(f"{project.get_kind_display()} projects are not made from a dataset's rows")
    return add_items(project, subject_ids=subject_ids_of(project.dataset_id, subject_ids), seed=seed)


def add_items(
    project: AnnotationProject,
    *,
    subject_ids: Sequence[int] = (),
    priority: int = 0,
    seed: int | None = None,
    extra: dict | None = None,
) -> int:
    """Add items to a project, skipping any it already has. Returns how many were created."""
    rng = random.Random(seed)
    subject_ids = list(subject_ids)
    answer_types = project.subject_kind.answer_types(subject_ids) if subject_ids else {}
    new_items = [
        Item(project=project, subject_id=subject_id, answer_type=answer_types.get(subject_id, ""),
             required_labels=project.labels_per_item, priority=priority, random_key=rng.random(), **(extra or {}))
        for subject_id in subject_ids
    ]
    before = project.items.count()
    Item.objects.bulk_create(new_items, batch_size=2000, ignore_conflicts=True)
    return project.items.count() - before


def add_member(project: AnnotationProject, user, role: str = ProjectMember.Role.ANNOTATOR) -> ProjectMember:
    member, _ = ProjectMember.objects.get_or_create(project=project, user=user, role=role)
    return member


def is_member(project: AnnotationProject, user, role: str | None = None) -> bool:
    memberships = ProjectMember.objects.filter(project=project, user=user)
    if role:
        memberships = memberships.filter(role=role)
    return memberships.exists()


def mark_gold(project: AnnotationProject, item: Item, value, *, actor) -> Item:
    """Make an item a gold item with a known answer. Gold items are mixed into queues, never exported."""
    cleaned = project.judgement.clean(value)
    with transaction.atomic():
        item = Item.objects.select_for_update().get(pk=item.pk, project=project)
        if item.label_count and not item.is_gold:
            raise WorkflowError("this item already has workflow labels; choose an unlabeled item as gold")
        item.is_gold, item.gold_value = True, cleaned
        item.save(update_fields=["is_gold", "gold_value"])
        ItemEvent.objects.create(item=item, actor=actor, kind=ItemEvent.Kind.GOLD_SET, value=cleaned,
                                 from_state=item.state, to_state=item.state)
    return item


# ---------------------------------------------------------------- assignment

@dataclass
class Claim:
    task: Task
    created: bool


def _active_leases(now):
    return (
        Task.objects.filter(item=OuterRef("pk"), status=Task.Status.LEASED, expires_at__gt=now)
        .order_by()
        .values("item")
        .annotate(n=Count("pk"))
        .values("n")
    )


def _capacity_left(item: Item, now, exclude_task: Task | None = None) -> int:
    leases = Task.objects.filter(item=item, status=Task.Status.LEASED, expires_at__gt=now)
    if exclude_task is not None:
        leases = leases.exclude(pk=exclude_task.pk)
    return item.required_labels - item.label_count - leases.count()


# what task_payload reads of the item, fetched with the claim instead of one query each
_PAYLOAD_RELATIONS = ("item__project",)


def _current_lease(project: AnnotationProject, user, now) -> Task | None:
    return (
        Task.objects.select_related(*_PAYLOAD_RELATIONS)
        .filter(item__project=project, annotator=user, status=Task.Status.LEASED, expires_at__gt=now)
        # a lease on an item that stopped taking labels (e.g. resolved by a label change) is not work to hand out
        .filter(Q(item__state__in=workflow.OPEN_STATES) | Q(item__is_gold=True))
        .order_by("leased_at")
        .first()
    )


def next_task(project: AnnotationProject, user) -> Task | None:
    """Give an annotator the next item to label, or None when nothing is left for them.

    Items that already have a label come first (finish what is started), then by priority, then at random.
    The item row is locked (SKIP LOCKED on PostgreSQL) and its capacity re-checked under the lock, so
    concurrent claims never lease more slots than an item needs.
    """
    if not project.is_active:
        raise WorkflowError("this project is closed")
    if not is_member(project, user, ProjectMember.Role.ANNOTATOR):
        raise NotAllowed("you are not an annotator on this project")
    now = timezone.now()
    existing = _current_lease(project, user, now)
    if existing is not None:
        return existing

    if project.gold_rate > 0 and random.random() < project.gold_rate:
        gold = _claim_gold(project, user, now)
        if gold is not None:
            return gold

    done_by_user = Task.objects.filter(
        item=OuterRef("pk"), annotator=user, status__in=[Task.Status.SUBMITTED, Task.Status.SKIPPED]
    )
    candidates = (
        Item.objects.filter(project=project, state__in=workflow.OPEN_STATES, is_gold=False)
        .annotate(leases=Coalesce(Subquery(_active_leases(now), output_field=IntegerField()), Value(0)))
        .filter(~Exists(done_by_user))
        .filter(leases__lt=F("required_labels") - F("label_count"))
        .select_related(*(relation.removeprefix("item__") for relation in _PAYLOAD_RELATIONS))
        .order_by("-started", "-priority", "random_key")
    )
    for _attempt in range(20):
        with transaction.atomic():
            item = candidates.select_for_update(skip_locked=True, of=("self",)).first()
            if item is None:
                if not candidates.exists():
                    return None
                # Every item left is locked by a concurrent claim or submit: wait for one instead of
                # telling the annotator that nothing is left.
                item = candidates.select_for_update(of=("self",)).first()
                if item is None:
                    continue
            if _capacity_left(item, now) <= 0:
                continue  # a claim committed between our snapshot and the lock; look again
            return _lease(project, item, user, now)
    return None


def _claim_gold(project: AnnotationProject, user, now) -> Task | None:
    with transaction.atomic():
        item = (
            Item.objects.filter(project=project, is_gold=True)
            .exclude(tasks__annotator=user)
            .order_by("random_key")
            .select_for_update(skip_locked=True, of=("self",))
            .first()
        )
        if item is None:
            return None
        return _lease(project, item, user, now)


def _lease(project: AnnotationProject, item: Item, user, now) -> Task:
    expires = now + timedelta(minutes=project.lease_minutes)
    is_tiebreak = item.state == workflow.NEEDS_TIEBREAK
    # The caller holds the item's row lock and every lease on an item is taken under that lock, so no one
    # can insert this (item, annotator) task between the look-up and the insert: no savepoint is needed.
    task = Task.objects.filter(item=item, annotator=user).first()
    if task is None:
        task = Task.objects.create(item=item, annotator=user, status=Task.Status.LEASED, leased_at=now,
                                   expires_at=expires, is_tiebreak=is_tiebreak)
    else:
        # The same person's earlier lease on this item expired without a label: renew it.
        task.status, task.leased_at, task.expires_at, task.is_tiebreak = Task.Status.LEASED, now, expires, is_tiebreak
        task.save(update_fields=["status", "leased_at", "expires_at", "is_tiebreak"])
    if item.state == workflow.PENDING and not item.is_gold:
        workflow.check_transition(item.state, workflow.IN_PROGRESS, "claim")
        item.state = workflow.IN_PROGRESS
        item.save(update_fields=["state"])
    return task


def skip_task(task: Task, user) -> Task:
    """Release a lease at once; the item goes back to the pool (for others)."""
    with transaction.atomic():
        task = Task.objects.select_for_update().get(pk=task.pk)
        if task.annotator_id != user.pk:
            raise NotAllowed("this task is not yours")
        if task.status == Task.Status.SUBMITTED:
            raise WorkflowError("this task was already submitted")
        task.status, task.finished_at = Task.Status.SKIPPED, timezone.now()
        task.save(update_fields=["status", "finished_at"])
    return task


# ---------------------------------------------------------------- labels

@dataclass
class SubmitResult:
    label: Label
    created: bool
    item: Item


def submit_label(
    task: Task, user, *, value=None, note: str = "", unsuitable: bool = False, unsuitable_reason: str = "",
    seconds_spent: float | None = None, details: dict | None = None,
) -> SubmitResult:
    """Store an annotator's label for their task and move the item through the state machine.

    Idempotent: the same submission again returns the existing label (created=False). A different value for
    the same task before the item is resolved is recorded as a change. A submission after the lease expired
    is accepted if the item still has a free slot, refused otherwise.
    """
    project = task.item.project
    kind = project.judgement
    if unsuitable:
        if not unsuitable_reason.strip() and not note.strip():
            raise InvalidSubmission("say why the item is unsuitable")
        cleaned = None
    else:
        try:
            cleaned = kind.clean(value)
        except labels.InvalidValue as exc:
            raise InvalidSubmission(str(exc)) from exc
    now = timezone.now()
    with transaction.atomic():
        item = Item.objects.select_for_update().get(pk=task.item_id)
        task = Task.objects.select_for_update().get(pk=task.pk)
        if task.annotator_id != user.pk:
            raise NotAllowed("this task is not yours")
        existing = Label.objects.filter(task=task).first()
        if existing is not None:
            same = (existing.value == cleaned and existing.unsuitable == unsuitable and existing.note == note
                    and (details is None or existing.details == details))
            if same:
                return SubmitResult(existing, False, item)
            if item.state == workflow.RESOLVED:
                raise WorkflowError("this item is already resolved; your label can no longer change")
            if not item.is_gold and item.state not in workflow.OPEN_STATES:
                raise WorkflowError("this item is waiting for adjudication; your label can no longer change")
            return SubmitResult(_change_label(item, existing, user, cleaned, note, unsuitable, unsuitable_reason,
                                              details), False, item)
        if item.is_gold:
            label = _create_label(item, task, user, cleaned, note, unsuitable, unsuitable_reason, seconds_spent,
                                  details, now)
            return SubmitResult(label, True, item)
        if item.state not in workflow.OPEN_STATES:
            raise WorkflowError(f"this item no longer takes labels (it is {item.get_state_display().lower()})")
        lease_live = task.status == Task.Status.LEASED and task.expires_at > now
        if lease_live or _capacity_left(item, now, exclude_task=task) > 0:
            label = _create_label(item, task, user, cleaned, note, unsuitable, unsuitable_reason, seconds_spent,
                                  details, now)
            item.label_count += 1
            item.started = True
            _advance(item, project, actor=user)
            return SubmitResult(label, True, item)
        # recorded in a transaction of its own: the refusal below must not roll the record back
        ItemEvent.objects.create(item=item, actor=user, kind=ItemEvent.Kind.LATE_SUBMIT_REFUSED,
                                 from_state=item.state, to_state=item.state)
    raise WorkflowError(
        "your lease on this item expired and the item has since been given to someone else; "
        "your label was not stored — take the next task"
    )


def _create_label(item, task, user, cleaned, note, unsuitable, reason, seconds_spent, details, now) -> Label:
    # The caller holds the item's row lock and has checked that this task has no label, so the unique
    # (item, annotator) constraint is a last line of defence here: its error ends the whole transaction.
    try:
        label = Label.objects.create(
            item=item, task=task, annotator=user, value=cleaned, note=note, unsuitable=unsuitable,
            unsuitable_reason=reason, seconds_spent=seconds_spent,
            # a late first-round submission can land in the tie-break slot
            is_tiebreak=task.is_tiebreak or item.state == workflow.NEEDS_TIEBREAK,
            details=details or {},
        )
    except IntegrityError:
        raise WorkflowError("you have already labeled this item") from None
    task.status, task.finished_at = Task.Status.SUBMITTED, now
    task.save(update_fields=["status", "finished_at"])
    ItemEvent.objects.create(item=item, actor=user, kind=ItemEvent.Kind.LABELED, from_state=item.state,
                             to_state=item.state, value=_event_value(cleaned, unsuitable, reason, note))
    return label


def _change_label(item, label, user, cleaned, note, unsuitable, reason, details) -> Label:
    label.value, label.note, label.unsuitable, label.unsuitable_reason = cleaned, note, unsuitable, reason
    if details is not None:
        label.details = details
    label.save()
    ItemEvent.objects.create(item=item, actor=user, kind=ItemEvent.Kind.LABEL_CHANGED, from_state=item.state,
                             to_state=item.state, value=_event_value(cleaned, unsuitable, reason, note))
    if not item.is_gold:
        _advance(item, item.project, actor=user)
    return label


def _event_value(value, unsuitable, reason, note):
    return {"value": value, "unsuitable": unsuitable, "unsuitable_reason": reason, "note": note}


def votes_for(item: Item) -> list[labels.Vote]:
    return [
        labels.Vote(label.annotator_id, label.value, label.unsuitable)
        for label in Label.objects.filter(item=item).order_by("created_at", "id")
    ]


def _advance(item: Item, project: AnnotationProject, *, actor) -> None:
    before = item.state
    outcome = workflow.evaluate(project.judgement, project.policy(), votes_for(item))
    workflow.check_transition(before, outcome.state, "label")
    item.state, item.required_labels = outcome.state, outcome.required_labels
    if outcome.state == workflow.RESOLVED:
        item.resolution, item.final_value, item.excluded = outcome.resolution, outcome.final_value, outcome.excluded
        item.resolved_at = timezone.now()
    item.save()
    if before != item.state:
        event_kind = {
            workflow.NEEDS_TIEBREAK: ItemEvent.Kind.TIEBREAK_REQUESTED,
            workflow.NEEDS_ADJUDICATION: ItemEvent.Kind.ADJUDICATION_REQUESTED,
            workflow.RESOLVED: ItemEvent.Kind.RESOLVED,
        }.get(item.state)
        if event_kind:
            ItemEvent.objects.create(
                item=item, actor=actor, kind=event_kind, from_state=before, to_state=item.state,
                value={"final_value": item.final_value, "resolution": item.resolution, "excluded": item.excluded}
                if item.state == workflow.RESOLVED else None,
            )


# ---------------------------------------------------------------- decisions

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
        item.state, item.resolution = outcome.state, outcome.resolution
        item.final_value, item.excluded, item.resolved_at = outcome.final_value, outcome.excluded, timezone.now()
        item.save()
        ItemEvent.objects.create(
            item=item, actor=user,
            kind=ItemEvent.Kind.ADJUDICATED if event == "adjudicate" else ItemEvent.Kind.OVERRIDDEN,
            from_state=before, to_state=item.state, rationale=rationale.strip(),
            value={"final_value": item.final_value, "excluded": item.excluded},
        )
    return item


def adjudicate(item: Item, user, *, value=None, unsuitable: bool = False, rationale: str) -> Item:
    if not roles.is_adjudicator(user):
        raise NotAllowed("only adjudicators can adjudicate")
    return _decide(item, user, value=value, unsuitable=unsuitable, rationale=rationale, event="adjudicate")


def override(item: Item, user, *, value=None, unsuitable: bool = False, rationale: str) -> Item:
    if not roles.is_admin(user):
        raise NotAllowed("only admins can override a final label")
    return _decide(item, user, value=value, unsuitable=unsuitable, rationale=rationale, event="override")
