"""One API shape for every background job: the common payload, the cancel / resume / restart actions, and
`/api/jobs/`, which lists and acts on jobs of every registered kind.

A kind's own endpoints (e.g. `/api/grading/runs/`, `/api/exports/`) keep their payloads and add the common one under
"job"; their actions come from `JobActionsMixin`, so they refuse and answer alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from core.permissions import IsResearcherOrAdmin
from core.serializers import NoBodySerializer

from . import runner
from .selectors import recent_jobs

ACTIONS = ("cancel", "resume", "restart")
LIST_LIMIT = 200


def _time(value) -> str | None:
    return value.isoformat() if value else None


def job_payload(job) -> dict:
    """What every job says of itself, whatever its kind."""
    kind = runner.kind_of(job)
    done, total = job.progress_done, job.progress_total
    return {
        "kind": kind.name,
        "id": job.pk,
        "title": f"{kind.title} {job.pk}",
        "status": job.status,
        "attempt": job.attempt,
        "progress": {
            "done": done,
            "total": total,
            "fraction": round(done / total, 4) if total else (1.0 if job.status == "succeeded" else 0.0),
        },
        "cancel_requested": job.cancel_requested,
        "error": job.error,
        "created_by": job.created_by.username if job.created_by_id else None,
        "created_at": _time(job.created_at),
        "started_at": _time(job.started_at),
        "heartbeat_at": _time(job.heartbeat_at),
        "finished_at": _time(job.finished_at),
        "actions": {name: runner.can(job, name) for name in ACTIONS},
    }


class JobPayloadSerializer(serializers.Serializer):
    """The common job payload (for the schema)."""

    kind = serializers.CharField()
    id = serializers.IntegerField()
    title = serializers.CharField()
    status = serializers.ChoiceField(choices=["queued", "running", "succeeded", "failed", "cancelled"])
    attempt = serializers.IntegerField()
    progress = serializers.DictField()
    cancel_requested = serializers.BooleanField()
    error = serializers.CharField(allow_blank=True)
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    heartbeat_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    actions = serializers.DictField(child=serializers.BooleanField())


class ForceSerializer(serializers.Serializer):
    force = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Take over a job that looks alive (its worker is known to be gone).",
    )


REFUSED = OpenApiResponse(description="Refused as the job stands (e.g. already ended, or running).")


def act(job, name: str, data) -> object:
    """Carry out one action on a job; raises runner.JobRequestError when it is refused."""
    if name == "cancel":
        return runner.cancel(job)
    given = ForceSerializer(data=data if hasattr(data, "get") else {})
    given.is_valid(raise_exception=True)
    if name == "resume":
        return runner.resume(job, force=given.validated_data["force"])
    return runner.restart(job, force=given.validated_data["force"])


class JobActionsMixin:
    """cancel, resume and restart for a ViewSet of one job kind; `job_response(job)` renders the kind's payload."""

    get_object: Callable[[], Any]  # provided by the GenericViewSet the mixin is used with

    def job_response(self, job) -> Response:
        raise NotImplementedError

    def _act(self, request, name: str) -> Response:
        try:
            job = act(self.get_object(), name, request.data)
        except runner.JobRequestError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return self.job_response(job)

    @extend_schema(
        request=None,
        responses={200: OpenApiTypes.OBJECT, 409: REFUSED},
        summary="Stop a job: at once when queued, at its next check when running",
    )
    @action(detail=True, methods=["post"], serializer_class=NoBodySerializer)
    def cancel(self, request, pk=None):
        return self._act(request, "cancel")

    @extend_schema(
        request=ForceSerializer,
        responses={200: OpenApiTypes.OBJECT, 409: REFUSED},
        summary="Queue a stopped job again; it goes on from what is done where its kind can",
    )
    @action(detail=True, methods=["post"], serializer_class=ForceSerializer)
    def resume(self, request, pk=None):
        return self._act(request, "resume")

    @extend_schema(
        request=ForceSerializer,
        responses={200: OpenApiTypes.OBJECT, 409: REFUSED},
        summary="Run a job again from the start, as a new attempt",
    )
    @action(detail=True, methods=["post"], serializer_class=ForceSerializer)
    def restart(self, request, pk=None):
        return self._act(request, "restart")


class JobViewSet(viewsets.ViewSet):
    """Every background job, whatever its kind: `/api/jobs/` and `/api/jobs/<kind>-<id>/`."""

    permission_classes = [IsResearcherOrAdmin]
    lookup_value_regex = r"[a-z][a-z-]*-[0-9]{1,19}"

    def _job(self, pk: str):
        kind_name, _, number = pk.rpartition("-")
        try:
            kind = runner.get_kind(kind_name)
        except runner.JobRequestError:
            raise NotFound() from None
        job = runner.visible_jobs(kind, self.request.user).filter(pk=int(number)).select_related("created_by").first()
        if job is None:
            raise NotFound()
        return job

    @extend_schema(
        parameters=[
            OpenApiParameter("kind", str, description="Only this kind (verification-run, export, import)."),
            OpenApiParameter("status", str, description="Only jobs in this state."),
        ],
        responses=JobPayloadSerializer(many=True),
        summary=f"Jobs of every kind, newest first (at most {LIST_LIMIT})",
    )
    def list(self, request):
        wanted_kind, wanted_status = request.query_params.get("kind"), request.query_params.get("status")
        jobs = recent_jobs(LIST_LIMIT, wanted_kind or "", wanted_status or "", user=request.user)
        return Response([job_payload(job) for job in jobs])

    @extend_schema(
        responses={200: JobPayloadSerializer, 404: OpenApiResponse(description="No such job.")}, summary="One job"
    )
    def retrieve(self, request, pk=None):
        return Response(job_payload(self._job(pk)))

    def _act(self, request, pk, name):
        try:
            job = act(self._job(pk), name, request.data)
        except runner.JobRequestError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(job_payload(job))

    @extend_schema(request=None, responses={200: JobPayloadSerializer, 409: REFUSED}, summary="Cancel a job")
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        return self._act(request, pk, "cancel")

    @extend_schema(request=ForceSerializer, responses={200: JobPayloadSerializer, 409: REFUSED}, summary="Resume a job")
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        return self._act(request, pk, "resume")

    @extend_schema(
        request=ForceSerializer, responses={200: JobPayloadSerializer, 409: REFUSED}, summary="Restart a job"
    )
    @action(detail=True, methods=["post"])
    def restart(self, request, pk=None):
        return self._act(request, pk, "restart")
