from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from core import labels, subjects
from core.jobs.models import BackgroundJob

from . import workflow


class AnnotationProject(models.Model):
    class VerdictVisibility(models.TextChoices):
        NOBODY = "nobody", "Nobody"
        ADJUDICATORS = "adjudicators", "Adjudicators only"
        EVERYONE = "everyone", "Annotators and adjudicators"

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    dataset = models.ForeignKey("verifybench.Dataset", on_delete=models.PROTECT, related_name="annotation_projects")
    kind = models.CharField(max_length=30, help_text="A registered subject kind (core.subjects), e.g. correctness.")
    labels_per_item = models.PositiveSmallIntegerField(default=2)
    tiebreak_annotators = models.PositiveSmallIntegerField(default=1)
    agreement_threshold = models.FloatField(
        default=0.0, help_text="For numeric scores: two labels agree when they differ by at most this much."
    )
    show_model_names = models.BooleanField(default=False)
    verdict_visibility = models.CharField(
        max_length=20, choices=VerdictVisibility.choices, default=VerdictVisibility.ADJUDICATORS
    )
    lease_minutes = models.PositiveIntegerField(default=30)
    gold_rate = models.FloatField(default=0.0, help_text="Share of tasks drawn from gold items (0 to 1).")
    is_active = models.BooleanField(default=True)
    preparing = models.BooleanField(
        default=False, help_text="True while a project-setup job creates the items; nobody labels before it is over."
    )
    aggregation = models.CharField(
        max_length=20,
        choices=[("majority", "Majority (the published protocols)"), ("model", "Annotator model (Dawid-Skene)")],
        default="majority",
        help_text="How labels become a final label: a plain majority, or the most probable value under the fitted "
        "annotator model, which weighs each annotator by their estimated reliability.",
    )
    adaptive_redundancy = models.BooleanField(
        default=False,
        help_text="Ask for another label only while the item's posterior confidence is below the "
        "target (needs model aggregation).",
    )
    confidence_target = models.FloatField(
        default=0.98, help_text="Posterior confidence at which adaptive redundancy stops asking for labels."
    )
    max_labels = models.PositiveSmallIntegerField(
        default=4,
        help_text="Adaptive redundancy: human labels at most; an item still unsure then goes to adjudication.",
    )
    refit_every = models.PositiveIntegerField(
        default=200, help_text="New labels after which the annotator model is refitted (0: only on demand)."
    )
    guidelines = models.TextField(
        blank=True,
        help_text="Labeling guidelines (Markdown), current version. Changed only through "
        "services.update_project, which keeps every version in GuidelinesVersion.",
    )
    guidelines_version = models.PositiveIntegerField(default=0, help_text="0 until guidelines are first written.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="ProjectMember", related_name="annotation_projects"
    )

    class Meta:
        ordering = ["-created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(labels_per_item__gte=1), name="labels_per_item_at_least_one"),
            models.CheckConstraint(
                condition=models.Q(gold_rate__gte=0) & models.Q(gold_rate__lte=1), name="gold_rate_between_0_and_1"
            ),
            models.CheckConstraint(
                condition=models.Q(confidence_target__gt=0.5) & models.Q(confidence_target__lt=1),
                name="confidence_target_between_half_and_1",
            ),
            models.CheckConstraint(condition=models.Q(max_labels__gte=1), name="max_labels_at_least_one"),
        ]

    def __str__(self):
        return self.name

    def aggregation_rule(self):
        from .label_model import Rule

        return Rule(self.aggregation, self.adaptive_redundancy, self.confidence_target, self.max_labels)

    def policy(self) -> workflow.Policy:
        return workflow.Policy(self.labels_per_item, self.tiebreak_annotators, self.agreement_threshold)

    @property
    def subject_kind(self) -> subjects.SubjectKind:
        return subjects.get(self.kind)

    @property
    def judgement(self) -> labels.LabelRules:
        return self.subject_kind.rules

    def get_kind_display(self) -> str:
        try:
            return self.subject_kind.title
        except subjects.UnknownSubjectKind:
            return self.kind


