"""Items name their subject by id (`subject_id`) instead of one foreign key per subject kind: second step.

The old columns and their constraints go; `subject_id` becomes required and unique per project; the project kind is
any registered subject kind rather than a fixed list.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0004_item_subject_fill"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="item", name="one_item_per_completion_per_project"),
        migrations.RemoveConstraint(model_name="item", name="one_item_per_question_per_project"),
        migrations.RemoveConstraint(model_name="item", name="one_item_per_proof_per_project"),
        migrations.RemoveField(model_name="item", name="completion"),
        migrations.RemoveField(model_name="item", name="question"),
        migrations.RemoveField(model_name="item", name="proof_submission"),
        migrations.AlterField(
            model_name="item",
            name="subject_id",
            field=models.BigIntegerField(
                help_text="What the item is about: a row of the project kind's subject table (a completion, a "
                "question, a proof), named by core.subjects."
            ),
        ),
        migrations.AddConstraint(
            model_name="item",
            constraint=models.UniqueConstraint(
                fields=("project", "subject_id"), name="one_item_per_subject_per_project"
            ),
        ),
        migrations.AddIndex(model_name="item", index=models.Index(fields=["subject_id"], name="item_subject")),
        migrations.AlterField(
            model_name="annotationproject",
            name="kind",
            field=models.CharField(
                max_length=30, help_text="A registered subject kind (core.subjects), e.g. correctness."
            ),
        ),
    ]
