"""Projects and their items: creating a project, adding items, membership checks and gold items."""

from __future__ import annotations

import random
from collections.abc import Sequence

from django.db import connection, transaction
from django.utils import timezone

from core import subjects

from .. import aggregates, aggregation, completion, label_model, workflow
from ..models import (
    AnnotationProject,
    Item,
    ItemEvent,
    Label,
    ProjectChange,
    ProjectMember,
    Task,
)
from .errors import InvalidSubmission, WorkflowError
from .project_settings import check_aggregation_rule, check_setting_values, log_change


def check_project_request(kind: str, settings: dict) -> None:
    """Refuse a new project whose kind is not made from a dataset's rows or whose settings do not hold."""
    try:
        subject_kind = subjects.get(kind)
    except subjects.UnknownSubjectKind as exc:
        raise InvalidSubmission(exc.args[0]) from None
    if subject_kind.subject_ids is None:
        raise InvalidSubmission(
            subject_kind.extra.get("created_from", f"{subject_kind.title} projects are not made from a dataset's rows.")
        )
    check_setting_values(
        {
            key: value
            for key, value in settings.items()
            if key in ("aggregation", "confidence_target", "max_labels", "refit_every")
        }
    )
    check_aggregation_rule(
        subject_kind.rules,
        settings.get("aggregation", label_model.MAJORITY),
        settings.get("adaptive_redundancy", False),
    )


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
    """Create a project and its items at once: every subject the dataset offers for this kind (every completion for
    correctness, every question for answer types), or the chosen ones. For small projects (selections, the demo,
    tests); pages and the API create large ones in the background (annotation.setup.start_project)."""
    check_project_request(kind, settings)
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
    rng: random.Random | None = None,
) -> int:
    """Add items to a project, skipping any it already has. Returns how many were created. `rng` (else one seeded
    with `seed`) draws the items' random keys, so a caller adding in chunks keeps one random sequence."""
    rng = rng or random.Random(seed)
    subject_ids = list(subject_ids)
    answer_types = project.subject_kind.answer_types(subject_ids) if subject_ids else {}
    new_items = [
        Item(
            project=project,
            subject_id=subject_id,
            answer_type=answer_types.get(subject_id, ""),
            required_labels=aggregation.initial_required_labels(project),
            priority=priority,
            random_key=rng.random(),
            **(extra or {}),
        )
        for subject_id in subject_ids
    ]
    if not new_items:
        return 0
    with transaction.atomic():
        existing: set[int] = set()
        for start in range(0, len(subject_ids), 10000):
            existing.update(
                project.items.filter(subject_id__in=subject_ids[start : start + 10000]).values_list(
                    "subject_id", flat=True
                )
            )
        fresh = [item for item in new_items if item.subject_id not in existing]
        before = project.items.count()
        Item.objects.bulk_create(fresh, batch_size=2000, ignore_conflicts=True)
        created = project.items.count() - before
        if created == len(fresh):
            aggregates.items_added(project, fresh)
        else:  # a concurrent call added some of the same subjects: count the project again rather than guess
            aggregates.rebuild(project)
        if created and not (extra or {}).get("is_gold"):
            completion.items_opened(project.pk)
    return created