class ProjectMember(models.Model):
    class Role(models.TextChoices):
        ANNOTATOR = "annotator", "Annotator"
        ADJUDICATOR = "adjudicator", "Adjudicator"

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="project_memberships")
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.ANNOTATOR)
    added_at = models.DateTimeField(auto_now_add=True)
    is_active = models.BooleanField(
        default=True,
        help_text="False once removed from the project: no new tasks, no live leases; the member's "
        "labels stay and still count. Adding the person again makes the row active again.",
    )
    removed_at = models.DateTimeField(null=True, blank=True)
    guidelines_seen_version = models.PositiveIntegerField(
        default=0, help_text="The last guidelines version this member acknowledged; a newer one is shown to them."
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user", "role"], name="unique_project_member_role")]

    def __str__(self):
        return f"{self.user} ({self.role}) in {self.project}"


OPEN_STATES = list(workflow.OPEN_STATES)


class Item(models.Model):
    class State(models.TextChoices):
        PENDING = workflow.PENDING, "Pending"
        IN_PROGRESS = workflow.IN_PROGRESS, "In progress"
        NEEDS_TIEBREAK = workflow.NEEDS_TIEBREAK, "Needs tie-break"
        NEEDS_ADJUDICATION = workflow.NEEDS_ADJUDICATION, "Needs adjudication"
        RESOLVED = workflow.RESOLVED, "Resolved"
        EXCLUDED = workflow.EXCLUDED, "Excluded"

    class Resolution(models.TextChoices):
        NONE = "", "Unresolved"
        AGREEMENT = workflow.BY_AGREEMENT, "By agreement"
        MAJORITY = workflow.BY_MAJORITY, "By majority"
        ADJUDICATION = workflow.BY_ADJUDICATION, "By adjudication"
        OVERRIDE = workflow.BY_OVERRIDE, "By admin override"
        MODEL = workflow.BY_MODEL, "By the annotator model"

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="items")
    subject_id = models.BigIntegerField(
        help_text="What the item is about: a row of the project kind's subject table (a completion, a question, a "
        "proof), named by core.subjects."
    )
    answer_type = models.CharField(
        max_length=2, blank=True, help_text="The subject's answer type when it has one, copied for per-type figures."
    )
    state = models.CharField(max_length=20, choices=State.choices, default=State.PENDING)
    resolution = models.CharField(max_length=20, choices=Resolution.choices, default="", blank=True)
    required_labels = models.PositiveSmallIntegerField()
    label_count = models.PositiveSmallIntegerField(default=0)
    started = models.BooleanField(default=False, help_text="Has at least one label; such items are served first.")
    final_value = models.JSONField(null=True, blank=True)
    confidence = models.FloatField(
        null=True,
        blank=True,
        help_text="Posterior probability of the final (or leading) value under the project's "
        "annotator model, when the project aggregates with it; empty otherwise.",
    )
    excluded = models.BooleanField(
        default=False, help_text="Left out of every export: resolved as unsuitable, or excluded from the workflow."
    )
    priority = models.IntegerField(default=0)
    random_key = models.FloatField()
    is_gold = models.BooleanField(default=False)
    gold_value = models.JSONField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "subject_id"], name="one_item_per_subject_per_project"),
            models.CheckConstraint(
                condition=models.Q(label_count__lte=models.F("required_labels")) | models.Q(is_gold=True),
                name="item_labels_within_required",
            ),
        ]
        indexes = [
            models.Index(
                fields=["project", "-started", "-priority", "random_key"],
                condition=models.Q(state__in=OPEN_STATES, is_gold=False),
                name="item_queue_order",
            ),
            models.Index(fields=["project", "state"], name="item_project_state"),
            models.Index(fields=["subject_id"], name="item_subject"),
            # the item browser's orders, read a page at a time from a key (keyset pagination)
            models.Index(fields=["project", "id"], name="item_browse_by_id"),
            models.Index(fields=["project", "priority", "id"], name="item_browse_by_priority"),
            models.Index(fields=["project", "label_count", "id"], name="item_browse_by_labels"),
            # the conflicts queue, read a page at a time from a key
            models.Index(
                fields=["project", "priority", "id"],
                name="item_conflict_queue",
                condition=models.Q(state=workflow.NEEDS_ADJUDICATION, is_gold=False),
            ),
        ]

    def __str__(self):
        return f"item {self.pk} ({self.state})"

    @property
    def subject(self):
        """What the item is about (a completion, a question, a proof...), loaded through its project's kind."""
        return self.project.subject_kind.load(self.subject_id)


