"""Thin serializers of the webhook endpoints; the rules (allowed URLs, known events) live in webhooks.services."""

from rest_framework import serializers

from annotation.models import AnnotationProject
from core.models import Workspace
from core.serializers import ScopedToWorkspaces

from ..models import Webhook, WebhookAttempt, WebhookDelivery


class WebhookSerializer(ScopedToWorkspaces, serializers.ModelSerializer):
    workspace_paths = {"project": "dataset__workspace", "workspace": "pk"}

    project = serializers.PrimaryKeyRelatedField(
        queryset=AnnotationProject.objects.all(),
        required=False,
        allow_null=True,
        help_text="The project whose events the hook hears; give this or `workspace`, not both.",
    )
    workspace = serializers.PrimaryKeyRelatedField(
        queryset=Workspace.objects.all(),
        required=False,
        allow_null=True,
        help_text="The workspace whose every project, dataset and import the hook hears; give this or `project`.",
    )
    url = serializers.CharField(
        max_length=2000, help_text="Where deliveries are posted; its host must be on the judges' egress allow-list."
    )
    events = serializers.ListField(
        child=serializers.CharField(max_length=100),
        allow_empty=False,
        max_length=50,
        help_text="Event names the hook hears (GET /api/webhooks/events/ lists them).",
    )
    description = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    deliveries_url = serializers.SerializerMethodField()

    class Meta:
        model = Webhook
        fields = [
            "id",
            "project",
            "workspace",
            "url",
            "events",
            "description",
            "is_active",
            "created_by",
            "created_at",
            "updated_at",
            "deliveries_url",
        ]
        read_only_fields = ["id", "created_by", "created_at", "updated_at"]

    def get_deliveries_url(self, webhook) -> str:
        return f"/api/webhooks/{webhook.pk}/deliveries/"

    def validate(self, attrs):
        if self.instance is None:  # a hook's scope is chosen once, when it is made
            if attrs.get("project") is None and attrs.get("workspace") is None:
                raise serializers.ValidationError(
                    {"project": "give the project or the workspace whose events the hook hears"}
                )
            if attrs.get("project") is not None and attrs.get("workspace") is not None:
                raise serializers.ValidationError({"workspace": "give a project or a workspace, not both"})
        return attrs


class WebhookWithSecretSerializer(WebhookSerializer):
    """A hook as answered when it is created or its secret replaced: the only answers that carry the secret."""

    secret = serializers.CharField(read_only=True, help_text="Verifies the signature of every delivery; keep it.")

    class Meta(WebhookSerializer.Meta):
        fields = [*WebhookSerializer.Meta.fields, "secret"]


class WebhookUpdateSerializer(WebhookSerializer):
    project = serializers.PrimaryKeyRelatedField(read_only=True)
    workspace = serializers.PrimaryKeyRelatedField(read_only=True)


class EventSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()


class AttemptSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    trigger = serializers.ChoiceField(choices=WebhookAttempt.Trigger.choices)
    requested_by = serializers.CharField(allow_null=True)
    started_at = serializers.DateTimeField()
    duration_ms = serializers.IntegerField()
    status_code = serializers.IntegerField(allow_null=True)
    succeeded = serializers.BooleanField()
    error = serializers.CharField(allow_blank=True)
    response_excerpt = serializers.CharField(allow_blank=True)


class DeliverySerializer(serializers.Serializer):
    """A delivery (webhooks.selectors.delivery_payload); one delivery alone adds its body and its attempts."""

    id = serializers.IntegerField()
    url = serializers.CharField()
    webhook = serializers.IntegerField()
    project = serializers.IntegerField(allow_null=True)
    workspace = serializers.IntegerField(allow_null=True)
    event = serializers.CharField()
    event_id = serializers.CharField()
    status = serializers.ChoiceField(choices=WebhookDelivery.Status.choices)
    attempts = serializers.IntegerField()
    last_status_code = serializers.IntegerField(allow_null=True)
    last_error = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    next_attempt_at = serializers.DateTimeField(allow_null=True)
    delivered_at = serializers.DateTimeField(allow_null=True)


class DeliveryDetailSerializer(DeliverySerializer):
    body = serializers.JSONField(help_text="The JSON body as sent (every attempt sends it unchanged).")
    attempt_log = AttemptSerializer(many=True)
