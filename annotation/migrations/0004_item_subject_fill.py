"""Items name their subject by id (`subject_id`) instead of one foreign key per subject kind: first step.

`subject_id` and `answer_type` are added and filled from completion_id, question_id and proof_submission_id (and the
subject's question); the next migration drops the old columns. Two migrations, because PostgreSQL refuses to alter a
table in the transaction that updated its rows while foreign-key checks are still pending. Reversible: going back
fills the old column that the project's kind uses.
"""

from django.db import migrations, models

FILL_SUBJECT = """
UPDATE annotation_item SET subject_id = COALESCE(completion_id, proof_submission_id, question_id)
"""
FILL_ANSWER_TYPE = """
UPDATE annotation_item SET answer_type = COALESCE(
    (SELECT q.answer_type FROM verifybench_completion c JOIN verifybench_question q ON q.id = c.question_id
      WHERE c.id = annotation_item.completion_id),
    (SELECT q.answer_type FROM verifybench_question q WHERE q.id = annotation_item.question_id),
    '')
"""
RESTORE_FOREIGN_KEYS = [
    """UPDATE annotation_item SET completion_id = subject_id WHERE project_id IN
         (SELECT id FROM annotation_annotationproject WHERE kind = 'correctness')""",
    """UPDATE annotation_item SET question_id = subject_id WHERE project_id IN
         (SELECT id FROM annotation_annotationproject WHERE kind = 'answer_type')""",
    """UPDATE annotation_item SET proof_submission_id = subject_id WHERE project_id IN
         (SELECT id FROM annotation_annotationproject WHERE kind = 'proof_grade')""",
]


def _execute(schema_editor, statements) -> None:
    for statement in statements:
        schema_editor.execute(statement)
    if schema_editor.connection.vendor == "postgresql":
        # Run the deferred foreign-key checks now, so that the columns can be altered in this same transaction.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def fill_subjects(apps, schema_editor) -> None:
    _execute(schema_editor, [FILL_SUBJECT, FILL_ANSWER_TYPE])


def restore_foreign_keys(apps, schema_editor) -> None:
    _execute(schema_editor, RESTORE_FOREIGN_KEYS)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0003_task_index_covers_item"),
        ("verifybench", "0004_shared_background_job_fields"),
        ("grading", "0006_allowed_judge_hosts"),
    ]

    operations = [
        migrations.AddField(
            model_name="item",
            name="subject_id",
            field=models.BigIntegerField(null=True),
        ),
        migrations.AddField(
            model_name="item",
            name="answer_type",
            field=models.CharField(
                blank=True,
                default="",
                max_length=2,
                help_text="The subject's answer type when it has one, copied for per-type figures.",
            ),
            preserve_default=False,
        ),
        migrations.RunPython(fill_subjects, restore_foreign_keys),
    ]
