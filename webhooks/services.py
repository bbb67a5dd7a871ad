"""Webhooks: saving hooks (their URL checked against the egress allow-list), turning events into deliveries, and
sending one attempt of a delivery.

An event becomes one `WebhookDelivery` per hook that hears it, written when the event is published (after the
change it reports has committed), and the first attempt is queued once that row has committed. Each attempt is made
by the Celery task `webhooks.deliver` (webhooks.tasks): it claims the delivery with its token, checks the addresses
the endpoint resolves to, posts the signed body, records the attempt, and either finishes the delivery or queues the
next attempt after a backoff (`WEBHOOK_RETRY_BASE_SECONDS` doubled each time, at most
`WEBHOOK_RETRY_MAX_SECONDS`), up to `WEBHOOK_MAX_ATTEMPTS`. A refused endpoint is not retried: the allow-list has to
change first. `send_again` queues a finished delivery once more (the same body, event id and delivery id).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx2
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.models import AnnotationProject
from core import events
from core.models import Workspace
from verifybench.models import Dataset

from . import egress, signing
from .models import Webhook, WebhookAttempt, WebhookDelivery

logger = logging.getLogger(__name__)

PING = events.declare("webhook.ping", "A test delivery sent on request, to check a receiver")
USER_AGENT = "mathlabel-webhooks"
RESPONSE_EXCERPT_CHARS = 1000


class WebhookRequestError(ValueError):
    """A hook or a delivery request that cannot be carried out; the message says why, `field` what it is about."""

    def __init__(self, message: str, field: str = ""):
        super().__init__(message)
        self.field = field


# -- hooks ------------------------------------------------------------------------------------------------------------


def hookable_events() -> dict[str, str]:
    """The events a hook may hear, with what each means (the ping is sent on request only)."""
    return {name: text for name, text in events.declared().items() if name != PING and not name.startswith("test.")}


def clean_events(names: Sequence[str]) -> list[str]:
    known = hookable_events()
    chosen = list(dict.fromkeys(str(name) for name in names))
    if not chosen:
        raise WebhookRequestError("choose at least one event", "events")
    unknown = [name for name in chosen if name not in known]
    if unknown:
        raise WebhookRequestError(f"unknown event {unknown[0]!r}; choose from {', '.join(known)}", "events")
    return [name for name in known if name in chosen]


def clean_url(url: str) -> str:
    url = (url or "").strip()
    if not url:
        raise WebhookRequestError("give the URL to send to", "url")
    try:
        egress.check_endpoint(url, addresses=False)
    except egress.EgressRefused as refused:
        raise WebhookRequestError(str(refused), "url") from None
    return url


def create_webhook(
    *,
    project: AnnotationProject | None = None,
    workspace: Workspace | None = None,
    url: str,
    events: Sequence[str],
    description: str = "",
    created_by=None,
) -> Webhook:
    """A new hook of a project or of a workspace (exactly one) with a fresh secret (the caller shows it once)."""
    if project is None and workspace is None:
        raise WebhookRequestError("give the project or the workspace whose events the hook hears", "project")
    if project is not None and workspace is not None:
        raise WebhookRequestError("give a project or a workspace, not both", "workspace")
    return Webhook.objects.create(
        project=project,
        workspace=workspace,
        url=clean_url(url),
        events=clean_events(events),
        description=(description or "").strip()[:500],
        secret=signing.new_secret(),
        created_by=created_by,
    )


def update_webhook(webhook: Webhook, **changes: Any) -> Webhook:
    """Change a hook's URL, events, description or whether it is active; the URL is checked again."""
    allowed = {"url", "events", "description", "is_active"}
    unknown = set(changes) - allowed
    if unknown:
        raise WebhookRequestError(f"not a webhook setting: {', '.join(sorted(unknown))}", sorted(unknown)[0])
    if "url" in changes:
        webhook.url = clean_url(changes["url"])
    if "events" in changes:
        webhook.events = clean_events(changes["events"])
    if "description" in changes:
        webhook.description = (changes["description"] or "").strip()[:500]
    if "is_active" in changes:
        webhook.is_active = bool(changes["is_active"])
    webhook.save()
    return webhook


def rotate_secret(webhook: Webhook) -> Webhook:
    """A new secret; deliveries from now on are signed with it (attempts already under way use the new one too)."""
    webhook.secret = signing.new_secret()
    webhook.save(update_fields=["secret", "updated_at"])
    return webhook


