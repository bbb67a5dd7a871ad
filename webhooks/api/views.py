"""Webhooks over HTTP (researchers and admins): hooks, the events they may hear, their deliveries, send again."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from core.permissions import IsResearcherOrAdmin
from core.serializers import NoBodySerializer

from .. import selectors, services
from ..models import WebhookDelivery
from . import serializers


def _refused(exc: services.WebhookRequestError) -> ValidationError:
    return ValidationError({exc.field or "detail": str(exc)})


@extend_schema_view(
    list=extend_schema(summary="Webhooks, oldest first (filters: project, workspace, is_active)"),
    retrieve=extend_schema(summary="One webhook (its secret is never shown again)"),
    destroy=extend_schema(summary="Delete a webhook with its delivery log"),
)
class WebhookViewSet(viewsets.ModelViewSet):
    """URLs that hear a project's or a workspace's events; each delivery is signed with the hook's secret."""

    permission_classes = [IsResearcherOrAdmin]
    serializer_class = serializers.WebhookSerializer
    filterset_fields = ["project", "workspace", "is_active"]
    ordering_fields = ["id", "created_at"]
    ordering = ["id"]

    def get_queryset(self):
        return selectors.visible_webhooks(self.request.user).select_related("created_by")

    def get_serializer_class(self):
        if self.action in ("update", "partial_update"):
            return serializers.WebhookUpdateSerializer
        return super().get_serializer_class()

    @extend_schema(
        request=serializers.WebhookSerializer,
        responses={201: serializers.WebhookWithSecretSerializer},
        summary="Register a webhook; the answer carries its secret, shown this once",
    )
    def create(self, request, *args, **kwargs):
        given = serializers.WebhookSerializer(data=request.data, context={"request": request})
        given.is_valid(raise_exception=True)
        data = given.validated_data
        try:
            webhook = services.create_webhook(
                project=data.get("project"),
                workspace=data.get("workspace"),
                url=data["url"],
                events=data["events"],
                description=data.get("description", ""),
                created_by=request.user,
            )
        except services.WebhookRequestError as exc:
            raise _refused(exc) from None
        return Response(serializers.WebhookWithSecretSerializer(webhook).data, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Change a webhook's URL, events, description or whether it is active")
    def update(self, request, *args, **kwargs):
        return super().update(request, *args, **kwargs)

    @extend_schema(summary="Change some of a webhook's URL, events, description or whether it is active")
    def partial_update(self, request, *args, **kwargs):
        return super().partial_update(request, *args, **kwargs)

    def perform_update(self, serializer):
        try:
            serializer.instance = services.update_webhook(serializer.instance, **serializer.validated_data)
        except services.WebhookRequestError as exc:
            raise _refused(exc) from None

    @extend_schema(
        request=None,
        responses=serializers.WebhookWithSecretSerializer,
        summary="Replace the webhook's secret; the answer carries the new one, shown this once",
    )
    @action(detail=True, methods=["post"], url_path="rotate-secret", serializer_class=NoBodySerializer)
    def rotate_secret(self, request, pk=None):
        webhook = services.rotate_secret(self.get_object())
        return Response(serializers.WebhookWithSecretSerializer(webhook).data)

    @extend_schema(
        request=None,
        responses={202: serializers.DeliverySerializer},
        summary="Send a test event (webhook.ping) to this webhook alone",
    )
    @action(detail=True, methods=["post"], serializer_class=NoBodySerializer)
    def ping(self, request, pk=None):
        webhook = self.get_object()
        if not webhook.is_active:
            raise ValidationError({"detail": "the webhook is inactive; make it active to send to it"})
        delivery = services.ping(webhook, requested_by=request.user)
        return Response(selectors.delivery_payload(delivery), status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        responses=serializers.DeliverySerializer(many=True),
        summary="The webhook's deliveries, newest first, a page at a time",
    )
    @action(detail=True, methods=["get"], filter_backends=[])
    def deliveries(self, request, pk=None):
        webhook = self.get_object()
        page = self.paginate_queryset(selectors.deliveries(webhook_id=webhook.pk))
        return self.get_paginated_response([selectors.delivery_payload(delivery) for delivery in page])

    @extend_schema(
        responses=serializers.EventSerializer(many=True), summary="The events a webhook may hear, with what they mean"
    )
    @action(detail=False, methods=["get"], filter_backends=[], pagination_class=None)
    def events(self, request):
        return Response([{"name": name, "description": text} for name, text in services.hookable_events().items()])


@extend_schema_view(
    list=extend_schema(
        summary="Deliveries of every webhook, newest first (filters: webhook, project, workspace, status, event)",
        parameters=[
            OpenApiParameter("webhook", int, description="Only this webhook's deliveries"),
            OpenApiParameter("project", int, description="Only deliveries of this project's webhooks"),
            OpenApiParameter("workspace", int, description="Only deliveries of this workspace's own webhooks"),
            OpenApiParameter("status", str, enum=[choice for choice, _ in WebhookDelivery.Status.choices]),
            OpenApiParameter("event", str, description="Only this event"),
        ],
        responses=serializers.DeliverySerializer(many=True),
    ),
    retrieve=extend_schema(
        summary="One delivery with its body and every attempt", responses=serializers.DeliveryDetailSerializer
    ),
)
class WebhookDeliveryViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    permission_classes = [IsResearcherOrAdmin]
    serializer_class = serializers.DeliverySerializer
    filter_backends: list = []  # the filters are read in get_queryset

    def get_queryset(self):
        rows = selectors.visible_deliveries(self.request.user)
        params = self.request.query_params
        fields = (("webhook", "webhook_id"), ("project", "webhook__project_id"), ("workspace", "webhook__workspace_id"))
        for name, field in fields:
            value = params.get(name)
            if value:
                if not (value.isascii() and value.isdigit()) or len(value) > 19:
                    raise ValidationError({name: "give a number"})
                rows = rows.filter(**{field: int(value)})
        if params.get("status"):
            if params["status"] not in WebhookDelivery.Status.values:
                raise ValidationError({"status": f"choose from {', '.join(WebhookDelivery.Status.values)}"})
            rows = rows.filter(status=params["status"])
        if params.get("event"):
            if params["event"] not in [*services.hookable_events(), services.PING]:
                raise ValidationError({"event": "not an event a webhook hears"})
            rows = rows.filter(event=params["event"])
        return rows

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response([selectors.delivery_payload(delivery) for delivery in page])

    def retrieve(self, request, *args, **kwargs):
        delivery = self.get_object()
        return Response(selectors.delivery_payload(delivery, selectors.attempts_of([delivery.pk])[delivery.pk]))

    @extend_schema(
        request=None,
        responses={202: serializers.DeliverySerializer, 400: OpenApiResponse(description="Already being sent.")},
        summary="Send a delivery again: the same body and ids, with its own retries",
    )
    @action(detail=True, methods=["post"], url_path="send-again", serializer_class=NoBodySerializer)
    def send_again(self, request, pk=None):
        try:
            delivery = services.send_again(self.get_object(), requested_by=request.user)
        except services.WebhookRequestError as exc:
            raise _refused(exc) from None
        return Response(selectors.delivery_payload(delivery), status=status.HTTP_202_ACCEPTED)
