"""Report jobs: an export bundle of a project's final labels."""

from django.db import models

from core.jobs.models import BackgroundJob


class ExportJob(BackgroundJob):
    """One export of an annotation project's final labels as a zip bundle, run as a Celery job."""

    project = models.ForeignKey("annotation.AnnotationProject", on_delete=models.CASCADE, related_name="export_jobs")
    format = models.CharField(max_length=50, help_text="A registered export format, e.g. verifybench or mumath.")
    file_types = models.JSONField(default=list, help_text="Any of jsonl, csv, parquet.")
    options = models.JSONField(default=dict, blank=True)
    bundle_path = models.CharField(max_length=500, blank=True, help_text="File name under EXPORT_ROOT.")
    bundle_sha256 = models.CharField(max_length=64, blank=True)
    bundle_size = models.PositiveBigIntegerField(null=True, blank=True)
    manifest = models.JSONField(null=True, blank=True)

    class Meta:
        db_table = "verifybench_exportjob"  # the table predates this app
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "created_at"], name="exportjob_status_created")]

    def __str__(self):
        return f"export {self.pk} ({self.format}, {self.status})"