# -- deliveries -------------------------------------------------------------------------------------------------------


def workspace_of(event: events.Event) -> int | None:
    """The workspace an event concerns: the one it names, else its dataset's, else its project's dataset's."""
    if event.workspace_id is not None:
        return event.workspace_id
    if event.dataset_id is not None:
        return Dataset.objects.filter(pk=event.dataset_id).values_list("workspace_id", flat=True).first()
    if event.project_id is not None:
        found = AnnotationProject.objects.filter(pk=event.project_id).values_list("dataset__workspace_id", flat=True)
        return found.first()
    return None


def hooks_for(event: events.Event, workspace_id: int | None = None) -> list[Webhook]:
    """Active hooks that hear this event: of its project, or, for an event of no project, of its dataset's projects;
    and those of its workspace (`workspace_id`, found from the event when not given)."""
    if workspace_id is None:
        workspace_id = workspace_of(event)
    if event.project_id is not None:
        scope = Q(project_id=event.project_id)
    elif event.dataset_id is not None:
        scope = Q(project__dataset_id=event.dataset_id)
    else:
        scope = Q(pk__in=[])
    if workspace_id is not None:
        scope |= Q(workspace_id=workspace_id)
    hooks = Webhook.objects.filter(scope, is_active=True).order_by("id")
    return [hook for hook in hooks if event.name in hook.events]


def delivery_body(event: events.Event, webhook: Webhook, workspace_id: int | None = None) -> str:
    return json.dumps(
        {
            "id": event.id,
            "event": event.name,
            "occurred_at": event.occurred_at,
            "webhook": webhook.pk,
            "workspace": workspace_id if workspace_id is not None else webhook.workspace_id,
            "project": event.project_id if event.project_id is not None else webhook.project_id,
            "dataset": event.dataset_id,
            "data": event.data,
        },
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )


def record_deliveries(event: events.Event) -> list[WebhookDelivery]:
    """The core.events subscriber: one delivery per hook that hears the event, its first attempt queued."""
    workspace_id = workspace_of(event)
    hooks = hooks_for(event, workspace_id)
    if not hooks:
        return []
    with transaction.atomic():
        deliveries = [_new_delivery(event, hook, workspace_id) for hook in hooks]
    return deliveries


def _new_delivery(event: events.Event, hook: Webhook, workspace_id: int | None) -> WebhookDelivery:
    delivery = WebhookDelivery.objects.create(
        webhook=hook,
        event=event.name,
        event_id=event.id,
        body=delivery_body(event, hook, workspace_id),
        claim_token=uuid.uuid4().hex,
        next_attempt_at=timezone.now(),
    )
    _queue(delivery, WebhookAttempt.Trigger.EVENT)
    return delivery


def ping(webhook: Webhook, *, requested_by=None) -> WebhookDelivery:
    """Send a test event to this hook alone, whatever events it hears."""
    project = webhook.project
    workspace_id = webhook.workspace_id if project is None else project.dataset.workspace_id
    event = events.Event(
        name=PING,
        data={"message": "a test delivery", "requested_by": requested_by.get_username() if requested_by else None},
        project_id=webhook.project_id,
        dataset_id=project.dataset_id if project is not None else None,
        workspace_id=workspace_id,
    )
    with transaction.atomic():
        return _new_delivery(event, webhook, workspace_id)


def send_again(delivery: WebhookDelivery, *, requested_by=None) -> WebhookDelivery:
    """Queue one more attempt of a finished delivery (the same body and ids), with its own retries."""
    with transaction.atomic():
        delivery = WebhookDelivery.objects.select_for_update().select_related("webhook").get(pk=delivery.pk)
        if delivery.status in (WebhookDelivery.Status.PENDING, WebhookDelivery.Status.SENDING):
            raise WebhookRequestError(f"delivery {delivery.pk} is already being sent; wait for it to end")
        if not delivery.webhook.is_active:
            raise WebhookRequestError("the webhook is inactive; make it active to send again")
        delivery.status, delivery.claim_token = WebhookDelivery.Status.PENDING, uuid.uuid4().hex
        delivery.next_attempt_at, delivery.claimed_at = timezone.now(), None
        delivery.save(update_fields=["status", "claim_token", "next_attempt_at", "claimed_at"])
        _queue(delivery, WebhookAttempt.Trigger.MANUAL, requested_by_id=requested_by.pk if requested_by else None)
    return delivery


