"""Writes and business rules of the annotation workflow: projects, assignment, labels, decisions."""

from __future__ import annotations

import hashlib
import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from core import labels, roles, subjects

from . import aggregates, aggregation, claim_queries, label_model, workflow
from .models import (
    AnnotationProject,
    GuidelinesVersion,
    Invitation,
    Item,
    ItemEvent,
    Label,
    ProjectChange,
    ProjectMember,
    Task,
)


class WorkflowError(Exception):
    """A request the workflow refuses; the message is meant for the person who made it."""

    status_code = 409


class NotAllowed(WorkflowError):
    status_code = 403


class InvalidSubmission(WorkflowError):
    status_code = 400


# ---------------------------------------------------------------- projects


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
    _check_setting_values(
        {
            key: value
            for key, value in settings.items()
            if key in ("aggregation", "confidence_target", "max_labels", "refit_every")
        }
    )
    _check_aggregation_rule(
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
    return len(fresh)


def add_member(
    project: AnnotationProject, user, role: str = ProjectMember.Role.ANNOTATOR, *, actor=None
) -> ProjectMember:
    """Make a user a member with a role; a removed member becomes active again. Recorded in the project's change
    log when something changed."""
    with transaction.atomic():
        member, created = ProjectMember.objects.select_for_update().get_or_create(project=project, user=user, role=role)
        if not created and member.is_active:
            return member
        if not created:
            member.is_active, member.removed_at = True, None
            member.save(update_fields=["is_active", "removed_at"])
        _log(
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


def _gold_refusal(item: Item) -> str | None:
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
        refusal = _gold_refusal(item)
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


# ---------------------------------------------------------------- project settings and guidelines

# every setting update_project changes, with the words its change log uses
SETTING_FIELDS = {
    "name": "name",
    "description": "description",
    "labels_per_item": "labels per item",
    "tiebreak_annotators": "tie-break annotators",
    "agreement_threshold": "agreement threshold",
    "lease_minutes": "lease minutes",
    "verdict_visibility": "verdict visibility",
    "show_model_names": "show model names",
    "gold_rate": "gold rate",
    "is_active": "active",
    "aggregation": "aggregation",
    "adaptive_redundancy": "adaptive redundancy",
    "confidence_target": "confidence target",
    "max_labels": "label cap",
    "refit_every": "refit every",
}


class SettingRefused(WorkflowError):
    """A setting that cannot change safely now, given where the project's items stand."""


def _log(project: AnnotationProject, actor, kind: str, summary: str, details: dict | None = None) -> ProjectChange:
    return ProjectChange.objects.create(
        project=project, actor=actor, kind=kind, summary=summary[:500], details=details or {}
    )


def _check_setting_values(values: dict) -> None:
    problems = []
    if "name" in values and not str(values["name"]).strip():
        problems.append("a project needs a name")
    if "labels_per_item" in values and not 1 <= values["labels_per_item"] <= 10:
        problems.append("labels per item must be between 1 and 10")
    if "tiebreak_annotators" in values and not 0 <= values["tiebreak_annotators"] <= 5:
        problems.append("tie-break annotators must be between 0 and 5")
    if "agreement_threshold" in values and values["agreement_threshold"] < 0:
        problems.append("the agreement threshold cannot be negative")
    if "lease_minutes" in values and not 1 <= values["lease_minutes"] <= 1440:
        problems.append("a lease lasts between 1 and 1440 minutes")
    if "gold_rate" in values and not 0 <= values["gold_rate"] <= 1:
        problems.append("the gold rate is a share between 0 and 1")
    if (
        "verdict_visibility" in values
        and values["verdict_visibility"] not in AnnotationProject.VerdictVisibility.values
    ):
        problems.append("unknown verdict visibility")
    if "aggregation" in values and values["aggregation"] not in label_model.AGGREGATIONS:
        problems.append(f"aggregation is one of {', '.join(label_model.AGGREGATIONS)}")
    if "confidence_target" in values and not 0.5 < values["confidence_target"] < 1:
        problems.append("the confidence target is a probability above 0.5 and below 1")
    if "max_labels" in values and not 1 <= values["max_labels"] <= 10:
        problems.append("the label cap must be between 1 and 10")
    if "refit_every" in values and not 0 <= values["refit_every"] <= 100000:
        problems.append("refit every is a number of labels between 0 (only on demand) and 100000")
    if problems:
        raise InvalidSubmission("; ".join(problems))


def update_project(project: AnnotationProject, *, actor, guidelines: str | None = None, **values) -> AnnotationProject:
    """Change a project's settings and guidelines, recording what changed in its change log.

    Labels per item and tie-break annotators apply to the items that have not passed the stage they govern, as
    far as the state machine allows (see `_apply_policy_change`); anything else refuses with SettingRefused and
    changes nothing. A guidelines text that differs from the current one becomes a new version.
    Returns the project as saved.
    """
    unknown = set(values) - SETTING_FIELDS.keys()
    if unknown:
        raise InvalidSubmission(f"not a project setting: {', '.join(sorted(unknown))}")
    _check_setting_values(values)
    with transaction.atomic():
        # FOR NO KEY UPDATE: a submit under way inserts rows that reference the project (its tallies), and their
        # foreign-key check must not wait on this lock while this change waits on the submit's policy lock.
        project = AnnotationProject.objects.select_for_update(no_key=True).get(pk=project.pk)
        changed = {
            field: (getattr(project, field), value)
            for field, value in values.items()
            if getattr(project, field) != value
        }
        _check_aggregation(project, {field: value for field, value in values.items()})
        adaptive = values.get("adaptive_redundancy", project.adaptive_redundancy)
        if "labels_per_item" in changed or "tiebreak_annotators" in changed:
            _apply_policy_change(
                project,
                labels_per_item=values.get("labels_per_item", project.labels_per_item),
                tiebreak_annotators=values.get("tiebreak_annotators", project.tiebreak_annotators),
                adaptive=adaptive,
            )
        if "adaptive_redundancy" in changed or "max_labels" in changed:
            project.labels_per_item = values.get("labels_per_item", project.labels_per_item)
            _apply_adaptive_change(project, adaptive=adaptive, max_labels=values.get("max_labels", project.max_labels))
        if changed:
            for field, (_old, value) in changed.items():
                setattr(project, field, value)
            project.save(update_fields=list(changed))
            _log(
                project,
                actor,
                ProjectChange.Kind.SETTINGS,
                "; ".join(
                    f"{SETTING_FIELDS[field]}: {_shown(old)} → {_shown(new)}" for field, (old, new) in changed.items()
                ),
                {"changes": {field: [old, new] for field, (old, new) in changed.items()}},
            )
        if guidelines is not None:
            _new_guidelines_version(project, guidelines, actor)
    return project


def _shown(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:57] + "...")
    return str(value)


def _normalised_guidelines(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")).strip()


def _new_guidelines_version(project: AnnotationProject, text: str, actor) -> GuidelinesVersion | None:
    """Keep a new version of the guidelines if the text changed (the caller holds the project's row lock)."""
    text = _normalised_guidelines(text)
    if text == project.guidelines:
        return None
    version = GuidelinesVersion.objects.create(
        project=project, version=project.guidelines_version + 1, text=text, created_by=actor
    )
    project.guidelines, project.guidelines_version = text, version.version
    project.save(update_fields=["guidelines", "guidelines_version"])
    _log(
        project,
        actor,
        ProjectChange.Kind.GUIDELINES,
        f"guidelines version {version.version}" + ("" if text else " (emptied)"),
        {"version": version.version, "characters": len(text)},
    )
    return version


_POLICY_LOCK_SPACE = 0x6D6C  # first key of the advisory locks that guard a project's labeling policy


def _policy_lock(project_id: int, *, exclusive: bool = False) -> None:
    """Claims and submits take this transaction-level lock shared, before their item's row lock; a change of labels
    per item or tie-break annotators takes it exclusive. So a change never meets a half-done claim or submit, and
    waits for none while holding item locks (no deadlock). PostgreSQL only: SQLite runs one writer at a time."""
    if connection.vendor != "postgresql":
        return
    function = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {function}(%s, %s)", [_POLICY_LOCK_SPACE, project_id % 2**31])


def _apply_policy_change(
    project: AnnotationProject, *, labels_per_item: int, tiebreak_annotators: int, adaptive: bool = False
) -> None:
    """Carry a change of labels per item (n) and tie-break annotators (t) over to the open items, or refuse.

    The project's policy lock is taken exclusive first, so no claim or submit is under way meanwhile; one that
    comes after reads the new policy and the new requirements.

    - n applies to items still in their first round (pending, in progress). It cannot change while items wait for
      a tie-break: their first round was judged with the old n. Lowering n is refused when an item's labels would
      already fill the new first round, or its labels and live leases would overfill it.
    - t applies to items waiting for a tie-break. Lowering t is refused when an item's labels would already fill
      the new total, or its labels and live leases would overfill it (t = 0 while items wait for a tie-break).
    - Items waiting for adjudication and resolved items keep what they have.
    """
    old_n, old_t = project.labels_per_item, project.tiebreak_annotators
    _policy_lock(project.pk, exclusive=True)
    now = timezone.now()  # after the wait: a lease that ran out meanwhile no longer counts
    open_items = Item.objects.filter(project=project, is_gold=False, state__in=workflow.OPEN_STATES)
    with_leases = open_items.annotate(
        leases=Coalesce(Subquery(_active_leases(now), output_field=IntegerField()), Value(0)),
    ).annotate(filled=F("label_count") + F("leases"))
    waiting_tiebreak = open_items.filter(state=workflow.NEEDS_TIEBREAK)
    if labels_per_item != old_n:
        waiting = waiting_tiebreak.count()
        if waiting:
            raise SettingRefused(
                f"labels per item cannot change while {waiting} item{'s' if waiting != 1 else ''} wait"
                f"{'s' if waiting == 1 else ''} for a tie-break label: their first round was judged with "
                f"{old_n} labels. Change it once no item waits for a tie-break."
            )
        first_round = open_items.filter(state__in=[workflow.PENDING, workflow.IN_PROGRESS])
        if labels_per_item < old_n:
            over = (
                with_leases.filter(state__in=[workflow.PENDING, workflow.IN_PROGRESS])
                .filter(Q(label_count__gte=labels_per_item) | Q(filled__gt=labels_per_item))
                .count()
            )
            if over:
                raise SettingRefused(
                    f"labels per item cannot go down to {labels_per_item}: {over} item{'s' if over != 1 else ''} "
                    f"already {'have' if over != 1 else 'has'} that many labels, or more labels and live leases "
                    f"than that, in {'their' if over != 1 else 'its'} first round"
                )
        if not adaptive:  # adaptive items ask for one label at a time, whatever the first round is
            first_round.update(required_labels=labels_per_item)
    if tiebreak_annotators != old_t:
        target = labels_per_item + tiebreak_annotators
        if tiebreak_annotators < old_t:
            over = (
                with_leases.filter(state=workflow.NEEDS_TIEBREAK)
                .filter(Q(label_count__gte=target) | Q(filled__gt=target))
                .count()
            )
            if over:
                raise SettingRefused(
                    f"tie-break annotators cannot go down to {tiebreak_annotators}: {over} item"
                    f"{'s' if over != 1 else ''} waiting for a tie-break already "
                    f"{'have' if over != 1 else 'has'} {target} labels or more, counting live leases"
                )
        waiting_tiebreak.update(required_labels=target)


def _check_aggregation(project: AnnotationProject, values: dict) -> None:
    _check_aggregation_rule(
        project.judgement,
        values.get("aggregation", project.aggregation),
        values.get("adaptive_redundancy", project.adaptive_redundancy),
    )


def _check_aggregation_rule(rules: labels.LabelRules, aggregation_rule: str, adaptive: bool) -> None:
    if aggregation_rule == label_model.MODEL and rules.numeric:
        raise InvalidSubmission(
            "scores are aggregated by the fixed protocol (mean, median of three); the annotator "
            "model is for categorical labels"
        )
    if adaptive and aggregation_rule != label_model.MODEL:
        raise InvalidSubmission("adaptive redundancy needs model aggregation: it stops when the model is confident")


def _apply_adaptive_change(project: AnnotationProject, *, adaptive: bool, max_labels: int) -> None:
    """Switch adaptive redundancy, or change its label cap, under the exclusive policy lock (no claim or submit is
    under way meanwhile).

    Switching is refused while any item is in the middle of labeling (labels or live leases, not yet resolved): its
    labels were asked for under the other rule. A project switches before labeling starts, or once everything open
    is settled. Untouched items then ask for one label at a time (adaptive) or the first round (fixed). The cap
    cannot go below what an open item already needs.
    """
    _policy_lock(project.pk, exclusive=True)
    now = timezone.now()
    open_items = Item.objects.filter(project=project, is_gold=False, state__in=workflow.OPEN_STATES)
    if adaptive != project.adaptive_redundancy:
        busy = open_items.filter(Q(label_count__gt=0) | Q(Exists(_active_leases(now)))).count()
        if busy:
            raise SettingRefused(
                f"adaptive redundancy cannot be switched while {busy} item{'s are' if busy != 1 else ' is'} being "
                "labeled under the current rule; switch it before labeling starts or once those items are settled"
            )
        open_items.update(required_labels=1 if adaptive else project.labels_per_item)
    elif adaptive:
        over = open_items.filter(required_labels__gt=max_labels).count()
        if over:
            raise SettingRefused(
                f"the label cap cannot go down to {max_labels}: {over} open item"
                f"{'s' if over != 1 else ''} already ask{'s' if over == 1 else ''} for more labels"
            )


def guidelines_seen(project: AnnotationProject, user, version: int) -> int:
    """Record that a member read the guidelines up to `version` (never beyond the current one, never backwards).
    Returns the version now recorded as seen."""
    version = max(0, min(version, project.guidelines_version))
    ProjectMember.objects.filter(
        project=project, user=user, is_active=True, guidelines_seen_version__lt=version
    ).update(guidelines_seen_version=version)
    return version


# ---------------------------------------------------------------- members and invitations

INVITATION_DAYS = 7


class InvitationUnusable(WorkflowError):
    """The link is unknown, expired, used or revoked; the message says which, and nothing about the project."""

    status_code = 410


class UnknownInvitation(InvitationUnusable):
    status_code = 404


class AlreadyMember(WorkflowError):
    """Accepting would change nothing: the link stays usable for the person it was meant for."""


def remove_member(member: ProjectMember, *, actor) -> ProjectMember:
    """End a membership without deleting anything: the member's labels stay and count, their live leases end at
    once (so they get no new task and the items go back to the pool), and the row is kept for the history."""
    with transaction.atomic():
        member = ProjectMember.objects.select_for_update().select_related("project", "user").get(pk=member.pk)
        if not member.is_active:
            raise WorkflowError(f"{member.user.get_username()} was already removed from this project")
        now = timezone.now()
        member.is_active, member.removed_at = False, now
        member.save(update_fields=["is_active", "removed_at"])
        ended = 0
        if member.role == ProjectMember.Role.ANNOTATOR:
            ended = Task.objects.filter(
                item__project=member.project, annotator=member.user, status=Task.Status.LEASED, expires_at__gt=now
            ).update(expires_at=now)
        _log(
            member.project,
            actor,
            ProjectChange.Kind.MEMBER_REMOVED,
            f"{member.user.get_username()} removed as {member.get_role_display().lower()}"
            + (f"; {ended} live lease{'s' if ended != 1 else ''} ended" if ended else ""),
            {"username": member.user.get_username(), "role": member.role, "leases_ended": ended},
        )
    return member


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _grant_role(user, role: str) -> None:
    if not roles.has_role(user, role):
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        user.__dict__.pop("_role_names", None)


def create_invitation(
    project: AnnotationProject,
    *,
    role: str = ProjectMember.Role.ANNOTATOR,
    actor,
    days: int = INVITATION_DAYS,
    account=None,
) -> tuple[Invitation, str]:
    """A one-time link to join the project with a role, valid for `days`. Returns the invitation and its token,
    which is not stored (only its hash is) and cannot be shown again."""
    if role not in ProjectMember.Role.values:
        raise InvalidSubmission(f"an invitation is for an annotator or an adjudicator, not {role!r}")
    if not 1 <= days <= 90:
        raise InvalidSubmission("an invitation is valid for 1 to 90 days")
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        invitation = Invitation.objects.create(
            project=project,
            role=role,
            token_hash=_token_hash(token),
            account=account,
            created_by=actor,
            expires_at=timezone.now() + timedelta(days=days),
        )
        for_whom = f" for {account.get_username()}" if account is not None else ""
        _log(
            project,
            actor,
            ProjectChange.Kind.INVITATION_CREATED,
            f"{invitation.get_role_display().lower()} invitation{for_whom} created, valid {days} "
            f"day{'s' if days != 1 else ''}",
            {"invitation": invitation.pk, "role": role, "days": days},
        )
    return invitation, token


def revoke_invitation(invitation: Invitation, *, actor) -> Invitation:
    with transaction.atomic():
        invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
        status = invitation.status()
        if status != Invitation.Status.OPEN:
            raise WorkflowError(
                f"this invitation is {invitation.Status(status).label.lower()}; only an open one can be revoked"
            )
        invitation.revoked_at, invitation.revoked_by = timezone.now(), actor
        invitation.save(update_fields=["revoked_at", "revoked_by"])
        _log(
            invitation.project,
            actor,
            ProjectChange.Kind.INVITATION_REVOKED,
            f"{invitation.get_role_display().lower()} invitation revoked",
            {"invitation": invitation.pk},
        )
    return invitation


_UNUSABLE = {
    Invitation.Status.USED: "This invitation link has already been used. Each link works once: ask the person who "
    "invited you for a new one.",
    Invitation.Status.EXPIRED: "This invitation link has expired. Ask the person who invited you for a new one.",
    Invitation.Status.REVOKED: "This invitation link was withdrawn. Ask the person who invited you for a new one.",
}
UNKNOWN_INVITATION = "This invitation link is not valid. Check that you copied all of it, or ask for a new one."


def _usable_invitation(token: str, *, lock: bool) -> Invitation:
    invitations = Invitation.objects.select_related("project", "account")
    if lock:
        invitations = invitations.select_for_update(of=("self",))
    invitation = invitations.filter(token_hash=_token_hash(token)).first() if token else None
    if invitation is None:
        raise UnknownInvitation(UNKNOWN_INVITATION)
    status = invitation.status()
    if status != Invitation.Status.OPEN:
        raise InvitationUnusable(_UNUSABLE[Invitation.Status(status)])
    return invitation


def open_invitation(token: str) -> Invitation:
    """The invitation behind a link if it can still be used; InvitationUnusable says why not otherwise."""
    return _usable_invitation(token, lock=False)


def _redeem(invitation: Invitation, user) -> ProjectMember:
    """The caller holds the invitation's row lock and has checked it is open."""
    _grant_role(user, invitation.role)
    member = add_member(invitation.project, user, invitation.role, actor=user)
    invitation.used_at, invitation.used_by = timezone.now(), user
    invitation.save(update_fields=["used_at", "used_by"])
    _log(
        invitation.project,
        user,
        ProjectChange.Kind.INVITATION_ACCEPTED,
        f"{user.get_username()} accepted an invitation as {invitation.get_role_display().lower()}",
        {"invitation": invitation.pk, "username": user.get_username(), "role": invitation.role},
    )
    return member


def accept_invitation(token: str, user) -> ProjectMember:
    """A signed-in user takes the invitation with their own account: they get the role (its group too) and the
    membership, and the link is spent. An active member with that role already is refused (AlreadyMember) and
    the link stays usable."""
    with transaction.atomic():
        invitation = _usable_invitation(token, lock=True)
        account = invitation.account
        if account is not None and account.pk != user.pk:
            raise NotAllowed(f"this link is for the account {account.get_username()}; log out to use it")
        if account is None and is_member(invitation.project, user, invitation.role):
            raise AlreadyMember(
                f"you are already an {invitation.get_role_display().lower()} on {invitation.project.name}"
            )
        return _redeem(invitation, user)


def _check_password(password: str, user) -> None:
    try:
        password_validation.validate_password(password, user)
    except DjangoValidationError as exc:
        raise InvalidSubmission(" ".join(exc.messages)) from None


def sign_up_with_invitation(token: str, *, username: str, password: str, email: str = ""):
    """Create an account from an invitation (the password must pass the configured validators), give it the role
    and the membership, and spend the link. Returns the new user."""
    User = get_user_model()
    with transaction.atomic():
        invitation = _usable_invitation(token, lock=True)
        if invitation.account_id is not None:
            raise NotAllowed("this link sets the password of an existing account; it cannot create another one")
        username = username.strip()
        if not username:
            raise InvalidSubmission("choose a username")
        if User.objects.filter(username__iexact=username).exists():
            raise InvalidSubmission("that username is taken; choose another one")
        user = User(username=username, email=email.strip())
        _check_password(password, user)
        user.set_password(password)
        try:
            with transaction.atomic():
                user.save()
        except IntegrityError:
            raise InvalidSubmission("that username is taken; choose another one") from None
        _redeem(invitation, user)
    return user


def set_password_with_invitation(token: str, *, password: str):
    """The account an invitation was made for chooses its password; the link is spent. Returns the user."""
    with transaction.atomic():
        invitation = _usable_invitation(token, lock=True)
        user = invitation.account
        if user is None:
            raise NotAllowed("this link invites a new member; it does not belong to an account")
        _check_password(password, user)
        user.set_password(password)
        user.save(update_fields=["password"])
        _redeem(invitation, user)
    return user


def create_account(
    project: AnnotationProject,
    *,
    username: str,
    email: str = "",
    actor,
    role: str = ProjectMember.Role.ANNOTATOR,
    days: int = INVITATION_DAYS,
) -> tuple[Any, Invitation, str]:
    """Create an account (without a usable password) with the role, make it a member, and return it with a
    one-time link through which its owner chooses a password."""
    User = get_user_model()
    username = username.strip()
    if not username:
        raise InvalidSubmission("choose a username")
    with transaction.atomic():
        if User.objects.filter(username__iexact=username).exists():
            raise InvalidSubmission(
                f"the username {username} is taken; choose another one, or add the existing account as a member"
            )
        user = User(username=username, email=email.strip())
        user.set_unusable_password()
        try:
            with transaction.atomic():
                user.save()
        except IntegrityError:
            raise InvalidSubmission(f"the username {username} is taken; choose another one") from None
        _grant_role(user, role)
        _log(
            project,
            actor,
            ProjectChange.Kind.ACCOUNT_CREATED,
            f"account {username} created for this project",
            {"username": username, "role": role},
        )
        add_member(project, user, role, actor=actor)
        invitation, token = create_invitation(project, role=role, actor=actor, days=days, account=user)
    return user, invitation, token


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
    leases = claim_queries.live_leases(item.pk, now, other_than=exclude_task.pk if exclude_task else None)
    return item.required_labels - item.label_count - leases


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
    if project.preparing:
        raise WorkflowError("this project is still being prepared; its items are not all created yet")
    if not project.is_active:
        raise WorkflowError("this project is closed")
    if not is_member(project, user, ProjectMember.Role.ANNOTATOR):
        raise NotAllowed("you are not an annotator on this project")
    now = timezone.now()
    existing = _current_lease(project, user, now)
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
            _policy_lock(project.pk)
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
    # The caller holds the item's row lock and every lease on an item is taken under that lock; the candidate
    # query left out items on which this annotator has a task other than a lease that ran out, so the insert
    # either creates the task or renews that lease.
    task = Task(
        item=item, annotator=user, status=Task.Status.LEASED, leased_at=now, expires_at=expires, is_tiebreak=is_tiebreak
    )
    Task.objects.bulk_create(
        [task],
        update_conflicts=True,
        unique_fields=["item", "annotator"],
        update_fields=["status", "leased_at", "expires_at", "is_tiebreak"],
    )
    if item.state == workflow.PENDING and not item.is_gold:
        workflow.check_transition(item.state, workflow.IN_PROGRESS, "claim")
        item.state = workflow.IN_PROGRESS
        item.save(update_fields=["state"])
        aggregates.state_moved(item, workflow.PENDING, actor_id=user.pk)
    return task


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
    if project.preparing:
        raise WorkflowError("this project is still being prepared; its items are not all created yet")
    if not project.is_active:
        raise WorkflowError("this project is closed")
    if not is_member(project, user, ProjectMember.Role.ANNOTATOR):
        raise NotAllowed("you are not an annotator on this project")
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


# ---------------------------------------------------------------- labels


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
        _policy_lock(project.pk)
        # the policy cannot change while this transaction holds the policy lock: the project read with the
        # item is the one in force
        item = Item.objects.select_for_update(of=("self",)).select_related("project").get(pk=task.item_id)
        project = item.project
        task = Task.objects.select_for_update().get(pk=task.pk)
        if task.annotator_id != user.pk:
            raise NotAllowed("this task is not yours")
        lease_live = task.status == Task.Status.LEASED and task.expires_at > now
        # every label of the item, read once: the existing one, the votes and the tallies all come from it
        stored = list(Label.objects.filter(item=item).order_by("created_at", "id"))
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
            if item.state == workflow.RESOLVED:
                raise WorkflowError("this item is already resolved; your label can no longer change")
            if not item.is_gold and item.state not in workflow.OPEN_STATES:
                raise WorkflowError("this item is waiting for adjudication; your label can no longer change")
            tracker = aggregates.track(project, [item], actor_id=user.pk, labels=stored)
            changed = _change_label(item, existing, user, cleaned, note, unsuitable, unsuitable_reason, details)
            if not item.is_gold:
                _advance(item, project, actor=user, stored=stored)
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
            tracker.done(labels=[*stored, label])
            return SubmitResult(label, True, item)
        if item.state not in workflow.OPEN_STATES:
            raise WorkflowError(f"this item no longer takes labels (it is {item.get_state_display().lower()})")
        if lease_live or _capacity_left(item, now, exclude_task=task) > 0:
            tracker = aggregates.track(project, [item], actor_id=user.pk, labels=stored)
            label = _create_label(
                item, task, user, cleaned, note, unsuitable, unsuitable_reason, seconds_spent, details, now
            )
            item.label_count += 1
            item.started = True
            stored.append(label)
            _advance(item, project, actor=user, stored=stored)
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


def _check_still_annotator(project: AnnotationProject, user) -> None:
    if not is_member(project, user, ProjectMember.Role.ANNOTATOR):
        raise NotAllowed("you are no longer an annotator on this project; your earlier labels are kept")


def _create_label(item, task, user, cleaned, note, unsuitable, reason, seconds_spent, details, now) -> Label:
    # The caller holds the item's row lock and has checked that this task has no label, so the unique
    # (item, annotator) constraint is a last line of defence here: its error ends the whole transaction.
    try:
        label = Label.objects.create(
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
        )
    except IntegrityError:
        raise WorkflowError("you have already labeled this item") from None
    task.status, task.finished_at = Task.Status.SUBMITTED, now
    task.save(update_fields=["status", "finished_at"])
    ItemEvent.objects.create(
        item=item,
        actor=user,
        kind=ItemEvent.Kind.LABELED,
        from_state=item.state,
        to_state=item.state,
        value=_event_value(cleaned, unsuitable, reason, note),
    )
    return label


def _change_label(item, label, user, cleaned, note, unsuitable, reason, details) -> Label:
    label.value, label.note, label.unsuitable, label.unsuitable_reason = cleaned, note, unsuitable, reason
    if details is not None:
        label.details = details
    label.save()
    ItemEvent.objects.create(
        item=item,
        actor=user,
        kind=ItemEvent.Kind.LABEL_CHANGED,
        from_state=item.state,
        to_state=item.state,
        value=_event_value(cleaned, unsuitable, reason, note),
    )
    return label


def _event_value(value, unsuitable, reason, note):
    return {"value": value, "unsuitable": unsuitable, "unsuitable_reason": reason, "note": note}


def votes_for(item: Item, stored: Sequence[Label] | None = None) -> list[labels.Vote]:
    """The item's votes in the order they came; from `stored` (every label of the item, oldest first) if given."""
    given = stored if stored is not None else list(Label.objects.filter(item=item).order_by("created_at", "id"))
    return [labels.Vote(label.annotator_id, label.value, label.unsuitable) for label in given]


def _advance(item: Item, project: AnnotationProject, *, actor, stored: Sequence[Label] | None = None) -> None:
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
    item.save()
    if before != item.state:
        event_kind = {
            workflow.NEEDS_TIEBREAK: ItemEvent.Kind.TIEBREAK_REQUESTED,
            workflow.NEEDS_ADJUDICATION: ItemEvent.Kind.ADJUDICATION_REQUESTED,
            workflow.RESOLVED: ItemEvent.Kind.RESOLVED,
        }.get(item.state)
        if event_kind:
            ItemEvent.objects.create(
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
    return item


def adjudicate(item: Item, user, *, value=None, unsuitable: bool = False, rationale: str) -> Item:
    if not roles.is_adjudicator(user):
        raise NotAllowed("only adjudicators can adjudicate")
    return _decide(item, user, value=value, unsuitable=unsuitable, rationale=rationale, event="adjudicate")


def override(item: Item, user, *, value=None, unsuitable: bool = False, rationale: str) -> Item:
    if not roles.is_admin(user):
        raise NotAllowed("only admins can override a final label")
    return _decide(item, user, value=value, unsuitable=unsuitable, rationale=rationale, event="override")


# ---------------------------------------------------------------- bulk actions on items

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
        refusal = _gold_refusal(item)
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
            result.applied += len(changed)
    return result
