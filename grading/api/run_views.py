"""Verifier configurations, verification runs and selections for annotation (researchers and admins)."""

from __future__ import annotations

from django.db.models import ProtectedError, Q
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.response import Response

from annotation import setup as project_setup
from core import workspaces
from core.jobs.api import JobActionsMixin, job_payload
from core.permissions import IsAdminRole, IsResearcherOrAdmin, SharedOrOwnWorkspace

from .. import runs, selectors
from ..models import AllowedJudgeHost, SelectionRecord, VerifierConfig
from ..selection import selectors as selection_selectors
from ..selection import services as selection_services
from . import run_serializers


class VerifierConfigViewSet(viewsets.ModelViewSet):
    """Rule-based verifiers and LLM judges. A judge names the environment variable holding its API key."""

    serializer_class = run_serializers.VerifierConfigSerializer
    permission_classes = [IsResearcherOrAdmin, SharedOrOwnWorkspace]

    def get_queryset(self):
        visible = workspaces.condition(self.request.user) | Q(workspace__isnull=True)
        return VerifierConfig.objects.filter(visible).select_related("template", "workspace").order_by("name")

    def destroy(self, request, *args, **kwargs):
        try:
            return super().destroy(request, *args, **kwargs)
        except ProtectedError:
            return Response(
                {"detail": "this verifier has verdicts or runs; it cannot be deleted"}, status=status.HTTP_409_CONFLICT
            )


class AllowedJudgeHostViewSet(viewsets.ModelViewSet):
    """Admins only: the endpoints LLM judges may call, and the key variables bound to each. Private addresses only
    when an entry allows them."""

    queryset = AllowedJudgeHost.objects.select_related("created_by").order_by("host", "port", "scheme")
    serializer_class = run_serializers.AllowedJudgeHostSerializer
    permission_classes = [IsAdminRole]

    def perform_create(self, serializer):
        serializer.save(created_by=self.request.user)


class VerificationRunViewSet(JobActionsMixin, viewsets.GenericViewSet):
    """Verification runs: progress, counts by verdict status; cancel, resume (go on) and restart (verify again)."""

    permission_classes = [IsResearcherOrAdmin]
    serializer_class = run_serializers.RunCreateSerializer
    filter_backends: list = []  # the filters are read in get_queryset

    def get_queryset(self):
        user = self.request.user
        queryset = selectors.runs_list().filter(
            workspaces.condition(user, "dataset__workspace") | workspaces.condition(user, "project__dataset__workspace")
        )
        params = self.request.query_params
        if params.get("status"):
            queryset = queryset.filter(status=params["status"])
        for field in ("verifier", "dataset", "project"):
            value = params.get(field)
            if value:
                queryset = queryset.filter(**{f"{field}_id": value}) if value.isdigit() else queryset.none()
        return queryset

    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        operation_id="grading_runs_list",
        summary="Runs, newest first (filters: status, verifier, dataset, project)",
    )
    def list(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response([selectors.run_payload(run) for run in page])

    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        summary='One run with its progress; a cascade\'s run adds per-stage figures under "cascade"',
    )
    def retrieve(self, request, pk=None):
        run = self.get_object()
        return Response(selectors.run_payload(run, cascade=runs.cascade_report(run)))

    @extend_schema(
        request=run_serializers.RunCreateSerializer,
        responses={201: OpenApiTypes.OBJECT},
        summary="Start a verification run over a dataset or a project's completions",
    )
    def create(self, request):
        serializer = run_serializers.RunCreateSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            run = runs.create_run(
                verifier=data["verifier"],
                dataset=data.get("dataset"),
                project=data.get("project"),
                answer_types=data["answer_types"],
                domains=data["domains"],
                models=data["models"],
                chunk_size=data["chunk_size"],
                options=data["options"],
                created_by=request.user,
            )
        except runs.RunRequestError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(selectors.run_payload(run), status=status.HTTP_201_CREATED)

    def job_response(self, run) -> Response:
        return Response(selectors.run_payload(run))


class SelectionViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Selections of completions for annotation, each made into a correctness project with its report."""

    permission_classes = [IsResearcherOrAdmin]
    serializer_class = run_serializers.SelectionCreateSerializer
    filter_backends: list = []

    def get_queryset(self):
        return (
            SelectionRecord.objects.filter(workspaces.condition(self.request.user, "dataset__workspace"))
            .select_related("project", "dataset", "created_by")
            .prefetch_related("verifiers")
            .order_by("-created_at", "-id")
        )

    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        operation_id="grading_selections_list",
        summary="Selections, newest first, without their reports",
    )
    def list(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(
            [selection_selectors.selection_payload(record, with_report=False) for record in page]
        )

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="One selection with its full report")
    def retrieve(self, request, pk=None):
        return Response(selection_selectors.selection_payload(self.get_object()))

    @extend_schema(
        request=run_serializers.SelectionCreateSerializer,
        responses={201: OpenApiTypes.OBJECT},
        summary="Select completions (verifybench or verifybench-hard) and create an annotation project",
    )
    def create(self, request):
        serializer = run_serializers.SelectionCreateSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        project_settings = {key: data.pop(key) for key in ("labels_per_item", "verdict_visibility") if key in data}
        try:
            project, record = selection_services.select_for_annotation(
                created_by=request.user, project_settings=project_settings, **data
            )
        except selection_services.SelectionRequestError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        setup_job = project_setup.active_setup(project)
        return Response(
            {
                "project_id": project.pk,
                "preparing": project.preparing,
                "setup_job": job_payload(setup_job) if setup_job is not None else None,
                **selection_selectors.selection_payload(record),
            },
            status=status.HTTP_201_CREATED,
        )