Dispatcher = Callable[..., None]
_dispatch: list[Dispatcher] = []


def set_dispatcher(dispatch: Dispatcher) -> None:
    """How an attempt reaches a worker: `dispatch(delivery_id, token, trigger, requested_by_id, countdown)`;
    webhooks.tasks sets the Celery one."""
    _dispatch[:] = [dispatch]


def _queue(
    delivery: WebhookDelivery, trigger: str, *, requested_by_id: int | None = None, countdown: float = 0.0
) -> None:
    if not _dispatch:
        raise RuntimeError("no webhook dispatcher is set; webhooks.tasks sets it when loaded")
    dispatch, arguments = _dispatch[0], (delivery.pk, delivery.claim_token, str(trigger), requested_by_id, countdown)
    transaction.on_commit(lambda: dispatch(*arguments))


def backoff_seconds(attempts_made: int) -> float:
    """The wait before attempt `attempts_made + 1`: the base, doubled after each failed attempt, capped."""
    base = float(settings.WEBHOOK_RETRY_BASE_SECONDS)
    return min(base * 2 ** max(0, attempts_made - 1), float(settings.WEBHOOK_RETRY_MAX_SECONDS))


def _claim(delivery_id: int, token: str) -> WebhookDelivery | None:
    """Take the delivery for one attempt if `token` is the current one and nobody is sending it (or whoever was has
    been silent for longer than a request can take)."""
    now = timezone.now()
    stale = now - timedelta(seconds=float(settings.WEBHOOK_TIMEOUT_SECONDS) * 2 + 60)
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update()
            .select_related("webhook")
            .filter(pk=delivery_id, claim_token=token)
            .first()
        )
        if delivery is None:
            return None
        sending_abandoned = delivery.status == WebhookDelivery.Status.SENDING and (
            delivery.claimed_at is None or delivery.claimed_at < stale
        )
        if delivery.status != WebhookDelivery.Status.PENDING and not sending_abandoned:
            return None
        delivery.status, delivery.claimed_at = WebhookDelivery.Status.SENDING, now
        delivery.save(update_fields=["status", "claimed_at"])
    return delivery


class _GuardedTransport(httpx2.HTTPTransport):
    """Checks the addresses the endpoint resolves to just before the request goes out, and sends it to the address
    that was checked (the name stays in the Host header and in TLS)."""

    def handle_request(self, request):
        address = egress.check_endpoint(str(request.url), addresses=True)
        host = request.url.host
        if address and address != host:
            request.url = request.url.copy_with(host=address)
            request.extensions = {**request.extensions, "sni_hostname": host}
        return super().handle_request(request)


@dataclass(frozen=True)
class AttemptOutcome:
    status_code: int | None = None
    error: str = ""
    response_excerpt: str = ""
    retry: bool = True

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def _post(webhook: Webhook, delivery: WebhookDelivery, number: int) -> AttemptOutcome:
    body = delivery.body.encode()
    headers = signing.signed_headers(
        webhook.secret,
        body,
        event=delivery.event,
        event_id=delivery.event_id,
        delivery_id=delivery.pk,
        attempt=number,
    )
    headers["User-Agent"] = USER_AGENT
    try:
        egress.check_endpoint(webhook.url, addresses=False)
        with httpx2.Client(
            transport=_GuardedTransport(), timeout=float(settings.WEBHOOK_TIMEOUT_SECONDS), follow_redirects=False
        ) as client:
            response = client.post(webhook.url, content=body, headers=headers)
    except egress.EgressRefused as refused:
        return AttemptOutcome(error=f"refused: {refused}", retry=False)
    except httpx2.HTTPError as error:
        return AttemptOutcome(error=f"{type(error).__name__}: {error}"[:2000] or type(error).__name__)
    excerpt = response.text[:RESPONSE_EXCERPT_CHARS]
    if 200 <= response.status_code < 300:
        return AttemptOutcome(status_code=response.status_code, response_excerpt=excerpt)
    return AttemptOutcome(
        status_code=response.status_code,
        error=f"the receiver answered {response.status_code} {response.reason_phrase}".strip(),
        response_excerpt=excerpt,
    )


