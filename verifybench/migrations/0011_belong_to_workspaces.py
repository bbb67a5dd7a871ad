"""Datasets and imports belong to a workspace. What exists already goes to the "Default" workspace, and every
researcher becomes a member of it, so a lab that upgrades sees everything it saw before."""

import django.db.models.deletion
from django.db import migrations, models

import core.workspaces


def to_the_default_workspace(apps, schema_editor):
    Dataset, ImportJob = apps.get_model("verifybench", "Dataset"), apps.get_model("verifybench", "ImportJob")
    if not Dataset.objects.exists() and not ImportJob.objects.exists():
        return
    Workspace, Member = apps.get_model("core", "Workspace"), apps.get_model("core", "WorkspaceMember")
    Group = apps.get_model("auth", "Group")
    default, _ = Workspace.objects.get_or_create(
        name="Default", defaults={"description": "Where datasets go when no other workspace is named."}
    )
    Dataset.objects.filter(workspace__isnull=True).update(workspace=default)
    ImportJob.objects.filter(workspace__isnull=True).update(workspace=default)
    researchers = Group.objects.filter(name="researcher").values_list("user", flat=True)
    for user_id in {user_id for user_id in researchers if user_id is not None}:
        Member.objects.get_or_create(workspace=default, user_id=user_id)
    if schema_editor.connection.vendor == "postgresql":
        # the new rows' deferred foreign-key checks run now, so the tables can be altered in this same transaction
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


FIELDS = {
    "dataset": ("datasets", "The team it belongs to: its projects, runs, selections and exports belong there too."),
    "importjob": ("import_jobs", "Where a dataset the import creates goes; an existing dataset must be in it."),
}


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("core", "0002_workspaces"),
        ("verifybench", "0010_job_messages_are_sent_from_an_outbox"),
    ]

    operations = [
        *(
            migrations.AddField(
                model_name=model,
                name="workspace",
                field=models.ForeignKey(
                    null=True,
                    on_delete=django.db.models.deletion.PROTECT,
                    related_name=related,
                    to="core.workspace",
                    help_text=text,
                ),
            )
            for model, (related, text) in FIELDS.items()
        ),
        migrations.RunPython(to_the_default_workspace, migrations.RunPython.noop),
        *(
            migrations.AlterField(
                model_name=model,
                name="workspace",
                field=models.ForeignKey(
                    default=core.workspaces.default_workspace_id,
                    on_delete=django.db.models.deletion.PROTECT,
                    related_name=related,
                    to="core.workspace",
                    help_text=text,
                ),
            )
            for model, (related, text) in FIELDS.items()
        ),
    ]
