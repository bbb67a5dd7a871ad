"""Datasets keep the count of their imported labels, as they keep their question and completion counts, so that the
home page sums a few rows instead of counting every label of a workspace."""

from django.db import migrations, models
from django.db.models import Count


def count_prior_labels(apps, schema_editor):
    Dataset, PriorLabel = apps.get_model("verifybench", "Dataset"), apps.get_model("verifybench", "PriorLabel")
    counts = (
        PriorLabel.objects.values("completion__question__dataset_id")
        .annotate(n=Count("pk"))
        .values_list("completion__question__dataset_id", "n")
    )
    for dataset_id, count in counts:
        Dataset.objects.filter(pk=dataset_id).update(prior_label_count=count)


class Migration(migrations.Migration):
    dependencies = [("verifybench", "0011_belong_to_workspaces")]

    operations = [
        migrations.AddField(
            model_name="dataset",
            name="prior_label_count",
            field=models.PositiveIntegerField(default=0, editable=False),
        ),
        migrations.RunPython(count_prior_labels, migrations.RunPython.noop),
    ]
