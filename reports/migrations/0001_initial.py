"""ExportJob moves here from the benchmark-data app; its table (verifybench_exportjob) stays as it is."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("annotation", "0005_item_subject"),
        ("verifybench", "0004_shared_background_job_fields"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ExportJob",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
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
                        (
                            "attempt",
                            models.PositiveIntegerField(default=1, help_text="Raised each time the job is run again."),
                        ),
                        (
                            "run_token",
                            models.CharField(
                                blank=True, max_length=32, help_text="Identifies the execution that owns the job."
                            ),
                        ),
                        ("heartbeat_at", models.DateTimeField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "format",
                            models.CharField(
                                max_length=50, help_text="A registered export format, e.g. verifybench or mumath."
                            ),
                        ),
                        ("file_types", models.JSONField(default=list, help_text="Any of jsonl, csv, parquet.")),
                        ("options", models.JSONField(blank=True, default=dict)),
                        ("progress_done", models.PositiveIntegerField(default=0)),
                        ("progress_total", models.PositiveIntegerField(default=0)),
                        (
                            "bundle_path",
                            models.CharField(blank=True, max_length=500, help_text="File name under EXPORT_ROOT."),
                        ),
                        ("bundle_sha256", models.CharField(blank=True, max_length=64)),
                        ("bundle_size", models.PositiveBigIntegerField(blank=True, null=True)),
                        ("manifest", models.JSONField(blank=True, null=True)),
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
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="export_jobs",
                                to="annotation.annotationproject",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "verifybench_exportjob",
                        "ordering": ["-created_at", "-id"],
                        "indexes": [models.Index(fields=["status", "created_at"], name="exportjob_status_created")],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
