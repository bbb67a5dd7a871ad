"""Assignment: leasing items to annotators (claims, the page's queue ahead), releasing and skipping them."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from .. import aggregates, claim_queries, workflow
from ..models import (
    AnnotationProject,
    Item,
    ProjectMember,
    Task,
)
from .errors import NotAllowed, WorkflowError
from .project_settings import policy_lock


@dataclass
class Claim:
    task: Task
    created: bool


def capacity_left(item: Item, now, exclude_task: Task | None = None) -> int:
    leases = claim_queries.live_leases(item.pk, now, other_than=exclude_task.pk if exclude_task else None)
    return item.required_labels - item.label_count - leases


# what task_payload reads of the item, fetched with the claim instead of one query each
_PAYLOAD_RELATIONS = ("item__project",)


def _lease_with_payload_relations(task_id: int) -> Task | None:
    return Task.objects.select_related(*_PAYLOAD_RELATIONS).filter(pk=task_id).first()


def _check_project_open(project: AnnotationProject) -> None:
    if project.preparing:
        raise WorkflowError("this project is still being prepared; its items are not all created yet")
    if not project.is_active:
        raise WorkflowError("this project is closed")


def _not_a_member() -> NotAllowed:
    return NotAllowed("you are not an annotator on this project")


def _check_may_claim(project: AnnotationProject, user) -> None:
    _check_project_open(project)
    if not claim_queries.is_active_member(project.pk, user.pk, ProjectMember.Role.ANNOTATOR):
        raise _not_a_member()


def next_task(project: AnnotationProject, user) -> Task | None:
    """Give an annotator the next item to label, or None when nothing is left for them.

    Items that already have a label come first (finish what is started), then by priority, then at random.
    The item row is locked (SKIP LOCKED on PostgreSQL) and its capacity re-checked under the lock, so
    concurrent claims never lease more slots than an item needs.
    """
    _check_project_open(project)
    now = timezone.now()
    # a lease on an item that stopped taking labels (e.g. resolved by a label change) is not work to hand out
    member, lease_id = claim_queries.membership_and_current_lease(
        project.pk, user.pk, ProjectMember.Role.ANNOTATOR, now
    )
    if not member:
        raise _not_a_member()
    if lease_id is not None:
        existing = _lease_with_payload_relations(lease_id)
        if existing is not None:
            return existing
    return _claim_new(project, user, now)


def _claim_new(project: AnnotationProject, user, now) -> Task | None:
    """Lease one more item to the user (gold at the project's rate), never one they hold a live lease on."""
    if project.gold_rate > 0 and random.random() < project.gold_rate:
        gold = _claim_gold(project, user, now)
        if gold is not None:
            return gold

    for _attempt in range(20):
        with transaction.atomic():
            policy_lock(project.pk)
            item = None
            for phase in claim_queries.PHASES:
                item = claim_queries.next_candidate(project.pk, user.pk, now, phase=phase)
                if item is not None:
                    break
            if item is None:
                if not claim_queries.has_candidate(project.pk, user.pk, now):
                    return None
                # Every item left is locked by a concurrent claim or submit: wait for one instead of
                # telling the annotator that nothing is left.
                item = claim_queries.next_candidate(project.pk, user.pk, now, phase="any", skip_locked=False)
                if item is None:
                    continue
            item.project = project
            task = _lease(project, item, user, now, free_slots=item.required_labels - item.label_count)
            if task is None:
                continue  # a claim committed between our snapshot and the lock took the last slot; look again
            return task
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
        return _lease(project, item, user, now, free_slots=None)


def _lease(project: AnnotationProject, item: Item, user, now, *, free_slots: int | None) -> Task | None:
    """Lease the row-locked item to the user, or None when its live leases fill `free_slots` (None for gold)."""
    expires = now + timedelta(minutes=project.lease_minutes)
    is_tiebreak = item.state == workflow.NEEDS_TIEBREAK
    start_item = item.state == workflow.PENDING and not item.is_gold
    if start_item:
        workflow.check_transition(item.state, workflow.IN_PROGRESS, "claim")
    task_id = claim_queries.lease(
        item.pk,
        user.pk,
        now=now,
        expires=expires,
        is_tiebreak=is_tiebreak,
        free_slots=free_slots,
        start_item=start_item,
    )
    if task_id is None:
        return None
    if start_item:
        item.state = workflow.IN_PROGRESS
        aggregates.state_moved(item, workflow.PENDING, actor_id=user.pk)
    return Task(
        pk=task_id,
        item=item,
        annotator=user,
        status=Task.Status.LEASED,
        leased_at=now,
        expires_at=expires,
        is_tiebreak=is_tiebreak,
    )


# How many items the labeling page may hold beyond the one shown: leased ahead so the next one shows at once.
QUEUE_AHEAD = 2


def _live_leases(project: AnnotationProject, user, now):
    return (
        Task.objects.select_related(*_PAYLOAD_RELATIONS)
        .filter(item__project=project, annotator=user, status=Task.Status.LEASED, expires_at__gt=now)
        .filter(Q(item__state__in=workflow.OPEN_STATES) | Q(item__is_gold=True))
        .order_by("leased_at", "pk")
    )


def claim_queue(project: AnnotationProject, user, *, ahead: int = QUEUE_AHEAD) -> list[Task]:
    """The user's live leases in the project, oldest first, topped up to one item plus `ahead` more.

    Each extra item is claimed exactly as `next_task` claims one (same order, row locks and capacity check), so
    leasing ahead never takes a slot an item does not have; the leases expire like any other or are released
    with `release_tasks` when the page is left.
    """
    _check_may_claim(project, user)
    size = 1 + max(0, min(ahead, QUEUE_AHEAD))
    now = timezone.now()
    tasks = list(_live_leases(project, user, now)[:size])
    while len(tasks) < size:
        task = _claim_new(project, user, now)
        if task is None or any(held.pk == task.pk for held in tasks):
            break
        tasks.append(task)
    return tasks


def release_tasks(user, task_ids) -> int:
    """End the user's live leases on these tasks now (the page that held them ahead was left); returns how many.

    A released lease is not a skip: the item may come back to the same person later."""
    now = timezone.now()
    return Task.objects.filter(
        pk__in=list(task_ids),
        annotator=user,
        status=Task.Status.LEASED,
        expires_at__gt=now,
    ).update(expires_at=now)


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
