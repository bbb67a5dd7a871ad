from django.db import migrations


def create_default_templates(apps, schema_editor):
    from grading.services import ensure_default_templates

    ensure_default_templates(apps.get_model("grading", "PromptTemplate"))


class Migration(migrations.Migration):
    dependencies = [
        ("grading", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(create_default_templates, migrations.RunPython.noop),
    ]
