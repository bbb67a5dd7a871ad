"""ExportJob now belongs to the reports app (reports.0001_initial); the table stays, only the state moves."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("verifybench", "0004_shared_background_job_fields"),
        ("reports", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ExportJob")],
            database_operations=[],
        ),
    ]
