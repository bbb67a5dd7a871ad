from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from grading.verdict_imports import import_verdicts
from verifybench.services import ImportRejected

EXIT_REJECTED = 1
EXIT_USAGE = 2


class Command(BaseCommand):
    help = (
        "Import verdicts computed elsewhere (JSON Lines, CSV or Parquet) about a dataset's completions: one row per "
        "verdict (completion_id, verifier, verdict), or one column per judge with --verdict-columns. Each verifier "
        "name becomes an external verifier configuration. Any invalid row or conflict with a stored verdict rejects "
        "the whole file unless --skip-invalid; importing the same file again changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the verdict file")
        parser.add_argument("--dataset", required=True, help="the dataset whose completions the file's ids name")
        parser.add_argument(
            "--verdict-columns",
            nargs="+",
            metavar="COLUMN",
            default=(),
            help="a completions file with one verdict column per judge: the columns, each named as its verifier",
        )
        parser.add_argument(
            "--skip-invalid", action="store_true", help="import the valid rows and write the others to the rejects file"
        )
        parser.add_argument(
            "--rejects",
            metavar="PATH",
            help="where --skip-invalid writes the skipped rows (default: FILE.rejects.jsonl)",
        )

    def handle(self, *args, file, dataset, verdict_columns=(), skip_invalid=False, rejects=None, **options):
        path = Path(file)
        if not path.is_file():
            raise CommandError(f"{file}: no such file", returncode=EXIT_USAGE)
        try:
            report = import_verdicts(
                dataset_name=dataset,
                source=path,
                verdict_columns=list(verdict_columns or ()),
                skip_invalid=skip_invalid,
                rejects_path=rejects,
                source_name=str(path),
            )
        except ImportRejected as rejected:
            self.stderr.write(rejected.report.summary())
            raise CommandError(f"{file} was rejected; nothing was written.", returncode=EXIT_REJECTED) from None
        self.stdout.write(report.summary())
