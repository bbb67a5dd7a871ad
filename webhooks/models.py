"""Webhooks, their deliveries and every attempt at one."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Webhook(models.Model):
    """A URL that hears some events of a scope, with the secret its deliveries are signed with.

    The scope is a project or a workspace, exactly one (a check constraint). A project's hook hears the project's
    events (its runs, exports, adjudications, completion) and those of its dataset that concern no project (imports,
    runs over the whole dataset); a workspace's hook hears those of every project and dataset of the workspace, and
    every import into it (`services.hooks_for`).
    """

    project = models.ForeignKey(
        "annotation.AnnotationProject", null=True, blank=True, on_delete=models.CASCADE, related_name="webhooks"
    )
    workspace = models.ForeignKey(
        "core.Workspace", null=True, blank=True, on_delete=models.CASCADE, related_name="webhooks"
    )
    url = models.URLField(max_length=2000)
    events = models.JSONField(default=list, help_text="The declared event names the hook hears (core.events).")
    secret = models.CharField(max_length=100, help_text="Signs every delivery (HMAC-SHA256); shown once when set.")
    description = models.CharField(max_length=500, blank=True)
    is_active = models.BooleanField(default=True, help_text="An inactive hook hears nothing and sends nothing.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(project__isnull=False, workspace__isnull=True)
                | models.Q(project__isnull=True, workspace__isnull=False),
                name="webhook_has_one_scope",
            )
        ]

    def __str__(self):
        return f"webhook {self.pk} to {self.url}"


class WebhookDelivery(models.Model):
    """One event sent to one hook: the body as first built (every attempt sends it unchanged, signed afresh), where
    the sending stands, and the outcome of the last attempt. `claim_token` names the one queued message that may
    make the next attempt, so a duplicate or late message sends nothing."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting to be sent"
        SENDING = "sending", "Sending"
        SUCCEEDED = "succeeded", "Delivered"
        FAILED = "failed", "Failed"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=100)
    event_id = models.CharField(max_length=32, help_text="The event's id: the same on every attempt and resend.")
    body = models.TextField(help_text="The JSON body as sent.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    claim_token = models.CharField(max_length=32, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["webhook", "-created_at", "-id"], name="webhookdelivery_log"),
            models.Index(
                fields=["next_attempt_at"],
                name="webhookdelivery_waiting",
                condition=models.Q(status__in=["pending", "sending"]),
            ),
        ]

    def __str__(self):
        return f"delivery {self.pk} of {self.event} to webhook {self.webhook_id} ({self.status})"


class WebhookAttempt(models.Model):
    """One request made for a delivery: when, how it was started, what came back."""

    class Trigger(models.TextChoices):
        EVENT = "event", "The event"
        RETRY = "retry", "A retry"
        MANUAL = "manual", "Sent again by hand"

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField()
    trigger = models.CharField(max_length=10, choices=Trigger.choices)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField(default=0)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True, help_text="Why the attempt failed: no answer, a refused address, a status.")
    response_excerpt = models.CharField(max_length=1000, blank=True, help_text="The start of the receiver's answer.")

    class Meta:
        ordering = ["delivery_id", "number"]
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="one_attempt_number_per_delivery")]

    def __str__(self):
        return f"attempt {self.number} of delivery {self.delivery_id}"

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300
