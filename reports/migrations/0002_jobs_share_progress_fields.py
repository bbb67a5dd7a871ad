from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("reports", "0001_initial"),
    ]

    operations = [
        migrations.AlterField(
            model_name="exportjob",
            name="progress_done",
            field=models.PositiveIntegerField(default=0, help_text="Units of work done (rows, completions...)."),
        ),
        migrations.AlterField(
            model_name="exportjob",
            name="progress_total",
            field=models.PositiveIntegerField(default=0, help_text="Units of work in all; 0 while unknown."),
        ),
    ]
