import json

from django.core.management.base import BaseCommand, CommandError
from rich.console import Console
from rich.table import Table

from verifybench.models import Dataset
from verifybench.selectors import dataset_stats


class Command(BaseCommand):
    help = "Show the counts of a dataset: questions, completions, answer types, models and prior labels."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="name of the dataset")
        parser.add_argument("--json", action="store_true", help="print the counts as one JSON object")

    def handle(self, *args, dataset, **options):
        try:
            stats = dataset_stats(Dataset.objects.get(name=dataset))
        except Dataset.DoesNotExist:
            raise CommandError(f"no dataset named {dataset!r}") from None
        if options["json"]:
            self.stdout.write(json.dumps(stats, sort_keys=True))
            return
        console = Console(file=self.stdout, width=100)
        console.print(
            f"Dataset {dataset}: {stats['questions']} questions, {stats['completions']} completions, "
            f"{stats['prior_labels']} prior labels"
        )
        for title, column, counts in (
            ("Questions by answer type", "answer type", stats["by_answer_type"]),
            ("Completions by model", "model", stats["by_model"]),
        ):
            table = Table(title=title)
            table.add_column(column)
            table.add_column("count", justify="right")
            for name, count in counts.items():
                table.add_row(name, str(count))
            console.print(table)