class TaskQuerySet(models.QuerySet):
    def live(self, now=None):
        """Leases still in force: leased, and not yet expired."""
        return self.filter(status=Task.Status.LEASED, expires_at__gt=now or timezone.now())


class Task(models.Model):
    """One annotator's claim on one item: a lease until submitted, skipped or expired."""

    objects = TaskQuerySet.as_manager()

    class Status(models.TextChoices):
        LEASED = "leased", "Leased"
        SUBMITTED = "submitted", "Submitted"
        SKIPPED = "skipped", "Skipped"

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="tasks")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="annotation_tasks")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.LEASED)
    is_tiebreak = models.BooleanField(default=False)
    leased_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["item", "annotator"], name="one_task_per_item_per_annotator")]
        indexes = [
            models.Index(fields=["item", "status", "expires_at"], name="task_item_status"),
            models.Index(fields=["annotator", "status", "item"], name="task_annotator_status_item"),
        ]


class NoBulkDeleteQuerySet(models.QuerySet):
    def delete(self):
        raise ValidationError(f"{self.model._meta.verbose_name_plural} are never deleted.")


class AppendOnlyQuerySet(NoBulkDeleteQuerySet):
    def update(self, **kwargs):
        raise ValidationError(f"{self.model._meta.verbose_name_plural} are append-only.")


class Label(models.Model):
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="labels")
    task = models.OneToOneField(Task, on_delete=models.PROTECT, related_name="label")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="annotation_labels")
    value = models.JSONField(null=True, blank=True)
    details = models.JSONField(default=dict, blank=True, help_text="Kind-specific detail, e.g. a rubric grading.")
    unsuitable = models.BooleanField(default=False)
    unsuitable_reason = models.TextField(blank=True)
    note = models.TextField(blank=True)
    is_tiebreak = models.BooleanField(default=False)
    seconds_spent = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = NoBulkDeleteQuerySet.as_manager()

    class Meta:
        ordering = ["item_id", "created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["item", "annotator"], name="one_label_per_item_per_annotator")]

    def delete(self, *args, **kwargs):
        raise ValidationError("Labels are never deleted.")


class ItemEvent(models.Model):
    """Append-only history of everything that happened to an item."""

    class Kind(models.TextChoices):
        LABELED = "labeled", "Label given"
        LABEL_CHANGED = "label_changed", "Label changed"
        TIEBREAK_REQUESTED = "tiebreak_requested", "Tie-break requested"
        ADJUDICATION_REQUESTED = "adjudication_requested", "Adjudication requested"
        RESOLVED = "resolved", "Resolved"
        ADJUDICATED = "adjudicated", "Adjudicated"
        OVERRIDDEN = "overridden", "Overridden by admin"
        GOLD_SET = "gold_set", "Marked as gold"
        REOPENED = "reopened", "Re-opened for another label"
        EXCLUDED = "excluded", "Excluded from the workflow"
        PRIORITY_CHANGED = "priority_changed", "Priority changed"
        LATE_SUBMIT_REFUSED = "late_submit_refused", "Late submission refused"

    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="events")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    kind = models.CharField(max_length=30, choices=Kind.choices)
    from_state = models.CharField(max_length=20, blank=True)
    to_state = models.CharField(max_length=20, blank=True)
    value = models.JSONField(null=True, blank=True)
    rationale = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["item_id", "created_at", "id"]
        indexes = [models.Index(fields=["item", "created_at"], name="event_item_time")]

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValidationError("History events are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValidationError("History events are append-only.")


class GuidelinesVersion(models.Model):
    """Every version of a project's guidelines, kept when a save changes the text. Append-only."""

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="guidelines_versions")
    version = models.PositiveIntegerField()
    text = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["project_id", "-version"]
        constraints = [models.UniqueConstraint(fields=["project", "version"], name="one_guidelines_text_per_version")]

    def __str__(self):
        return f"guidelines v{self.version} of {self.project}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValidationError("Guidelines versions are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValidationError("Guidelines versions are append-only.")


