"""Thin serializers of the verifier, run and selection endpoints; the rules live in grading.runs and services."""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from annotation.models import AnnotationProject
from core import roles, workspaces
from core.serializers import ScopedToWorkspaces, WorkspaceField
from verifybench.models import Dataset

from ..judges import egress
from ..models import AllowedJudgeHost, PromptTemplate, VerifierConfig
from ..selection import recipes as selection
from ..services import judge_config_defaults

SECRET_FIELDS = ("api_key", "key", "secret", "token")


class VerifierConfigSerializer(ScopedToWorkspaces, serializers.ModelSerializer):
    """Names the environment variable that holds a judge's API key; a key value is never accepted or shown. It
    belongs to a workspace (the requester's only one when not given); an admin may make one shared by all (null)."""

    workspace_paths = {"cascade_judge": "workspace?"}

    workspace = WorkspaceField(allow_null=True)
    template = serializers.PrimaryKeyRelatedField(
        queryset=PromptTemplate.objects.all(), allow_null=True, required=False
    )
    cascade_judge = serializers.PrimaryKeyRelatedField(
        queryset=VerifierConfig.objects.filter(kind=VerifierConfig.Kind.JUDGE),
        allow_null=True,
        required=False,
        help_text="Cascade only: the LLM judge asked on what the rules leave inconclusive.",
    )
    cascade_sample_rate = serializers.FloatField(
        min_value=0.0,
        max_value=1.0,
        required=False,
        help_text="Cascade only: the share of rule-decided completions also sent to the judge (0 to 1).",
    )

    class Meta:
        model = VerifierConfig
        fields = [
            "id",
            "name",
            "kind",
            "workspace",
            "base_url",
            "model",
            "api_key_env",
            "template",
            "temperature",
            "max_tokens",
            "timeout_seconds",
            "max_retries",
            "backoff_base_seconds",
            "concurrency_limit",
            "requests_per_minute",
            "tokens_per_minute",
            "price_input_per_million",
            "price_output_per_million",
            "use_reference",
            "cascade_judge",
            "cascade_sample_rate",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["created_at", "updated_at"]

    def to_internal_value(self, data):
        sent = [field for field in SECRET_FIELDS if hasattr(data, "keys") and field in data]
        if sent:
            raise serializers.ValidationError(
                {
                    field: "Never send a key; put it in an environment variable and give its name in api_key_env."
                    for field in sent
                }
            )
        return super().to_internal_value(data)

    def validate(self, attrs):
        request = self.context.get("request")
        user = getattr(request, "user", None)
        if self.instance is None and "workspace" not in self.initial_data:
            attrs["workspace"] = workspaces.default_for(user)
            if attrs["workspace"] is None:
                raise serializers.ValidationError({"workspace": "choose the workspace it belongs to"})
        if "workspace" in attrs and attrs["workspace"] is None and not roles.is_admin(user):
            raise serializers.ValidationError(
                {"workspace": "only admins make a configuration shared by every workspace"}
            )
        if self.instance is not None and "workspace" in attrs and attrs["workspace"] != self.instance.workspace:
            raise serializers.ValidationError({"workspace": "a configuration stays in the workspace it was made in"})
        external = VerifierConfig.Kind.EXTERNAL
        changed_kind = self.instance is not None and attrs.get("kind", self.instance.kind) != self.instance.kind
        if changed_kind and external in (attrs["kind"], self.instance.kind):
            raise serializers.ValidationError({"kind": "an imported-verdict configuration keeps its kind"})
        if self.instance is None and attrs.get("kind") == external:
            raise serializers.ValidationError(
                {"kind": "imported-verdict configurations are made by importing a verdict file (docs/formats.md)"}
            )
        judge = attrs.get("cascade_judge")
        workspace = attrs.get("workspace", getattr(self.instance, "workspace", None))
        if judge is not None and judge.workspace_id not in (None, getattr(workspace, "pk", None)):
            raise serializers.ValidationError({"cascade_judge": "the judge belongs to another workspace"})
        if self.instance is None and attrs.get("kind") == VerifierConfig.Kind.JUDGE:
            for field, default in judge_config_defaults().items():
                if not attrs.get(field) and default:
                    attrs[field] = default
        instance = VerifierConfig(**{**self._current_values(), **attrs})
        try:
            instance.clean()
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.message_dict) from None
        return attrs

    def _current_values(self) -> dict:
        if self.instance is None:
            return {}
        return {
            field: getattr(self.instance, field)
            for field in self.Meta.fields
            if field not in ("id", "created_at", "updated_at")
        }


