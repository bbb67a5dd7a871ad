"""Export jobs over HTTP: create, list, inspect, cancel, download. Researchers and admins only."""

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotation.models import AnnotationProject
from core import workspaces
from core.jobs.api import JobActionsMixin, JobPayloadSerializer, job_payload
from core.permissions import IsResearcherOrAdmin
from core.serializers import ScopedToWorkspaces
from reports import services
from reports.exports import FILE_TYPES, export_format_names
from reports.models import ExportJob


class ExportJobSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()
    job = serializers.SerializerMethodField()
    shortfalls = serializers.SerializerMethodField()
    download_url = serializers.SerializerMethodField()
    created_by = serializers.CharField(source="created_by.username", default=None, read_only=True, allow_null=True)

    class Meta:
        model = ExportJob
        fields = [
            "id",
            "project",
            "format",
            "file_types",
            "options",
            "status",
            "progress",
            "cancel_requested",
            "error",
            "attempt",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "bundle_sha256",
            "bundle_size",
            "shortfalls",
            "manifest",
            "download_url",
            "job",
        ]
        read_only_fields = fields

    def get_progress(self, job) -> dict:
        return {"done": job.progress_done, "total": job.progress_total}

    @extend_schema_field(JobPayloadSerializer)
    def get_job(self, job) -> dict:
        return job_payload(job)

    def get_shortfalls(self, job) -> dict:
        return (job.manifest or {}).get("shortfalls", {})

    def get_download_url(self, job) -> str | None:
        if job.status != ExportJob.Status.SUCCEEDED:
            return None
        request = self.context.get("request")
        path = f"/api/exports/{job.pk}/download/"
        return request.build_absolute_uri(path) if request else path


class ExportRequestSerializer(ScopedToWorkspaces, serializers.Serializer):
    workspace_paths = {"project": "dataset__workspace"}

    project = serializers.PrimaryKeyRelatedField(queryset=AnnotationProject.objects.all())
    format = serializers.CharField()
    file_types = serializers.ListField(
        child=serializers.ChoiceField(choices=FILE_TYPES), required=False, allow_empty=False
    )
    options = serializers.DictField(required=False)

    def validate_format(self, value):
        if value not in export_format_names():
            raise serializers.ValidationError(f"unknown format; expected one of {', '.join(export_format_names())}")
        return value


@extend_schema_view(
    list=extend_schema(summary="Export jobs, newest first"),
    retrieve=extend_schema(summary="One export job: status, progress, manifest"),
)
class ExportJobViewSet(JobActionsMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    permission_classes = [IsResearcherOrAdmin]
    serializer_class = ExportJobSerializer
    filterset_fields = ["project", "format", "status"]
    ordering_fields = ["created_at", "id"]
    ordering = ["-created_at", "-id"]

    def get_queryset(self):
        visible = workspaces.condition(self.request.user, "project__dataset__workspace")
        return ExportJob.objects.filter(visible).select_related("created_by")

    @extend_schema(summary="Start an export", request=ExportRequestSerializer, responses={201: ExportJobSerializer})
    def create(self, request):
        given = ExportRequestSerializer(data=request.data, context={"request": request})
        given.is_valid(raise_exception=True)
        data = given.validated_data
        try:
            job = services.create_export(
                project=data["project"],
                format=data["format"],
                file_types=data.get("file_types"),
                options=data.get("options"),
                created_by=request.user,
            )
        except services.ExportRequestError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(self.get_serializer(job).data, status=status.HTTP_201_CREATED)

    def job_response(self, job) -> Response:
        # not get_serializer(): on cancel, resume and restart that is the action's request serializer
        return Response(ExportJobSerializer(job, context=self.get_serializer_context()).data)

    @extend_schema(
        summary="Download the bundle (zip)",
        responses={
            (200, "application/zip"): OpenApiTypes.BINARY,
            409: OpenApiResponse(description="The export has not succeeded."),
        },
    )
    @action(detail=True, methods=["get"])
    def download(self, request, pk=None):
        job = self.get_object()
        path = services.export_bundle(job)
        if path is None:
            return Response(
                {"detail": f"export {job.pk} has no bundle yet (status {job.status})"}, status=status.HTTP_409_CONFLICT
            )
        return FileResponse(open(path, "rb"), as_attachment=True, filename=path.name, content_type="application/zip")