class Invitation(models.Model):
    """A one-time link that makes whoever opens it a member of a project with a role.

    Only a hash of the token is stored: the link itself is shown once, when it is created. An invitation bound to
    an `account` (one a researcher created) lets that account choose its password instead of signing up.
    """

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        USED = "used", "Used"
        EXPIRED = "expired", "Expired"
        REVOKED = "revoked", "Revoked"

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=20, choices=ProjectMember.Role.choices, default=ProjectMember.Role.ANNOTATOR)
    token_hash = models.CharField(max_length=64, unique=True)
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Set when the link lets a newly created account choose its password.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    account_state = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="For a link bound to an account: a digest of the account as it was when the link was made (its "
        "password, flags, groups, permissions and memberships). Any change to the account kills the link.",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(
                fields=["account"], condition=models.Q(used_at=None, revoked_at=None), name="open_account_links"
            )
        ]

    def __str__(self):
        return f"{self.get_role_display().lower()} invitation to {self.project} ({self.status()})"

    def status(self, now=None) -> str:
        if self.used_at is not None:
            return self.Status.USED
        if self.revoked_at is not None:
            return self.Status.REVOKED
        if self.expires_at <= (now or timezone.now()):
            return self.Status.EXPIRED
        return self.Status.OPEN


class ProjectChange(models.Model):
    """Append-only log of what was changed on a project, by whom and when: settings, guidelines, members,
    invitations."""

    class Kind(models.TextChoices):
        SETTINGS = "settings", "Settings changed"
        GUIDELINES = "guidelines", "Guidelines changed"
        MEMBER_ADDED = "member_added", "Member added"
        MEMBER_REMOVED = "member_removed", "Member removed"
        ACCOUNT_CREATED = "account_created", "Account created"
        INVITATION_CREATED = "invitation_created", "Invitation created"
        INVITATION_REVOKED = "invitation_revoked", "Invitation revoked"
        INVITATION_ACCEPTED = "invitation_accepted", "Invitation accepted"

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="changes")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    kind = models.CharField(max_length=30, choices=Kind.choices)
    summary = models.CharField(max_length=500)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["project_id", "-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="project_change_time")]

    def __str__(self):
        return self.summary

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValidationError("Project changes are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValidationError("Project changes are append-only.")


class AnnotatorModelFit(BackgroundJob):
    """One refit of a project's annotator model (a job kind): Dawid-Skene over every label of the project, gold items
    as anchors, and each verifier's confusion measured against the known answers. The latest succeeded fit is the
    model the label path uses."""

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="model_fits")
    last_label_id = models.BigIntegerField(default=0, help_text="The newest label the fit saw.")
    labels_seen = models.PositiveIntegerField(default=0)
    parameters = models.JSONField(null=True, blank=True, help_text="What the label path needs (label_model).")
    summary = models.JSONField(
        default=dict, blank=True, help_text="Per annotator: estimated accuracy overall and per answer type."
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "status", "-id"], name="modelfit_project_status")]

    def __str__(self):
        return f"annotator model fit {self.pk} of project {self.project_id} ({self.status})"


class ProjectSetupJob(BackgroundJob):
    """The creation of a new project's items (a job kind): every subject its dataset offers for the project's kind,
    or the chosen ones. All or nothing: the items are written in one transaction that also opens the project, so a
    killed or cancelled setup has written no item and a restart starts over."""

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="setup_jobs")
    subject_ids = models.JSONField(null=True, blank=True, help_text="The chosen subjects; every one when null.")
    seed = models.BigIntegerField(null=True, blank=True, help_text="Seeds the items' random order.")
    items_created = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "status"], name="setupjob_project_status")]

    def __str__(self):
        return f"setup {self.pk} of project {self.project_id} ({self.status})"


