from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.jobs.api import JobPayloadSerializer, job_payload
from core.serializers import WorkspaceField, workspace_or_default
from verifybench import services
from verifybench.importing.sources import FILE_TYPES
from verifybench.models import Completion, Dataset, ImportJob, PriorLabel, Question, ReferenceAnswer


class DatasetSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    workspace = WorkspaceField()
    question_count = serializers.IntegerField(read_only=True)
    completion_count = serializers.IntegerField(read_only=True)
    model_count = serializers.IntegerField(read_only=True, help_text="Distinct model names among the completions.")

    class Meta:
        model = Dataset
        fields = [
            "id",
            "name",
            "workspace",
            "description",
            "created_by",
            "created_at",
            "question_count",
            "completion_count",
            "model_count",
        ]
        read_only_fields = ["created_at"]

    def validate(self, attrs):
        if self.instance is None:
            return workspace_or_default(self, attrs)
        if "workspace" in attrs and attrs["workspace"] != self.instance.workspace:
            raise serializers.ValidationError({"workspace": "a dataset stays in the workspace it was made in"})
        return attrs


class PrimaryReferenceSerializer(serializers.ModelSerializer):
    class Meta:
        model = ReferenceAnswer
        fields = ["id", "final_answer", "solution"]


class ReferenceAnswerSerializer(serializers.ModelSerializer):
    class Meta:
        model = ReferenceAnswer
        fields = ["id", "question", "final_answer", "solution", "is_primary", "created_at"]


class QuestionSerializer(serializers.ModelSerializer):
    dataset_name = serializers.CharField(source="dataset.name", read_only=True)
    answer_type_label = serializers.CharField(source="get_answer_type_display", read_only=True)
    primary_reference = PrimaryReferenceSerializer(read_only=True, allow_null=True)
    completion_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Question
        fields = [
            "id",
            "dataset",
            "dataset_name",
            "external_id",
            "text",
            "domain",
            "source",
            "subject",
            "answer_type",
            "answer_type_label",
            "answer_class",
            "image",
            "metadata",
            "content_hash",
            "created_at",
            "primary_reference",
            "completion_count",
        ]


class CompletionSerializer(serializers.ModelSerializer):
    dataset = serializers.IntegerField(source="question.dataset_id", read_only=True)

    class Meta:
        model = Completion
        fields = [
            "id",
            "question",
            "dataset",
            "external_id",
            "model_name",
            "sampling",
            "sample_index",
            "is_greedy",
            "text",
            "content_hash",
            "metadata",
            "created_at",
        ]
        # Absent when the request asks for ?include_text=0 (the view then answers with CompletionLeanSerializer).
        extra_kwargs = {"text": {"required": False}}


class CompletionLeanSerializer(CompletionSerializer):
    """The same rows without the (long) completion text, for listings."""

    class Meta(CompletionSerializer.Meta):
        fields = [name for name in CompletionSerializer.Meta.fields if name != "text"]


class PriorLabelSerializer(serializers.ModelSerializer):
    question = serializers.IntegerField(source="completion.question_id", read_only=True)
    model_name = serializers.CharField(source="completion.model_name", read_only=True)

    class Meta:
        model = PriorLabel
        fields = [
            "id",
            "completion",
            "question",
            "model_name",
            "is_correct",
            "source_format",
            "annotators",
            "source_file",
            "imported_at",
        ]


class ImportUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="A JSON Lines, CSV (with a header row) or Parquet file, one record per row.")
    dataset = serializers.CharField(max_length=200, help_text="Name of the dataset to import into; created if new.")
    workspace = WorkspaceField(help_text="The workspace a new dataset goes to (your only one when omitted).")
    format = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text="A registered import format: verifybench, mumath, matharena, or one added by another app. "
        "Detected from the file when omitted.",
    )
    file_type = serializers.ChoiceField(
        choices=["", *FILE_TYPES],
        required=False,
        allow_blank=True,
        help_text="jsonl, csv or parquet; detected from the file when omitted.",
    )
    skip_invalid = serializers.BooleanField(
        default=False,
        help_text="Import the valid records and skip the invalid ones instead of rejecting the file.",
    )

    def validate(self, attrs):
        return workspace_or_default(self, attrs)

    def validate_format(self, value: str) -> str:
        names = services.import_format_names()
        if value and value not in names:
            raise serializers.ValidationError(f"Unknown format {value!r}; choose one of: {', '.join(names)}.")
        return value


class ImportJobSerializer(serializers.ModelSerializer):
    """An import job: what was uploaded, the common job payload, and the report once it ran."""

    job = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()
    rejects_url = serializers.SerializerMethodField()
    dataset = serializers.SlugRelatedField(slug_field="name", read_only=True)
    created_by = serializers.CharField(source="created_by.username", default=None, read_only=True, allow_null=True)

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "url",
            "source_name",
            "size",
            "dataset_name",
            "dataset",
            "format",
            "file_type",
            "skip_invalid",
            "status",
            "created_by",
            "created_at",
            "finished_at",
            "report",
            "rejects_url",
            "job",
        ]
        read_only_fields = fields

    @extend_schema_field(JobPayloadSerializer)
    def get_job(self, job) -> dict:
        return job_payload(job)

    def get_url(self, job) -> str:
        return f"/api/imports/{job.pk}/"

    def get_rejects_url(self, job) -> str | None:
        return f"/api/imports/{job.pk}/rejects/" if job.rejects_path else None