def attempt_delivery(delivery_id: int, token: str, trigger: str, requested_by_id: int | None = None) -> float | None:
    """Make one attempt of a delivery if `token` still owns it. Returns the seconds until the next attempt, which is
    queued once this one is recorded, or None when the delivery has ended (or the message was stale)."""
    delivery = _claim(delivery_id, token)
    if delivery is None:
        return None
    webhook = delivery.webhook
    number = delivery.attempts + 1
    started, clock = timezone.now(), time.monotonic()
    if webhook.is_active:
        outcome = _post(webhook, delivery, number)
    else:
        outcome = AttemptOutcome(error="the webhook was made inactive", retry=False)
    duration_ms = int((time.monotonic() - clock) * 1000)
    with transaction.atomic():
        locked = WebhookDelivery.objects.select_for_update().filter(pk=delivery.pk).first()
        if locked is None:  # the hook was deleted, with its deliveries, while this attempt was made
            return None
        taken_over = (
            locked.claim_token != token or WebhookAttempt.objects.filter(delivery=locked, number=number).exists()
        )
        if taken_over:  # this attempt looked abandoned and was queued again: the newer one owns the delivery
            logger.warning("delivery %s: attempt %s ended after it was taken over", delivery.pk, number)
            return None
        WebhookAttempt.objects.create(
            delivery=locked,
            number=number,
            trigger=trigger,
            requested_by_id=requested_by_id,
            started_at=started,
            duration_ms=duration_ms,
            status_code=outcome.status_code,
            error=outcome.error,
            response_excerpt=outcome.response_excerpt,
        )
        locked.attempts = number
        locked.last_status_code, locked.last_error = outcome.status_code, outcome.error
        retry_in = None
        if outcome.succeeded:
            locked.status, locked.delivered_at, locked.next_attempt_at = (
                WebhookDelivery.Status.SUCCEEDED,
                timezone.now(),
                None,
            )
        elif outcome.retry and _attempts_in_round(locked) < int(settings.WEBHOOK_MAX_ATTEMPTS):
            retry_in = backoff_seconds(_attempts_in_round(locked))
            locked.status, locked.claim_token = WebhookDelivery.Status.PENDING, uuid.uuid4().hex
            locked.next_attempt_at = timezone.now() + timedelta(seconds=retry_in)
        else:
            locked.status, locked.next_attempt_at = WebhookDelivery.Status.FAILED, None
        locked.claimed_at = None
        locked.save()
        if retry_in is not None:
            _queue(locked, WebhookAttempt.Trigger.RETRY, countdown=retry_in)
    return retry_in


def _attempts_in_round(delivery: WebhookDelivery) -> int:
    """Attempts made since the delivery was last started (by its event, or by hand): each round has its retries."""
    last_start = (
        WebhookAttempt.objects.filter(delivery=delivery)
        .exclude(trigger=WebhookAttempt.Trigger.RETRY)
        .order_by("-number")
        .values_list("number", flat=True)
        .first()
    )
    return delivery.attempts - (last_start or 1) + 1


def queue_overdue(*, older_than_seconds: float = 60.0) -> list[int]:
    """Queue again the deliveries whose next attempt is overdue (their message was lost, or their worker died while
    sending); the token changes, so a late original message sends nothing. Returns their ids."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    sending_cutoff = timezone.now() - timedelta(seconds=float(settings.WEBHOOK_TIMEOUT_SECONDS) * 2 + 60)
    overdue = WebhookDelivery.objects.filter(status=WebhookDelivery.Status.PENDING, next_attempt_at__lt=cutoff) | (
        WebhookDelivery.objects.filter(status=WebhookDelivery.Status.SENDING, claimed_at__lt=sending_cutoff)
    )
    queued = []
    for delivery_id in overdue.values_list("pk", flat=True)[:500]:
        with transaction.atomic():
            delivery = WebhookDelivery.objects.select_for_update().filter(pk=delivery_id).first()
            if delivery is None or delivery.status not in (
                WebhookDelivery.Status.PENDING,
                WebhookDelivery.Status.SENDING,
            ):
                continue
            delivery.status, delivery.claim_token, delivery.claimed_at = (
                WebhookDelivery.Status.PENDING,
                uuid.uuid4().hex,
                None,
            )
            delivery.next_attempt_at = timezone.now()
            delivery.save(update_fields=["status", "claim_token", "claimed_at", "next_attempt_at"])
            _queue(delivery, WebhookAttempt.Trigger.RETRY)
            queued.append(delivery_id)
    return queued
