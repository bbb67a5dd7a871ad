from django.conf import settings
from django.db.models import Count, Prefetch, ProtectedError, RestrictedError
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from core import workspaces
from core.jobs.api import JobActionsMixin
from core.permissions import IsResearcherOrAdmin
from verifybench import imports, selectors, services
from verifybench.models import Completion, Dataset, ImportJob, PriorLabel, Question, ReferenceAnswer

from . import filters, serializers

_FALSE_VALUES = {"0", "false", "no", "off"}


class InUse(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "in_use"


def _in_use_message(dataset, blocking_objects) -> str:
    blockers = sorted({f"{obj._meta.verbose_name} {obj}" for obj in blocking_objects})
    shown = ", ".join(blockers[:10]) + (f" and {len(blockers) - 10} more" if len(blockers) > 10 else "")
    return f"Dataset {dataset.name!r} is still used by {shown}; nothing was deleted."


@extend_schema_view(
    list=extend_schema(summary="List datasets with their question, completion and model counts"),
    retrieve=extend_schema(summary="One dataset with its counts"),
    destroy=extend_schema(
        responses={
            204: None,
            409: OpenApiResponse(
                description="The dataset is still used (e.g. by an annotation project); nothing deleted."
            ),
        }
    ),
)
class DatasetViewSet(viewsets.ModelViewSet):
    permission_classes = [IsResearcherOrAdmin]
    serializer_class = serializers.DatasetSerializer
    search_fields = ["name", "description"]
    ordering_fields = ["name", "created_at", "question_count", "completion_count"]
    ordering = ["name"]
    filterset_fields = ["name"]

    def get_queryset(self):
        visible = Dataset.objects.filter(workspaces.condition(self.request.user))
        return selectors.datasets_with_counts(visible.select_related("created_by", "workspace"))

    def perform_create(self, serializer):
        serializer.save(created_by=self.request.user)
        serializer.instance = self.get_queryset().get(pk=serializer.instance.pk)

    def perform_update(self, serializer):
        serializer.save()
        serializer.instance = self.get_queryset().get(pk=serializer.instance.pk)

    def perform_destroy(self, instance):
        try:
            instance.delete()
        except ProtectedError as error:
            raise InUse(_in_use_message(instance, error.protected_objects)) from None
        except RestrictedError as error:
            raise InUse(_in_use_message(instance, error.restricted_objects)) from None

    @extend_schema(
        summary="Upload a file to import into a dataset; the import runs as a background job",
        request={"multipart/form-data": serializers.ImportUploadSerializer},
        responses={
            202: OpenApiResponse(
                serializers.ImportJobSerializer,
                description="The import job; follow /api/imports/{id}/ for its progress and report.",
            ),
            400: OpenApiResponse(OpenApiTypes.OBJECT, description="The request is incomplete (no file, no dataset)."),
            413: OpenApiResponse(OpenApiTypes.OBJECT, description="The file is over IMPORT_MAX_UPLOAD_BYTES."),
        },
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="import",
        parser_classes=[MultiPartParser, FormParser],
        serializer_class=serializers.ImportUploadSerializer,
        filter_backends=[],
        pagination_class=None,
    )
    def import_file(self, request):
        too_large = _too_large(request)
        if too_large is not None:
            return too_large
        upload = serializers.ImportUploadSerializer(data=request.data, context={"request": request})
        upload.is_valid(raise_exception=True)
        data = upload.validated_data
        try:
            job = imports.create_import(
                uploaded=data["file"],
                dataset_name=data["dataset"],
                workspace=data["workspace"],
                fmt=data.get("format") or "",
                file_type=data.get("file_type") or "",
                skip_invalid=data["skip_invalid"],
                created_by=request.user,
            )
        except imports.UploadTooLarge as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        except services.ImportRequestError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        body = serializers.ImportJobSerializer(job, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


def _too_large(request) -> Response | None:
    """Refuse an upload by its declared length before reading it."""
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    limit = settings.IMPORT_MAX_UPLOAD_BYTES
    if declared > limit + 1024 * 1024:  # room for the form's other fields and the multipart framing
        return Response(
            {"detail": f"the upload is {declared:,} bytes; the limit is {limit:,} bytes (IMPORT_MAX_UPLOAD_BYTES)"},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    return None


class ImportJobViewSet(JobActionsMixin, viewsets.ReadOnlyModelViewSet):
    """Imports of uploaded files, as background jobs: progress, the line-by-line report, cancel, restart."""

    permission_classes = [IsResearcherOrAdmin]
    serializer_class = serializers.ImportJobSerializer
    filterset_fields = ["status", "dataset"]
    ordering = ["-created_at", "-id"]

    def get_queryset(self):
        return ImportJob.objects.filter(workspaces.condition(self.request.user)).select_related("created_by", "dataset")

    def job_response(self, job) -> Response:
        return Response(self.get_serializer(job).data)

    @extend_schema(
        summary="The skipped lines of a skip_invalid import, with their reasons (JSONL)",
        responses={
            (200, "application/jsonl"): OpenApiTypes.BINARY,
            404: OpenApiResponse(description="The import skipped no line."),
        },
    )
    @action(detail=True, methods=["get"])
    def rejects(self, request, pk=None):
        path = imports.rejects_file(self.get_object())
        if path is None:
            return Response({"detail": "this import kept no skipped lines"}, status=status.HTTP_404_NOT_FOUND)
        return FileResponse(
            open(path, "rb"),
            as_attachment=True,
            filename=f"import-{pk}-rejects.jsonl",
            content_type="application/jsonl",
        )


class QuestionViewSet(viewsets.ReadOnlyModelViewSet):
    permission_classes = [IsResearcherOrAdmin]
    serializer_class = serializers.QuestionSerializer
    filterset_class = filters.QuestionFilter
    search_fields = ["external_id", "text", "source", "subject"]
    ordering_fields = ["id", "external_id", "created_at", "answer_type", "answer_class", "domain", "source"]
    ordering = ["dataset_id", "id"]

    def get_queryset(self):
        return (
            Question.objects.filter(workspaces.condition(self.request.user, "dataset__workspace"))
            .select_related("dataset")
            .prefetch_related(Prefetch("references", queryset=ReferenceAnswer.objects.filter(is_primary=True)))
            .annotate(completion_count=Count("completions"))
        )


class ReferenceAnswerViewSet(viewsets.ReadOnlyModelViewSet):
    permission_classes = [IsResearcherOrAdmin]
    serializer_class = serializers.ReferenceAnswerSerializer
    filterset_class = filters.ReferenceAnswerFilter
    search_fields = ["final_answer", "solution"]
    ordering_fields = ["id", "question", "created_at"]
    ordering = ["question_id", "-is_primary", "id"]

    def get_queryset(self):
        return ReferenceAnswer.objects.filter(workspaces.condition(self.request.user, "question__dataset__workspace"))


_include_text_parameter = OpenApiParameter(
    "include_text",
    OpenApiTypes.BOOL,
    description="Set to 0 to leave the completion text out of a listing.",
)


@extend_schema_view(
    list=extend_schema(parameters=[_include_text_parameter]),
    retrieve=extend_schema(parameters=[_include_text_parameter]),
)
class CompletionViewSet(viewsets.ReadOnlyModelViewSet):
    permission_classes = [IsResearcherOrAdmin]
    filterset_class = filters.CompletionFilter
    search_fields = ["external_id", "model_name", "text"]
    ordering_fields = ["id", "question", "model_name", "sample_index", "created_at"]
    ordering = ["question_id", "id"]

    def include_text(self) -> bool:
        return self.request.query_params.get("include_text", "1").strip().lower() not in _FALSE_VALUES

    def get_serializer_class(self):
        if getattr(self, "swagger_fake_view", False) or self.include_text():
            return serializers.CompletionSerializer
        return serializers.CompletionLeanSerializer

    def get_queryset(self):
        queryset = Completion.objects.filter(
            workspaces.condition(self.request.user, "question__dataset__workspace")
        ).select_related("question")
        if not getattr(self, "swagger_fake_view", False) and not self.include_text():
            queryset = queryset.defer("text")
        return queryset


class PriorLabelViewSet(viewsets.ReadOnlyModelViewSet):
    """Correctness labels that came inside imported files; labels given in this app live elsewhere."""

    permission_classes = [IsResearcherOrAdmin]
    serializer_class = serializers.PriorLabelSerializer
    filterset_class = filters.PriorLabelFilter
    ordering_fields = ["id", "completion", "imported_at"]
    ordering = ["completion_id", "id"]

    def get_queryset(self):
        visible = workspaces.condition(self.request.user, "completion__question__dataset__workspace")
        return PriorLabel.objects.filter(visible).select_related("completion")
