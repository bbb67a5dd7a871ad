from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core import roles, subjects, workspaces
from core.jobs.api import JobPayloadSerializer
from verifybench.models import Dataset

from .. import selectors, services
from ..models import AnnotationProject, Invitation, Item, ProjectMember


class DatasetNameField(serializers.SlugRelatedField):
    """A dataset named by its name, among those of the requester's workspaces; a name PostgreSQL cannot hold (a NUL
    character) is refused as invalid."""

    def get_queryset(self):
        request = self.context.get("request")
        return Dataset.objects.filter(workspaces.condition(getattr(request, "user", None)))

    def to_internal_value(self, data):
        if isinstance(data, str) and "\x00" in data:
            self.fail("invalid")
        return super().to_internal_value(data)


class ProjectSerializer(serializers.ModelSerializer):
    seen_as = serializers.SerializerMethodField(help_text="`researcher`: the project with its settings.")
    dataset = DatasetNameField(slug_field="name", queryset=Dataset.objects.all())
    completion_ids = serializers.ListField(child=serializers.IntegerField(), write_only=True, required=False)
    question_ids = serializers.ListField(child=serializers.IntegerField(), write_only=True, required=False)
    seed = serializers.IntegerField(write_only=True, required=False, min_value=-(2**63), max_value=2**63 - 1)

    class Meta:
        model = AnnotationProject
        fields = [
            "id",
            "seen_as",
            "name",
            "description",
            "guidelines",
            "guidelines_version",
            "dataset",
            "kind",
            "labels_per_item",
            "tiebreak_annotators",
            "agreement_threshold",
            "show_model_names",
            "verdict_visibility",
            "lease_minutes",
            "gold_rate",
            "is_active",
            "aggregation",
            "adaptive_redundancy",
            "confidence_target",
            "max_labels",
            "refit_every",
            "preparing",
            "created_at",
            "completion_ids",
            "question_ids",
            "seed",
        ]
        read_only_fields = ["id", "created_at", "guidelines_version", "preparing"]
        # the database's check constraints, refused here with a 400 instead of an IntegrityError
        extra_kwargs = {
            "labels_per_item": {"min_value": 1},
            "gold_rate": {"min_value": 0.0, "max_value": 1.0},
            "agreement_threshold": {"min_value": 0.0},
            "confidence_target": {"min_value": 0.51, "max_value": 0.999},
            "max_labels": {"min_value": 1, "max_value": 10},
        }

    @extend_schema_field({"type": "string", "enum": ["researcher"]})
    def get_seen_as(self, project) -> str:
        return "researcher"

    def validate_kind(self, kind):
        if kind not in subjects.names():
            raise serializers.ValidationError(
                f"{kind!r} is not a project kind; choose from {', '.join(subjects.names())}"
            )
        if self.instance is not None and kind != self.instance.kind:
            raise serializers.ValidationError("the kind of a project cannot change")
        return kind


class ProjectCreatedSerializer(serializers.Serializer):
    """What creating a project answers (202): the project, still preparing, and the job creating its items."""

    project = ProjectSerializer()
    job = JobPayloadSerializer()


class AnnotatorProjectSerializer(serializers.ModelSerializer):
    """What an annotator may know about a project they work on."""

    seen_as = serializers.SerializerMethodField(help_text="`member`: the project as its annotators see it.")

    class Meta:
        model = AnnotationProject
        fields = [
            "id",
            "seen_as",
            "name",
            "description",
            "guidelines",
            "guidelines_version",
            "kind",
            "lease_minutes",
            "is_active",
        ]

    @extend_schema_field({"type": "string", "enum": ["member"]})
    def get_seen_as(self, project) -> str:
        return "member"


class UsernameField(serializers.SlugRelatedField):
    """A user named by username; a name no database can hold (a NUL, an unpaired surrogate) is simply no user."""

    def to_internal_value(self, data):
        if isinstance(data, str) and ("\x00" in data or any("\ud800" <= char <= "\udfff" for char in data)):
            raise serializers.ValidationError("no user has this name")  # not echoed: it cannot be encoded either
        return super().to_internal_value(data)


class MemberSerializer(serializers.ModelSerializer):
    username = UsernameField(
        source="user", slug_field="username", queryset=get_user_model().objects.filter(is_active=True)
    )
    labels = serializers.SerializerMethodField(help_text="Labels this person gave in the project (gold excluded).")

    class Meta:
        model = ProjectMember
        fields = ["id", "username", "role", "added_at", "is_active", "removed_at", "labels"]
        read_only_fields = ["id", "added_at", "is_active", "removed_at"]

    def validate(self, data):
        if not roles.has_role(data["user"], data.get("role", ProjectMember.Role.ANNOTATOR)):
            raise serializers.ValidationError(
                {
                    "username": f"{data['user'].username} does not have the {data.get('role', 'annotator')} role; "
                    "invite them with a link instead, which grants it"
                }
            )
        return data

    def get_labels(self, member) -> int:
        return self.context.get("label_counts", {}).get(member.user_id, 0)


