"""The fields every long-running job row shares; each job kind is a concrete model of its own app."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class BackgroundJob(models.Model):
    """The fields every long-running job row shares: its state, who owns it, and when things happened."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)

    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    cancel_requested = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    attempt = models.PositiveIntegerField(default=1, help_text="Raised each time the job is run again.")
    run_token = models.CharField(max_length=32, blank=True, help_text="Identifies the execution that owns the job.")
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    dispatched_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the current attempt's message reached the broker; empty while it has not (the sweep sends it).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    progress_done = models.PositiveIntegerField(default=0, help_text="Units of work done (rows, completions...).")
    progress_total = models.PositiveIntegerField(default=0, help_text="Units of work in all; 0 while unknown.")
    log = models.JSONField(default=list, blank=True, help_text="What happened to the job: starts, takeovers, ends.")

    class Meta:
        abstract = True

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    LOG_LIMIT = 50

    def note(self, event: str, **details) -> list[str]:
        """Append an entry to the job's log (the caller saves); returns the field to save."""
        from django.utils import timezone

        entry = {"at": timezone.now().isoformat(timespec="seconds"), "event": event, "attempt": self.attempt, **details}
        self.log = [*(self.log or []), entry][-self.LOG_LIMIT :]
        return ["log"]
