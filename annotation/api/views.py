from django.db import transaction
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response

from core import labels, roles, subjects
from core.jobs.api import job_payload
from core.permissions import InResearchersWorkspace, IsResearcherOrAdmin
from core.serializers import NoBodySerializer

from .. import aggregation, selectors, services, setup
from ..models import AnnotationProject, Invitation, Item, ProjectMember, Task
from . import serializers


def invitation_path(token: str) -> str:
    """Where an invitation link opens: the public invitation page (served by the pages)."""
    return reverse("invitation", args=[token])


def _workflow_error(exc: services.WorkflowError) -> Response:
    return Response({"detail": str(exc)}, status=exc.status_code)


def _next_task_body(project, user) -> dict:
    """The annotator's next task, claimed after a submit in the same request (one request per label)."""
    try:
        task = services.next_task(project, user)
    except services.WorkflowError as exc:
        return {"next_task": None, "next_task_detail": str(exc)}
    return {"next_task": selectors.task_payload(task) if task is not None else None}


_PROJECT_AS_SEEN = PolymorphicProxySerializer(
    component_name="ProjectAsSeen",
    serializers={"researcher": serializers.ProjectSerializer, "member": serializers.AnnotatorProjectSerializer},
    resource_type_field_name="seen_as",
)


@extend_schema_view(
    list=extend_schema(
        responses=PolymorphicProxySerializer(
            component_name="ProjectAsSeenList",
            serializers={"researcher": serializers.ProjectSerializer, "member": serializers.AnnotatorProjectSerializer},
            resource_type_field_name="seen_as",
            many=True,
        )
    ),
    retrieve=extend_schema(responses=_PROJECT_AS_SEEN),
    # only a researcher of the project's workspace changes it, and sees it with its settings
    update=extend_schema(request=serializers.ProjectSerializer, responses=serializers.ProjectSerializer),
    partial_update=extend_schema(request=serializers.ProjectSerializer, responses=serializers.ProjectSerializer),
)
class ProjectViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Annotation projects. Researchers create and configure; members see the projects they work on."""

    queryset = AnnotationProject.objects.none()
    ordering_fields = ["id", "name", "created_at"]  # the list's serializer depends on the viewer, so they are named

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return AnnotationProject.objects.none()
        return selectors.projects_for(self.request.user)

    def get_serializer_class(self):
        if self.serializer_class is not None:  # an action's own request serializer, given in @action
            return self.serializer_class
        if self.action in ("list", "retrieve"):
            return serializers.ProjectForViewerSerializer
        if roles.is_researcher(self.request.user):
            return serializers.ProjectSerializer
        return serializers.AnnotatorProjectSerializer

    def get_permissions(self):
        if self.action in (
            "create",
            "update",
            "partial_update",
            "members",
            "remove_member",
            "invitations",
            "revoke_invitation",
            "annotator_model",
        ):
            return [IsResearcherOrAdmin(), InResearchersWorkspace()]
        return super().get_permissions()

    @extend_schema(
        request=serializers.ProjectSerializer,
        responses={202: serializers.ProjectCreatedSerializer},
        summary="Create a project; its items are created by a background job (project-setup)",
        description="Answers 202 at once with the project (`preparing` true: nobody is given work from it yet) and "
        "the job that creates its items, which reports items created / total as its progress. Follow "
        "the job at `/api/jobs/project-setup-<id>/`; when it has succeeded the project has all its "
        "items and `preparing` is false. A cancelled or failed setup created no item; restart it there.",
    )
    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        completion_ids, question_ids = data.pop("completion_ids", None), data.pop("question_ids", None)
        data["subject_ids"] = completion_ids if completion_ids is not None else question_ids
        guidelines = data.pop("guidelines", None)
        try:
            with transaction.atomic():
                project, job = setup.start_project(created_by=request.user, **data)
                if guidelines:
                    project = services.update_project(project, actor=request.user, guidelines=guidelines)
        except services.WorkflowError as exc:
            raise PermissionDenied(str(exc)) if exc.status_code == 403 else ValidationError(str(exc)) from None
        body = {
            "project": serializers.ProjectSerializer(project, context=self.get_serializer_context()).data,
            "job": job_payload(job),
        }
        return Response(
            body, status=status.HTTP_202_ACCEPTED, headers={"Location": f"/api/jobs/project-setup-{job.pk}/"}
        )

    def perform_update(self, serializer):
        """Settings and guidelines change through the same rules and change log as the settings page."""
        data = dict(serializer.validated_data)
        if "dataset" in data and data["dataset"] != serializer.instance.dataset:
            raise ValidationError({"dataset": "the dataset of a project cannot change"})
        for field in ("completion_ids", "question_ids", "seed", "kind", "dataset"):
            data.pop(field, None)
        try:
            serializer.instance = services.update_project(serializer.instance, actor=self.request.user, **data)
        except services.WorkflowError as exc:
            raise ValidationError(str(exc)) from None

    @extend_schema(
        request=None,
        responses={200: OpenApiTypes.OBJECT, 204: None},
        summary="Claim the next item to label (204 when nothing is left for you)",
    )
    @action(detail=True, methods=["post"], url_path="next-task", serializer_class=NoBodySerializer)
    def next_task(self, request, pk=None):
        project = self.get_object()
        try:
            task = services.next_task(project, request.user)
        except services.WorkflowError as exc:
            return _workflow_error(exc)
        if task is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(selectors.task_payload(task))

    @extend_schema(
        request=None,
        responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT},
        summary="The project's annotator model: GET the latest fit (per-annotator estimated accuracy, "
        "overall and per answer type); POST queues a refit (the one queued or running is "
        "returned instead of a second one)",
    )
    @action(detail=True, methods=["get", "post"], url_path="annotator-model", serializer_class=NoBodySerializer)
    def annotator_model(self, request, pk=None):
        project = self.get_object()
        if request.method == "POST":
            try:
                fit = aggregation.request_refit(project, actor=request.user)
            except aggregation.RefitRefused as exc:
                return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
            return Response({"job": job_payload(fit)}, status=status.HTTP_202_ACCEPTED)
        fit = aggregation.latest_fit(project)
        return Response(
            {
                "aggregation": project.aggregation,
                "adaptive_redundancy": project.adaptive_redundancy,
                "fit": None
                if fit is None
                else {"job": job_payload(fit), "labels_seen": fit.labels_seen, "summary": fit.summary},
            }
        )

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="Counts by state, agreement figures, per-annotator table")
    @action(detail=True, methods=["get"])
    def progress(self, request, pk=None):
        project = self.get_object()
        if selectors.can_review(project, request.user):
            return Response(selectors.progress(project))
        return Response(
            {"project": {"id": project.pk, "name": project.name}, **selectors.my_progress(project, request.user)}
        )

    @extend_schema(responses=serializers.ConflictSerializer(many=True), summary="Items that need adjudication")
    @action(detail=True, methods=["get"])
    def conflicts(self, request, pk=None):
        project = self.get_object()
        if not selectors.can_adjudicate(project, request.user):
            raise PermissionDenied("only adjudicators see conflicts")
        page = self.paginate_queryset(selectors.conflicts(project))
        context = {"summaries": selectors.summaries(page)}
        return self.get_paginated_response(serializers.ConflictSerializer(page, many=True, context=context).data)

    @extend_schema(
        parameters=[
            OpenApiParameter(name, description=description)
            for name, description in (
                ("state", "pending, in_progress, needs_tiebreak, needs_adjudication, resolved or excluded"),
                ("resolution", "agreement, majority, adjudication or override"),
                ("disagreement", "yes: the labels disagreed (a tie-break or adjudication was asked for); no"),
                ("model", "completions of this model"),
                ("answer_type", "an answer type code, e.g. A1"),
                ("verifier", "a verifier configuration id (with verdict: its verdict)"),
                ("verdict", "correct, incorrect or inconclusive"),
                ("annotator", "labeled by this user id"),
                ("gold", "yes or no"),
                ("q", "a search in the question and completion (or proof) text"),
                ("sort", ", ".join(selectors.SORTS)),
                ("after", "a page key: the page after it"),
                ("before", "a page key: the page before it"),
                ("page_size", f"rows per page, at most {selectors.MAX_PAGE_SIZE}"),
            )
        ],
        responses=serializers.ItemPageSerializer,
        summary="Researchers and adjudicators: the project's items, filtered, sorted, a page at a time (keyset)",
    )
    @action(detail=True, methods=["get"], url_path="items")
    def items(self, request, pk=None):
        project = self.get_object()
        if not selectors.can_review(project, request.user):
            raise PermissionDenied("only researchers and the project's adjudicators browse its items")
        params = request.query_params
        try:
            page_size = int(params.get("page_size") or selectors.DEFAULT_PAGE_SIZE)
            page = selectors.browse_items(
                project,
                selectors.filter_for(project, request.user, params),
                sort=params.get("sort") or "id",
                after=params.get("after", ""),
                before=params.get("before", ""),
                page_size=page_size,
            )
        except ValueError as exc:  # InvalidFilter, or a page size that is not a number
            raise ValidationError({"detail": str(exc)}) from None

        def link(key_name, key):
            if key is None:
                return None
            query = params.copy()
            for name in ("after", "before"):
                query.pop(name, None)
            query[key_name] = key
            return request.build_absolute_uri(f"{request.path}?{query.urlencode()}")

        return Response(
            {
                "next": link("after", page.next_key),
                "previous": link("before", page.previous_key),
                "results": serializers.ItemRowSerializer(selectors.browse_rows(page.items), many=True).data,
            }
        )

    @extend_schema(
        request=serializers.BulkActionSerializer,
        responses=OpenApiTypes.OBJECT,
        summary="Researchers: exclude, re-open, mark gold or re-prioritise chosen items or all matching "
        f"a filter (at most {services.BULK_LIMIT:,})",
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="items/bulk",
        permission_classes=[IsResearcherOrAdmin, InResearchersWorkspace],
    )
    def bulk(self, request, pk=None):
        project = self.get_object()
        serializer = serializers.BulkActionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            if data["all_matching"]:
                items = selectors.filtered_items(project, data["item_filter"])
            else:
                items = Item.objects.filter(project=project, pk__in=data["item_ids"])
            result = services.bulk_apply(
                project,
                items,
                data["action"],
                actor=request.user,
                rationale=data["rationale"],
                value=data.get("value"),
                change=data["change"],
            )
        except selectors.InvalidFilter as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        except services.WorkflowError as exc:
            return _workflow_error(exc)
        return Response(result.as_dict())

    @extend_schema(
        request=serializers.MemberSerializer,
        responses=serializers.MemberSerializer(many=True),
        parameters=[OpenApiParameter("include_removed", bool, description="List removed members too")],
        summary="List or add project members (annotators, adjudicators with that role)",
    )
    @action(
        detail=True,
        methods=["get", "post"],
        serializer_class=serializers.MemberSerializer,
        filter_backends=[],
        pagination_class=None,
    )
    def members(self, request, pk=None):
        project = self.get_object()
        if request.method == "POST":
            serializer = serializers.MemberSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            try:
                services.add_member(
                    project, serializer.validated_data["user"], serializer.validated_data["role"], actor=request.user
                )
            except services.WorkflowError as exc:
                return _workflow_error(exc)
        members = ProjectMember.objects.filter(project=project).select_related("user")
        if request.query_params.get("include_removed") not in ("1", "true", "yes"):
            members = members.filter(is_active=True)
        members = members.order_by("-is_active", "role", "user__username")
        context = {"label_counts": selectors.label_counts(project)}
        return Response(serializers.MemberSerializer(members, many=True, context=context).data)

    @extend_schema(
        request=None,
        responses={204: None},
        summary="Remove a member: no new tasks, live leases end, their labels stay and count",
    )
    @action(detail=True, methods=["delete"], url_path=r"members/(?P<member_id>[0-9]{1,19})", url_name="member-detail")
    def remove_member(self, request, pk=None, member_id=None):
        project = self.get_object()
        member = get_object_or_404(ProjectMember, pk=member_id, project=project)
        try:
            services.remove_member(member, actor=request.user)
        except services.WorkflowError as exc:
            return _workflow_error(exc)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        request=serializers.InvitationSerializer,
        responses={200: serializers.InvitationSerializer(many=True), 201: OpenApiTypes.OBJECT},
        summary="List the project's invitation links, or create one (its link is in the answer, once)",
    )
    @action(
        detail=True,
        methods=["get", "post"],
        serializer_class=serializers.InvitationSerializer,
        filter_backends=[],
        pagination_class=None,
    )
    def invitations(self, request, pk=None):
        project = self.get_object()
        if request.method == "POST":
            serializer = serializers.InvitationSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            try:
                invitation, token = services.create_invitation(
                    project,
                    role=serializer.validated_data.get("role", ProjectMember.Role.ANNOTATOR),
                    days=serializer.validated_data["days"],
                    actor=request.user,
                )
            except services.WorkflowError as exc:
                return _workflow_error(exc)
            body = {
                **serializers.InvitationSerializer(invitation).data,
                "token": token,
                "url": request.build_absolute_uri(invitation_path(token)),
            }
            return Response(body, status=status.HTTP_201_CREATED)
        rows = Invitation.objects.filter(project=project).select_related("created_by", "used_by", "account")
        return Response(serializers.InvitationSerializer(rows.order_by("-created_at", "-id"), many=True).data)

    @extend_schema(
        request=None,
        responses=serializers.InvitationSerializer,
        summary="Revoke an open invitation link (the row stays, marked revoked)",
    )
    @action(
        detail=True,
        methods=["delete"],
        url_path=r"invitations/(?P<invitation_id>[0-9]{1,19})",
        url_name="invitation-detail",
    )
    def revoke_invitation(self, request, pk=None, invitation_id=None):
        project = self.get_object()
        invitation = get_object_or_404(Invitation, pk=invitation_id, project=project)
        try:
            invitation = services.revoke_invitation(invitation, actor=request.user)
        except services.WorkflowError as exc:
            return _workflow_error(exc)
        return Response(serializers.InvitationSerializer(invitation).data)

    @extend_schema(
        request=serializers.GoldSerializer,
        responses=OpenApiTypes.OBJECT,
        summary="Mark an item as gold with its known answer",
    )
    @action(
        detail=True,
        methods=["post"],
        permission_classes=[IsResearcherOrAdmin, InResearchersWorkspace],
        serializer_class=serializers.GoldSerializer,
    )
    def gold(self, request, pk=None):
        project = self.get_object()
        serializer = serializers.GoldSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        item = get_object_or_404(Item, pk=serializer.validated_data["item_id"], project=project)
        try:
            item = services.mark_gold(project, item, serializer.validated_data["value"], actor=request.user)
        except (services.WorkflowError, labels.InvalidValue) as exc:
            return Response({"detail": str(exc)}, status=getattr(exc, "status_code", 400))
        return Response({"item_id": item.pk, "is_gold": True, "gold_value": item.gold_value})


class TaskViewSet(viewsets.GenericViewSet):
    """An annotator's own tasks. Anyone else's task is a 404."""

    queryset = Task.objects.none()
    filter_backends: list = []

    def get_task(self, pk):
        task = selectors.own_task(self.request.user, pk)
        if task is None:
            raise NotFound()
        return task

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="One of your tasks")
    def retrieve(self, request, pk=None):
        return Response(selectors.task_payload(self.get_task(pk)))

    @extend_schema(
        request=serializers.SubmitSerializer,
        responses={200: OpenApiTypes.OBJECT, 201: OpenApiTypes.OBJECT},
        summary="Submit your label (201; 200 when it repeats one already stored); with `next` the answer also "
        "carries your next task, claimed in the same request",
    )
    @action(detail=True, methods=["post"], serializer_class=serializers.SubmitSerializer)
    def submit(self, request, pk=None):
        task = selectors.own_task_to_submit(request.user, pk)
        if task is None:
            raise NotFound()
        elsewhere = subjects.get(task.project_kind).submit_elsewhere
        if elsewhere and not request.data.get("unsuitable"):
            return Response({"detail": elsewhere.format(task_id=task.pk)}, status=status.HTTP_400_BAD_REQUEST)
        serializer = serializers.SubmitSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        fields = dict(serializer.validated_data)
        claim_next = fields.pop("next")
        try:
            result = services.submit_label(task, request.user, **fields)
        except services.WorkflowError as exc:
            return _workflow_error(exc)
        body = {"task_id": task.pk, "label": selectors.label_dict(result.label, with_annotator=False)}
        if claim_next:
            body.update(_next_task_body(result.item.project, request.user))
        return Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)

    @extend_schema(request=None, responses=OpenApiTypes.OBJECT, summary="Release the task at once")
    @action(detail=True, methods=["post"], serializer_class=NoBodySerializer)
    def skip(self, request, pk=None):
        try:
            task = services.skip_task(self.get_task(pk), request.user)
        except services.WorkflowError as exc:
            return _workflow_error(exc)
        return Response({"task_id": task.pk, "status": task.status})


class ItemViewSet(viewsets.GenericViewSet):
    """Items for adjudicators and researchers: labels side by side, history, decisions."""

    queryset = Item.objects.select_related("project")
    filter_backends: list = []

    def get_item(self, pk, *, need_adjudicator=False):
        item = self.get_queryset().filter(pk=pk).first()
        if item is None or not selectors.can_review(item.project, self.request.user):
            raise NotFound()
        if need_adjudicator and not selectors.can_adjudicate(item.project, self.request.user):
            raise PermissionDenied("only adjudicators of this project can decide")
        return item

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="An item with every label, note and verdict")
    def retrieve(self, request, pk=None):
        return Response(selectors.item_review(self.get_item(pk)))

    @extend_schema(
        responses={200: {"type": "array", "items": {"type": "object", "additionalProperties": True}}},
        summary="The append-only history of an item",
    )
    @action(detail=True, methods=["get"])
    def history(self, request, pk=None):
        return Response(selectors.history(self.get_item(pk)))

    @extend_schema(
        request=serializers.DecisionSerializer,
        responses=OpenApiTypes.OBJECT,
        summary="Decide an item that needs adjudication, with a rationale",
    )
    @action(detail=True, methods=["post"], serializer_class=serializers.DecisionSerializer)
    def adjudicate(self, request, pk=None):
        item = self.get_item(pk, need_adjudicator=True)
        serializer = serializers.DecisionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            item = services.adjudicate(item, request.user, **serializer.validated_data)
        except services.WorkflowError as exc:
            return _workflow_error(exc)
        return Response(selectors.item_review(item))

    @extend_schema(
        request=serializers.DecisionSerializer,
        responses=OpenApiTypes.OBJECT,
        summary="Admins: override a final label, with a rationale",
    )
    @action(detail=True, methods=["post"], serializer_class=serializers.DecisionSerializer)
    def override(self, request, pk=None):
        item = self.get_item(pk)
        serializer = serializers.DecisionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            item = services.override(item, request.user, **serializer.validated_data)
        except services.WorkflowError as exc:
            return _workflow_error(exc)
        return Response(selectors.item_review(item))