class ProjectForViewerSerializer(serializers.BaseSerializer):
    """A project as the viewer may see it: with its settings for a researcher of its workspace, as its annotators
    see it otherwise."""

    def to_representation(self, instance):
        request = self.context.get("request")
        user = getattr(request, "user", None)
        shown = ProjectSerializer if selectors.researches(instance, user) else AnnotatorProjectSerializer
        return shown(instance, context=self.context).data


class InvitationSerializer(serializers.ModelSerializer):
    status = serializers.SerializerMethodField()
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    used_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    account = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    days = serializers.IntegerField(
        write_only=True,
        required=False,
        default=7,
        min_value=1,
        max_value=90,
        help_text="How long the link stays valid.",
    )

    class Meta:
        model = Invitation
        fields = [
            "id",
            "role",
            "status",
            "account",
            "created_by",
            "created_at",
            "expires_at",
            "used_by",
            "used_at",
            "revoked_at",
            "days",
        ]
        read_only_fields = [
            "id",
            "status",
            "account",
            "created_by",
            "created_at",
            "expires_at",
            "used_by",
            "used_at",
            "revoked_at",
        ]

    def get_status(self, invitation) -> str:
        return invitation.status()


class SubmitSerializer(serializers.Serializer):
    value = serializers.JSONField(required=False, allow_null=True)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=20000)
    unsuitable = serializers.BooleanField(required=False, default=False)
    unsuitable_reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)
    seconds_spent = serializers.FloatField(required=False, allow_null=True, min_value=0)
    next = serializers.BooleanField(
        required=False,
        default=False,
        help_text="also claim your next task in the project: the answer's `next_task` (null when nothing is left "
        "for you, with `next_task_detail` when the claim was refused)",
    )

    def validate(self, data):
        if not data.get("unsuitable") and data.get("value") is None:
            raise serializers.ValidationError({"value": "a value is required unless the item is unsuitable"})
        return data


class DecisionSerializer(serializers.Serializer):
    value = serializers.JSONField(required=False, allow_null=True)
    unsuitable = serializers.BooleanField(required=False, default=False)
    rationale = serializers.CharField(max_length=20000)

    class Meta:
        ref_name = "ItemDecision"


class GoldSerializer(serializers.Serializer):
    item_id = serializers.IntegerField()
    value = serializers.JSONField()


class ConflictSerializer(serializers.ModelSerializer):
    question_external_id = serializers.SerializerMethodField()

    class Meta:
        model = Item
        fields = ["id", "state", "required_labels", "label_count", "priority", "question_external_id"]

    def get_question_external_id(self, item) -> str:
        summary = self.context.get("summaries", {}).get(item.pk, {})
        return summary.get("question_external_id") or summary.get("name", "")


class ItemRowSerializer(serializers.Serializer):
    """One row of the item browser (selectors.browse_rows)."""

    id = serializers.IntegerField()
    subject_id = serializers.IntegerField()
    summary = serializers.DictField()
    state = serializers.CharField()
    resolution = serializers.CharField()
    label_count = serializers.IntegerField()
    required_labels = serializers.IntegerField()
    final_value = serializers.JSONField(allow_null=True)
    final_display = serializers.CharField(allow_null=True)
    excluded = serializers.BooleanField()
    is_gold = serializers.BooleanField()
    gold_value = serializers.JSONField(allow_null=True)
    priority = serializers.IntegerField()
    answer_type = serializers.CharField()


class ItemPageSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True, help_text="The next page (keyset: `after` a key), or null")
    previous = serializers.URLField(allow_null=True, help_text="The previous page (`before` a key), or null")
    results = ItemRowSerializer(many=True)


class BulkActionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=list(services.BULK_ACTIONS.items()))
    item_ids = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        max_length=services.BULK_LIMIT,
        help_text="The items to change; or all_matching with filters",
    )
    all_matching = serializers.BooleanField(
        required=False, default=False, help_text="Change every item that the filters match"
    )
    filters = serializers.DictField(
        child=serializers.CharField(allow_blank=True),
        required=False,
        default=dict,
        help_text="The item browser's filters (state, resolution, disagreement, model, "
        "answer_type, verifier, verdict, annotator, gold, q)",
    )
    rationale = serializers.CharField(required=False, allow_blank=True, default="", max_length=20000)
    value = serializers.JSONField(required=False, allow_null=True, help_text="mark_gold: the known answer")
    change = serializers.IntegerField(required=False, default=0, help_text="priority: how much to add (or subtract)")

    def validate(self, data):
        if not data["all_matching"] and not data.get("item_ids"):
            raise serializers.ValidationError({"item_ids": "choose items, or all_matching with filters"})
        if data["all_matching"]:
            try:
                data["item_filter"] = selectors.ItemFilter.from_params(data["filters"])
            except selectors.InvalidFilter as exc:
                raise serializers.ValidationError({"filters": str(exc)}) from None
        return data
