"""Verification runs keep their progress in the fields every job shares (progress_done, progress_total), and a restart
records when it began (redo_from). The renames keep the stored counts."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("grading", "0006_allowed_judge_hosts"),
    ]

    operations = [
        migrations.RenameField(model_name="verificationrun", old_name="done", new_name="progress_done"),
        migrations.RenameField(model_name="verificationrun", old_name="total", new_name="progress_total"),
        migrations.AlterField(
            model_name="verificationrun",
            name="progress_done",
            field=models.PositiveIntegerField(default=0, help_text="Units of work done (rows, completions...)."),
        ),
        migrations.AlterField(
            model_name="verificationrun",
            name="progress_total",
            field=models.PositiveIntegerField(default=0, help_text="Units of work in all; 0 while unknown."),
        ),
        migrations.AddField(
            model_name="verificationrun",
            name="redo_from",
            field=models.DateTimeField(
                blank=True, null=True, help_text="Set by a restart: only verdicts written since count as done."
            ),
        ),
    ]
