"""Proof-grading endpoints: grade a task against its rubric, rubric versions, proof projects, decisions,
competition leaderboards (JSON or CSV)."""

from __future__ import annotations

from django.db.models import Q
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response

from annotation import selectors as annotation_selectors
from annotation import services as annotation_services
from annotation.models import Item, Task
from core import workspaces
from core.permissions import IsResearcherOrAdmin

from ..models import Competition, Rubric
from ..proofs import selectors as proof_selectors
from ..proofs import services as proof_services
from ..proofs.subject import PROOF_GRADE
from . import serializers


class CSVRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, str):
            return data.encode(self.charset)
        return str(data).encode(self.charset)


def _error(exc: annotation_services.WorkflowError) -> Response:
    body = {"detail": str(exc)}
    if isinstance(exc, proof_services.ProofGradingError):
        body["errors"] = exc.errors
    return Response(body, status=exc.status_code)


class ProofTaskViewSet(viewsets.GenericViewSet):
    """A grader's own proof tasks; anyone else's task is a 404."""

    queryset = Task.objects.none()  # tasks are found through get_task; this types the schema's {id}
    filter_backends: list = []

    def get_task(self, pk):
        task = proof_selectors.own_proof_task(self.request.user, pk)
        if task is None:
            raise NotFound()
        return task

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="One of your proof tasks: problem, rubric, anonymous proof")
    def retrieve(self, request, pk=None):
        return Response(annotation_selectors.task_payload(self.get_task(pk)))

    @extend_schema(
        request=serializers.GradeSerializer,
        responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT},
        summary="Grade a proof against its rubric; the server computes the score (400 lists every error)",
    )
    @action(detail=True, methods=["post"], serializer_class=serializers.GradeSerializer)
    def grade(self, request, pk=None):
        task = self.get_task(pk)
        if "score" in request.data or "value" in request.data or "total" in request.data:
            return Response(
                {
                    "detail": "the score is computed from your rubric choices; do not send a total",
                    "errors": ["send chain, awarded, deductions and justifications, not a total"],
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        serializer = serializers.GradeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            result = proof_services.grade_task(
                task,
                request.user,
                chain=data["chain"],
                awarded=data["awarded"],
                deductions=data["deductions"],
                justifications=data["justifications"],
                note=data["note"],
                rubric_id=data["rubric"],
                seconds_spent=data["seconds_spent"],
            )
        except annotation_services.WorkflowError as exc:
            return _error(exc)
        body = {
            "task_id": task.pk,
            "score": result.score.total,
            "chain_total": result.score.chain_total,
            "max_points": result.label.details["max_points"],
            "breakdown": result.label.details["breakdown"],
            "deductions": result.label.details["deductions"],
            "rubric": {"id": result.rubric.pk, "version": result.rubric.version},
            "item_state": result.item.state,
        }
        return Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


class RubricViewSet(mixins.RetrieveModelMixin, mixins.ListModelMixin, viewsets.GenericViewSet):
    """Rubric versions. Researchers write them; a version that grades use never changes (a new one is made)."""

    queryset = Rubric.objects.select_related("problem").order_by("problem_id", "-version")
    serializer_class = serializers.RubricWriteSerializer
    filter_backends: list = []  # `?problem=` is read in get_queryset

    def get_permissions(self):
        if self.action in ("create", "revise", "list"):
            return [IsResearcherOrAdmin()]
        return super().get_permissions()

    def get_queryset(self):
        rubrics = super().get_queryset()
        user = self.request.user
        if self.action == "retrieve":  # a grader reads the rubrics of the projects they grade in, no others
            graded = Q(pk__in=proof_selectors.visible_rubrics(user).values("pk"))
            rubrics = rubrics.filter(graded | workspaces.condition(user, "problem__competition__dataset__workspace"))
        else:
            rubrics = rubrics.filter(workspaces.condition(user, "problem__competition__dataset__workspace"))
        problem = self.request.query_params.get("problem")
        if problem and problem.isdigit():
            rubrics = rubrics.filter(problem_id=int(problem))
        return rubrics

    @extend_schema(responses=serializers.RubricSerializer(many=True), summary="Rubric versions")
    def list(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response([proof_selectors.rubric_dict(rubric) for rubric in page])

    @extend_schema(responses=serializers.RubricSerializer, summary="One rubric version")
    def retrieve(self, request, pk=None):
        return Response(proof_selectors.rubric_dict(self.get_object()))

    def _save(self, problem, spec, *, created_status):
        try:
            rubric = proof_services.save_rubric(problem, spec, created_by=self.request.user)
        except proof_services.ProofGradingError as exc:
            return _error(exc)
        return Response(proof_selectors.rubric_dict(rubric), status=created_status)

    @extend_schema(
        request=serializers.RubricWriteSerializer,
        responses={201: serializers.RubricSerializer},
        summary="Save a problem's rubric (edits the latest version while unused, else a new version)",
    )
    def create(self, request):
        serializer = serializers.RubricWriteSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        return self._save(
            serializer.validated_data["problem"],
            serializer.validated_data["spec"],
            created_status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        request=serializers.RubricReviseSerializer,
        responses={201: serializers.RubricSerializer},
        summary="Save an edit of this rubric's problem rubric as a new version when this one is in use",
    )
    @action(detail=True, methods=["post"], serializer_class=serializers.RubricReviseSerializer)
    def revise(self, request, pk=None):
        rubric = self.get_object()
        serializer = serializers.RubricReviseSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return self._save(rubric.problem, serializer.validated_data["spec"], created_status=status.HTTP_201_CREATED)


class CompetitionViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet
):
    """Competitions, their proof-grading projects and leaderboards (researchers)."""

    serializer_class = serializers.CompetitionSerializer
    permission_classes = [IsResearcherOrAdmin]

    def get_queryset(self):
        return Competition.objects.filter(workspaces.condition(self.request.user, "dataset__workspace")).order_by(
            "-date", "name"
        )

    def perform_create(self, serializer):
        data = serializer.validated_data
        existing = Competition.objects.filter(name=data["name"].strip()).select_related("dataset").first()
        if existing is not None and not workspaces.can_research(self.request.user, existing.dataset.workspace_id):
            raise ValidationError({"name": "that competition name is taken by another workspace; choose another"})
        competition = proof_services.get_or_create_competition(
            data["name"], date=data.get("date"), created_by=self.request.user, workspace=data["workspace"]
        )
        if data.get("description"):
            competition.description = data["description"]
            competition.save(update_fields=["description"])
        serializer.instance = competition

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["json", "csv"], description="csv: one row per model")],
        responses={200: OpenApiTypes.OBJECT},
        summary="Per-model mean % with 95% bootstrap CI over problems",
    )
    @action(detail=True, methods=["get"], renderer_classes=[JSONRenderer, CSVRenderer])
    def leaderboard(self, request, pk=None):
        competition = self.get_object()
        board = proof_selectors.competition_leaderboard(competition)
        if request.accepted_renderer.format == "csv":
            response = Response(proof_selectors.leaderboard_csv_text(board), content_type="text/csv; charset=utf-8")
            slug = "".join(ch if ch.isalnum() else "-" for ch in competition.name).strip("-").lower()
            response["Content-Disposition"] = f'attachment; filename="{slug or "competition"}-leaderboard.csv"'
            return response
        return Response(
            {
                "competition": {
                    "id": competition.pk,
                    "name": competition.name,
                    "date": competition.date.isoformat() if competition.date else None,
                },
                **board.as_dict(),
            }
        )

    @extend_schema(
        request=serializers.ProofProjectSerializer,
        responses={201: OpenApiTypes.OBJECT},
        summary="Create a proof-grading project with one item per submission",
    )
    @action(detail=True, methods=["post"], url_path="projects", serializer_class=serializers.ProofProjectSerializer)
    def create_project(self, request, pk=None):
        competition = self.get_object()
        payload = request.data.copy()
        payload["competition"] = competition.pk
        serializer = serializers.ProofProjectSerializer(data=payload)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            project = proof_services.create_proof_project(
                name=data["name"],
                competition=competition,
                problems=data.get("problems") or None,
                threshold=data["threshold"],
                created_by=request.user,
            )
        except proof_services.ProofGradingError as exc:
            return _error(exc)
        return Response(
            {
                "id": project.pk,
                "name": project.name,
                "kind": project.kind,
                "agreement_threshold": project.agreement_threshold,
                "items": project.items.count(),
            },
            status=status.HTTP_201_CREATED,
        )


