"""A project's settings and guidelines: validated changes, the labeling-policy lock and its change log."""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from core import labels

from .. import label_model, workflow
from ..models import (
    AnnotationProject,
    GuidelinesVersion,
    Item,
    ProjectChange,
    ProjectMember,
    Task,
)
from .errors import InvalidSubmission, WorkflowError


def _active_leases(now):
    return (
        Task.objects.filter(item=OuterRef("pk"), status=Task.Status.LEASED, expires_at__gt=now)
        .order_by()
        .values("item")
        .annotate(n=Count("pk"))
        .values("n")
    )


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


def log_change(
    project: AnnotationProject, actor, kind: str, summary: str, details: dict | None = None
) -> ProjectChange:
    return ProjectChange.objects.create(
        project=project, actor=actor, kind=kind, summary=summary[:500], details=details or {}
    )


def check_setting_values(values: dict) -> None:
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
    check_setting_values(values)
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
            log_change(
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
    log_change(
        project,
        actor,
        ProjectChange.Kind.GUIDELINES,
        f"guidelines version {version.version}" + ("" if text else " (emptied)"),
        {"version": version.version, "characters": len(text)},
    )
    return version


_POLICY_LOCK_SPACE = 0x6D6C  # first key of the advisory locks that guard a project's labeling policy


def policy_lock(project_id: int, *, exclusive: bool = False) -> None:
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
    policy_lock(project.pk, exclusive=True)
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
    check_aggregation_rule(
        project.judgement,
        values.get("aggregation", project.aggregation),
        values.get("adaptive_redundancy", project.adaptive_redundancy),
    )


def check_aggregation_rule(rules: labels.LabelRules, aggregation_rule: str, adaptive: bool) -> None:
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
    policy_lock(project.pk, exclusive=True)
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
