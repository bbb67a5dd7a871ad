from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("grading", "0007_jobs_share_progress_fields"),
    ]

    operations = [
        migrations.AddField(
            model_name="verificationrun",
            name="log",
            field=models.JSONField(
                blank=True, default=list, help_text="What happened to the job: starts, takeovers, ends."
            ),
        ),
    ]
