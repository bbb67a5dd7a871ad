from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("verifybench", "0005_exportjob_moves_to_reports"),
    ]

    operations = [
        migrations.AddField(
            model_name="completion",
            name="origin",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="Public fields as the imported file spelled them (the completion id).",
            ),
        ),
        migrations.AddField(
            model_name="dataset",
            name="field_types",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text='JSON types the imported files gave each public id field, e.g. {"question_id": ["int"]}; exports keep them.',
            ),
        ),
        migrations.AddField(
            model_name="question",
            name="origin",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="Public fields as the imported file spelled them (ids, answer types).",
            ),
        ),
        migrations.AlterField(
            model_name="priorlabel",
            name="source_format",
            field=models.CharField(
                choices=[
                    ("verifybench", "VerifyBench"),
                    ("mumath", "mu-MATH"),
                    ("matharena", "MathArena"),
                    ("mathlabel", "mathlabel (a lab's own file)"),
                ],
                max_length=20,
            ),
        ),
    ]