class ProofItemViewSet(viewsets.GenericViewSet):
    """Proof items for adjudicators: grades side by side, and the final score with a rationale."""

    queryset = Item.objects.select_related("project").filter(project__kind=PROOF_GRADE)
    filter_backends: list = []

    def get_item(self, pk, *, need_adjudicator=False) -> Item:
        item = self.get_queryset().filter(pk=pk).first()
        if item is None or not annotation_selectors.can_review(item.project, self.request.user):
            raise NotFound()
        if need_adjudicator and not annotation_selectors.can_adjudicate(item.project, self.request.user):
            raise PermissionDenied("only adjudicators of this project can decide")
        return item

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="A proof item with every grade and justification")
    def retrieve(self, request, pk=None):
        return Response(annotation_selectors.item_review(self.get_item(pk)))

    @extend_schema(
        request=serializers.DecisionSerializer,
        responses=OpenApiTypes.OBJECT,
        summary="Set the final score of a proof that needs adjudication, with a rationale",
    )
    @action(detail=True, methods=["post"], serializer_class=serializers.DecisionSerializer)
    def decide(self, request, pk=None):
        item = self.get_item(pk, need_adjudicator=True)
        serializer = serializers.DecisionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            item = proof_services.decide_proof(
                item,
                request.user,
                score=serializer.validated_data["score"],
                rationale=serializer.validated_data["rationale"],
            )
        except annotation_services.WorkflowError as exc:
            return _error(exc)
        return Response(annotation_selectors.item_review(get_object_or_404(self.get_queryset(), pk=item.pk)))
