"""Verifier configurations belong to a workspace, or to none (shared by all). Existing judges and cascades go to the
"Default" workspace that the datasets went to; rule-based configurations stay shared."""

import django.db.models.deletion
from django.db import migrations, models


def judges_to_the_default_workspace(apps, schema_editor):
    VerifierConfig = apps.get_model("grading", "VerifierConfig")
    judges = VerifierConfig.objects.exclude(kind="rule")
    if not judges.exists():
        return
    Workspace = apps.get_model("core", "Workspace")
    default, _ = Workspace.objects.get_or_create(
        name="Default", defaults={"description": "Where datasets go when no other workspace is named."}
    )
    judges.update(workspace=default)


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0002_workspaces"),
        ("grading", "0012_job_messages_are_sent_from_an_outbox"),
        ("verifybench", "0011_belong_to_workspaces"),
    ]

    operations = [
        migrations.AddField(
            model_name="verifierconfig",
            name="workspace",
            field=models.ForeignKey(
                blank=True,
                help_text="The team that keeps it; empty: shared by every workspace (only admins change it).",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="verifier_configs",
                to="core.workspace",
            ),
        ),
        migrations.RunPython(judges_to_the_default_workspace, migrations.RunPython.noop),
    ]
