import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Max

CLOSED_STATES = ("resolved", "excluded")


def record_complete_projects(apps, schema_editor):
    """Projects already complete are recorded as such, so closing one more of their items announces nothing."""
    AnnotationProject = apps.get_model("annotation", "AnnotationProject")
    Item = apps.get_model("annotation", "Item")
    ProjectCompletion = apps.get_model("annotation", "ProjectCompletion")
    for project in AnnotationProject.objects.filter(preparing=False).order_by("pk").iterator():
        in_workflow = Item.objects.filter(project_id=project.pk, is_gold=False)
        if not in_workflow.exists() or in_workflow.exclude(state__in=CLOSED_STATES).exists():
            continue
        last = in_workflow.aggregate(last=Max("resolved_at"))["last"] or project.created_at
        ProjectCompletion.objects.create(project_id=project.pk, completed_at=last)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0015_job_messages_are_sent_from_an_outbox"),
    ]

    operations = [
        migrations.CreateModel(
            name="ProjectCompletion",
            fields=[
                (
                    "project",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="annotation.annotationproject",
                    ),
                ),
                ("completed_at", models.DateTimeField()),
            ],
        ),
        migrations.RunPython(record_complete_projects, migrations.RunPython.noop),
    ]
