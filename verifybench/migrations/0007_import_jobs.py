import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("verifybench", "0006_import_origins"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ImportJob",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("queued", "Queued"),
                            ("running", "Running"),
                            ("succeeded", "Succeeded"),
                            ("failed", "Failed"),
                            ("cancelled", "Cancelled"),
                        ],
                        default="queued",
                        max_length=20,
                    ),
                ),
                ("cancel_requested", models.BooleanField(default=False)),
                ("error", models.TextField(blank=True)),
                ("attempt", models.PositiveIntegerField(default=1, help_text="Raised each time the job is run again.")),
                (
                    "run_token",
                    models.CharField(
                        blank=True, help_text="Identifies the execution that owns the job.", max_length=32
                    ),
                ),
                ("heartbeat_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "progress_done",
                    models.PositiveIntegerField(default=0, help_text="Units of work done (rows, completions...)."),
                ),
                (
                    "progress_total",
                    models.PositiveIntegerField(default=0, help_text="Units of work in all; 0 while unknown."),
                ),
                (
                    "log",
                    models.JSONField(
                        blank=True, default=list, help_text="What happened to the job: starts, takeovers, ends."
                    ),
                ),
                ("dataset_name", models.CharField(max_length=200)),
                ("format", models.CharField(blank=True, help_text="Detected from the file when empty.", max_length=50)),
                (
                    "file_type",
                    models.CharField(
                        blank=True, help_text="jsonl, csv or parquet; detected when empty.", max_length=10
                    ),
                ),
                ("skip_invalid", models.BooleanField(default=False)),
                ("source_name", models.CharField(help_text="The uploaded file's name.", max_length=500)),
                (
                    "upload_path",
                    models.CharField(blank=True, help_text="File name under IMPORT_UPLOAD_DIR.", max_length=500),
                ),
                ("size", models.PositiveBigIntegerField(default=0)),
                ("report", models.JSONField(blank=True, null=True)),
                (
                    "rejects_path",
                    models.CharField(blank=True, help_text="File name under IMPORT_UPLOAD_DIR.", max_length=500),
                ),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "dataset",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="import_jobs",
                        to="verifybench.dataset",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [models.Index(fields=["status", "created_at"], name="importjob_status_created")],
            },
        ),
    ]
