"""Thin serializers of the proof-grading API; the rules live in grading.proof_services."""

from rest_framework import serializers

from core.serializers import ScopedToWorkspaces, WorkspaceField, workspace_or_default

from ..models import Competition, ProofProblem


class GradeSerializer(serializers.Serializer):
    chain = serializers.CharField()
    awarded = serializers.DictField(child=serializers.JSONField(), required=False, default=dict)
    deductions = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    justifications = serializers.DictField(child=serializers.CharField(allow_blank=True), required=False, default=dict)
    note = serializers.CharField(required=False, allow_blank=True, default="")
    rubric = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        help_text="The rubric version graded against; the latest when absent.",
    )
    seconds_spent = serializers.FloatField(required=False, allow_null=True, default=None, min_value=0)


class RubricWriteSerializer(ScopedToWorkspaces, serializers.Serializer):
    workspace_paths = {"problem": "competition__dataset__workspace"}

    problem = serializers.PrimaryKeyRelatedField(queryset=ProofProblem.objects.all())
    spec = serializers.JSONField(
        help_text="chains [{key, title, checkpoints [{key, title, points, description, "
        "allow_partial}]}], deductions [{key, title, kind, amount}], zero_credit"
    )


class RubricSerializer(serializers.Serializer):
    """A rubric version as the API answers it (grading.proofs.selectors.rubric_dict)."""

    id = serializers.IntegerField()
    problem_id = serializers.IntegerField()
    version = serializers.IntegerField()
    spec = serializers.JSONField()
    in_use = serializers.BooleanField(help_text="Grades use this version, so it never changes again.")
    created_at = serializers.DateTimeField()


class RubricReviseSerializer(serializers.Serializer):
    spec = serializers.JSONField()


class DecisionSerializer(serializers.Serializer):
    score = serializers.FloatField()
    rationale = serializers.CharField()


class ProofProjectSerializer(serializers.Serializer):
    competition = serializers.PrimaryKeyRelatedField(queryset=Competition.objects.all())
    name = serializers.CharField(max_length=200)
    threshold = serializers.FloatField(required=False, default=1.0, min_value=0)
    problems = serializers.PrimaryKeyRelatedField(queryset=ProofProblem.objects.all(), many=True, required=False)


class CompetitionSerializer(serializers.ModelSerializer):
    workspace = WorkspaceField(write_only=True, help_text="The workspace of a new competition's dataset.")

    class Meta:
        model = Competition
        fields = ["id", "name", "date", "description", "dataset", "workspace"]
        read_only_fields = ["dataset"]

    def validate(self, attrs):
        return workspace_or_default(self, attrs)