class AllowedJudgeHostSerializer(serializers.ModelSerializer):
    """An allowed judge endpoint, written as a base URL (`https://api.openai.com`, `http://10.0.0.5:8000/v1`;
    a path is ignored), with the names of the key variables that may be sent to it."""

    base_url = serializers.CharField(
        max_length=600, help_text="scheme://host[:port]: another port or scheme of the host is another endpoint."
    )
    key_envs = serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        default=list,
        help_text="Names of the environment variables whose keys may be sent here (never the keys themselves).",
    )
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = AllowedJudgeHost
        fields = [
            "id",
            "base_url",
            "scheme",
            "host",
            "port",
            "key_envs",
            "allow_private",
            "note",
            "created_by",
            "created_at",
        ]
        read_only_fields = ["id", "scheme", "host", "port", "created_by", "created_at"]

    def to_representation(self, instance):
        return {**super().to_representation(instance), "base_url": instance.base_url}

    def validate_base_url(self, base_url):
        try:
            return egress.parse_entry(base_url)
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None

    def validate(self, attrs):
        if "base_url" in attrs:
            attrs["scheme"], attrs["host"], attrs["port"] = attrs.pop("base_url")
        candidate = AllowedJudgeHost(
            **{
                "scheme": getattr(self.instance, "scheme", "https"),
                "host": getattr(self.instance, "host", ""),
                "port": getattr(self.instance, "port", 443),
                "key_envs": getattr(self.instance, "key_envs", []),
                **attrs,
            }
        )
        try:
            candidate.clean()
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.message_dict) from None
        others = AllowedJudgeHost.objects.filter(scheme=candidate.scheme, host=candidate.host, port=candidate.port)
        if self.instance is not None:
            others = others.exclude(pk=self.instance.pk)
        if others.exists():
            raise serializers.ValidationError({"base_url": f"{candidate.base_url} is already allowed"})
        attrs["key_envs"] = candidate.key_envs
        return attrs


class RunCreateSerializer(ScopedToWorkspaces, serializers.Serializer):
    workspace_paths = {"verifier": "workspace?", "dataset": "workspace", "project": "dataset__workspace"}

    verifier = serializers.PrimaryKeyRelatedField(queryset=VerifierConfig.objects.all())
    dataset = serializers.PrimaryKeyRelatedField(queryset=Dataset.objects.all(), required=False, allow_null=True)
    project = serializers.PrimaryKeyRelatedField(
        queryset=AnnotationProject.objects.all(), required=False, allow_null=True
    )
    answer_types = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    domains = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    models = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    chunk_size = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        max_value=10_000,
        help_text="Completions per chunk, the unit workers share and commit (default by verifier kind: rules 2000, "
        "judge 200, cascade 500).",
    )
    options = serializers.DictField(
        required=False, default=dict, help_text="chunk_delay: seconds to pause after each chunk."
    )


class SelectionCreateSerializer(ScopedToWorkspaces, serializers.Serializer):
    workspace_paths = {"dataset": "workspace", "verifiers": "workspace?"}

    dataset = serializers.SlugRelatedField(slug_field="name", queryset=Dataset.objects.all())
    strategy = serializers.ChoiceField(choices=selection.STRATEGIES)
    verifiers = serializers.SlugRelatedField(slug_field="name", queryset=VerifierConfig.objects.all(), many=True)
    seed = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=-(2**63), max_value=2**63 - 1
    )
    target = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        help_text="verifybench-hard: completions to pick (2000 when absent); cascade: at most this many, at random.",
    )
    routes = serializers.ListField(
        child=serializers.ChoiceField(choices=selection.CASCADE_ROUTES),
        required=False,
        allow_empty=False,
        help_text="cascade: route only undecided or only disputed completions (both when absent).",
    )
    per_side = serializers.IntegerField(required=False, default=2, min_value=1)
    min_minority = serializers.IntegerField(required=False, default=2, min_value=1)
    strata = serializers.ListField(
        child=serializers.ChoiceField(choices=selection.STRATUM_FIELDS), required=False, allow_empty=False
    )
    answer_types = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    domains = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    models = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    name = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    labels_per_item = serializers.IntegerField(required=False, min_value=1)
    verdict_visibility = serializers.ChoiceField(choices=AnnotationProject.VerdictVisibility.choices, required=False)