class ProjectTally(models.Model):
    """One counter of a project's figures (see core.metrics.tallies for the keys), kept current by
    annotation.aggregates in the transaction of every change that moves it; `rebuild_aggregates` recomputes them.

    A counter that many writers move at once (items by state, labels) is split over a few shards, so concurrent
    submits do not queue on one row; a reader sums the shards."""

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="tallies")
    key = models.TextField()
    shard = models.PositiveSmallIntegerField(default=0)
    count = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "key", "shard"], name="one_tally_per_key_shard")]

    def __str__(self):
        return f"{self.key}={self.count} in project {self.project_id}"


class GroupTally(models.Model):
    """Two counters per (series, group) of a project that a higher layer keeps through the tallies: for grading,
    per author model (series) and question (group), the sampled answers with a final human label (`n`) and the
    correct ones among them (`c`), from which Pass@k and G-Pass@k are computed. They are kept apart from
    `ProjectTally` because a project has one pair per question and model, and the pages that read every
    `ProjectTally` row of a project must not read those. The tallies' keys ``q|n|<[series, group] as JSON>`` and
    ``q|c|...`` land here (annotation.aggregates)."""

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="group_tallies")
    series = models.TextField()
    group = models.TextField()
    n = models.BigIntegerField(default=0)
    c = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "series", "group"], name="one_group_tally")]
        indexes = [models.Index(fields=["project", "series", "n", "group"], name="group_tally_by_count")]

    def __str__(self):
        return f"{self.series}/{self.group}: {self.c} of {self.n} in project {self.project_id}"


class VectorTally(models.Model):
    """A vector of counters per (series, group) of a project that a higher layer keeps through the tallies: for
    grading, per verifier (and answer type and source, or author model, or pair of verifiers) and question, the
    question's labeled items in each cell of the verifier's confusion matrix; the bootstrap of the meta-evaluation
    resamples these per-question vectors. `counts` is the vector as comma-separated integers without trailing
    zeros (empty for zero). The tallies' keys ``w|<[series, group, cell] as JSON>`` land here, and each change also
    moves the moments of its series (`SeriesTally`); see annotation.aggregates."""

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="vector_tallies")
    series = models.TextField()
    group = models.TextField()
    counts = models.TextField(default="", blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "series", "group"], name="one_vector_tally")]
        indexes = [models.Index(fields=["project", "series", "counts"], name="vector_tally_by_counts")]

    def __str__(self):
        return f"{self.series}/{self.group}: [{self.counts}] in project {self.project_id}"


class SeriesTally(models.Model):
    """The moments of a `VectorTally` series, kept as the vectors change: how many groups have a non-zero vector
    (``wn|<series>``), the sum of each cell (``ws|<series>|<i>``) and of each product of two cells
    (``wm|<series>|<i>|<j>``, i <= j). Sharded like `ProjectTally`; kept apart from it because a page that reads
    every `ProjectTally` row must not read these."""

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="series_tallies")
    key = models.TextField()
    shard = models.PositiveSmallIntegerField(default=0)
    count = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "key", "shard"], name="one_series_tally")]

    def __str__(self):
        return f"{self.key}={self.count} in project {self.project_id}"


class ProjectCompletion(models.Model):
    """That every item of a project was found resolved or excluded, and when (annotation.completion). Written once
    per completion by the first check that finds it, so `project.completed` is announced once; removed when an item
    opens again (a re-opening, new items), so the next completion is announced too."""

    project = models.OneToOneField(AnnotationProject, on_delete=models.CASCADE, primary_key=True, related_name="+")
    completed_at = models.DateTimeField()

    def __str__(self):
        return f"project {self.project_id} complete since {self.completed_at:%Y-%m-%d %H:%M}"
