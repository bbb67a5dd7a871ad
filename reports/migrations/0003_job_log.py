from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("reports", "0002_jobs_share_progress_fields"),
    ]

    operations = [
        migrations.AddField(
            model_name="exportjob",
            name="log",
            field=models.JSONField(
                blank=True, default=list, help_text="What happened to the job: starts, takeovers, ends."
            ),
        ),
    ]