def copy_new_items(project: AnnotationProject, *, subject_ids: Sequence[int], rng: random.Random) -> int:
    """Add items for the subjects the project does not have yet, written with COPY (what a project's setup does,
    a chunk at a time). The caller holds the project's row lock, so nobody adds the same subjects meanwhile.
    Returns how many were created."""
    if connection.vendor != "postgresql":
        return add_items(project, subject_ids=subject_ids, rng=rng)
    subject_ids = list(subject_ids)
    have = set(project.items.filter(subject_id__in=subject_ids).values_list("subject_id", flat=True))
    new_ids = [subject_id for subject_id in dict.fromkeys(subject_ids) if subject_id not in have]
    if not new_ids:
        return 0
    answer_types = project.subject_kind.answer_types(new_ids)
    required, now = aggregation.initial_required_labels(project), timezone.now()
    columns = [
        "project_id",
        "subject_id",
        "answer_type",
        "state",
        "resolution",
        "required_labels",
        "label_count",
        "started",
        "excluded",
        "priority",
        "random_key",
        "is_gold",
        "created_at",
    ]
    quote = connection.ops.quote_name
    names = ", ".join(quote(column) for column in columns)
    # the items as written, for what they add to the tallies (their verdicts included)
    fresh = [
        Item(
            project=project,
            subject_id=subject_id,
            answer_type=answer_types.get(subject_id, ""),
            required_labels=required,
            random_key=rng.random(),
            created_at=now,
        )
        for subject_id in new_ids
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {quote(Item._meta.db_table)} ({names}) FROM STDIN") as copy:
            for item in fresh:
                copy.write_row(
                    (
                        project.pk,
                        item.subject_id,
                        item.answer_type,
                        Item.State.PENDING,
                        "",
                        required,
                        0,
                        False,
                        False,
                        0,
                        item.random_key,
                        False,
                        now,
                    )
                )
        aggregates.items_added(project, fresh)
        completion.items_opened(project.pk)
    return len(fresh)


class RoleConflict(WorkflowError):
    """Someone who labels a project's items cannot also see everyone's labels as its adjudicator, nor the other way
    round: blindness and independent decisions depend on it."""

    status_code = 409


def role_conflict(project: AnnotationProject, user, role: str) -> str | None:
    """Why `user` cannot take `role` on the project (they hold the other side of its decisions), or None."""
    name = user.get_username()
    if role == ProjectMember.Role.ADJUDICATOR:
        if ProjectMember.objects.filter(
            project=project, user=user, role=ProjectMember.Role.ANNOTATOR, is_active=True
        ).exists():
            return (
                f"{name} is an annotator on {project.name}; an annotator cannot adjudicate the items they label. "
                "Choose another adjudicator."
            )
        if Label.objects.filter(item__project=project, annotator=user).exists():
            return (
                f"{name} has labeled items of {project.name}; someone who labeled cannot adjudicate (and see the "
                "other labels of) the same project. Choose another adjudicator."
            )
        if Task.objects.filter(item__project=project, annotator=user).live().exists():
            return f"{name} holds a task of {project.name} right now; choose another adjudicator."
    elif role == ProjectMember.Role.ANNOTATOR:
        if ProjectMember.objects.filter(
            project=project, user=user, role=ProjectMember.Role.ADJUDICATOR, is_active=True
        ).exists():
            return (
                f"{name} is an adjudicator on {project.name} and sees every label of it; they cannot label its "
                "items blind. Choose another annotator."
            )
        if ItemEvent.objects.filter(item__project=project, actor=user, kind=ItemEvent.Kind.ADJUDICATED).exists():
            return (
                f"{name} has adjudicated items of {project.name}; they cannot label its items blind. Choose another "
                "annotator."
            )
    return None


def add_member(
    project: AnnotationProject, user, role: str = ProjectMember.Role.ANNOTATOR, *, actor=None
) -> ProjectMember:
    """Make a user a member with a role; a removed member becomes active again. Recorded in the project's change
    log when something changed. Refused (RoleConflict) when the user holds the other side of the project's
    decisions: an annotator, or anyone who labeled or holds a task, cannot become its adjudicator, and the other way
    round."""
    conflict = role_conflict(project, user, role)
    if conflict:
        raise RoleConflict(conflict)
    with transaction.atomic():
        member, created = ProjectMember.objects.select_for_update().get_or_create(project=project, user=user, role=role)
        if not created and member.is_active:
            return member
        if not created:
            member.is_active, member.removed_at = True, None
            member.save(update_fields=["is_active", "removed_at"])
        log_change(
            project,
            actor,
            ProjectChange.Kind.MEMBER_ADDED,
            f"{user.get_username()} {'added' if created else 'added again'} as {member.get_role_display().lower()}",
            {"username": user.get_username(), "role": role},
        )
    return member


def is_member(project: AnnotationProject, user, role: str | None = None) -> bool:
    """Whether the user is an active (not removed) member, with the given role if one is named."""
    memberships = ProjectMember.objects.filter(project=project, user=user, is_active=True)
    if role:
        memberships = memberships.filter(role=role)
    return memberships.exists()


def gold_refusal(item: Item) -> str | None:
    """Why an item cannot be made gold, or None when it can."""
    if item.label_count and not item.is_gold:
        return "this item already has workflow labels; choose an unlabeled item as gold"
    if item.state == workflow.EXCLUDED:
        return "this item is excluded from the workflow"
    return None


def mark_gold(project: AnnotationProject, item: Item, value, *, actor) -> Item:
    """Make an item a gold item with a known answer. Gold items are mixed into queues, never exported."""
    cleaned = project.judgement.clean(value)
    with transaction.atomic():
        item = Item.objects.select_for_update().get(pk=item.pk, project=project)
        refusal = gold_refusal(item)
        if refusal:
            raise WorkflowError(refusal)
        tracker = aggregates.track(project, [item], actor_id=actor.pk)
        item.is_gold, item.gold_value = True, cleaned
        item.save(update_fields=["is_gold", "gold_value"])
        tracker.done()
        ItemEvent.objects.create(
            item=item,
            actor=actor,
            kind=ItemEvent.Kind.GOLD_SET,
            value=cleaned,
            from_state=item.state,
            to_state=item.state,
        )
    return item
