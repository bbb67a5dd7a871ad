"""A project's own workspace: guidelines with their versions, members that can be removed without losing their
labels (and the guidelines version each has seen), one-time invitations, and an append-only log of project changes."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_item_subject"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="annotationproject",
            name="guidelines",
            field=models.TextField(
                blank=True,
                help_text="Labeling guidelines (Markdown), current version. Changed only through services.update_project, which keeps every version in GuidelinesVersion.",
            ),
        ),
        migrations.AddField(
            model_name="annotationproject",
            name="guidelines_version",
            field=models.PositiveIntegerField(default=0, help_text="0 until guidelines are first written."),
        ),
        migrations.AddField(
            model_name="projectmember",
            name="guidelines_seen_version",
            field=models.PositiveIntegerField(
                default=0,
                help_text="The last guidelines version this member acknowledged; a newer one is shown to them.",
            ),
        ),
        migrations.AddField(
            model_name="projectmember",
            name="is_active",
            field=models.BooleanField(
                default=True,
                help_text="False once removed from the project: no new tasks, no live leases; the member's labels stay and still count. Adding the person again makes the row active again.",
            ),
        ),
        migrations.AddField(
            model_name="projectmember",
            name="removed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.CreateModel(
            name="Invitation",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "role",
                    models.CharField(
                        choices=[("annotator", "Annotator"), ("adjudicator", "Adjudicator")],
                        default="annotator",
                        max_length=20,
                    ),
                ),
                ("token_hash", models.CharField(max_length=64, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("expires_at", models.DateTimeField()),
                ("used_at", models.DateTimeField(blank=True, null=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "account",
                    models.ForeignKey(
                        blank=True,
                        help_text="Set when the link lets a newly created account choose its password.",
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
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
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="invitations",
                        to="annotation.annotationproject",
                    ),
                ),
                (
                    "revoked_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "used_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
            },
        ),
        migrations.CreateModel(
            name="GuidelinesVersion",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("version", models.PositiveIntegerField()),
                ("text", models.TextField(blank=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="guidelines_versions",
                        to="annotation.annotationproject",
                    ),
                ),
            ],
            options={
                "ordering": ["project_id", "-version"],
                "constraints": [
                    models.UniqueConstraint(fields=("project", "version"), name="one_guidelines_text_per_version")
                ],
            },
        ),
        migrations.CreateModel(
            name="ProjectChange",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("settings", "Settings changed"),
                            ("guidelines", "Guidelines changed"),
                            ("member_added", "Member added"),
                            ("member_removed", "Member removed"),
                            ("account_created", "Account created"),
                            ("invitation_created", "Invitation created"),
                            ("invitation_revoked", "Invitation revoked"),
                            ("invitation_accepted", "Invitation accepted"),
                        ],
                        max_length=30,
                    ),
                ),
                ("summary", models.CharField(max_length=500)),
                ("details", models.JSONField(blank=True, default=dict)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "actor",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="changes",
                        to="annotation.annotationproject",
                    ),
                ),
            ],
            options={
                "ordering": ["project_id", "-created_at", "-id"],
                "indexes": [models.Index(fields=["project", "-created_at"], name="project_change_time")],
            },
        ),
    ]
