import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from verifybench import services

EXIT_REJECTED = 1
EXIT_USAGE = 2


class Command(BaseCommand):
    help = (
        "Import a JSONL file (VerifyBench, mu-MATH, MathArena...) into a dataset, creating the dataset if needed. "
        "Any invalid line or conflict with stored data rejects the whole file unless --skip-invalid is given."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the JSONL file to import")
        parser.add_argument("--dataset", required=True, help="name of the dataset to import into")
        parser.add_argument(
            "--format",
            dest="fmt",
            choices=services.import_format_names(),
            help="the file's format; detected from the first valid line when omitted",
        )
        parser.add_argument(
            "--skip-invalid",
            action="store_true",
            help="import the valid lines and write the others to the rejects file",
        )
        parser.add_argument(
            "--rejects",
            metavar="PATH",
            help="where --skip-invalid writes the skipped lines (default: FILE.rejects.jsonl)",
        )

    def handle(self, *args, file, dataset, fmt, skip_invalid, rejects, **options):
        path = Path(file)
        if not path.is_file():
            raise CommandError(f"{file}: no such file", returncode=EXIT_USAGE)
        try:
            report = services.import_jsonl(
                dataset_name=dataset,
                source=path,
                fmt=fmt,
                skip_invalid=skip_invalid,
                rejects_path=rejects,
                progress=sys.stderr.isatty(),
                source_name=str(path),
            )
        except services.ImportRejected as rejected:
            self.stderr.write(rejected.report.summary())
            raise CommandError(f"{file} was rejected; nothing was written.", returncode=EXIT_REJECTED) from None
        self.stdout.write(report.summary())
        started = time.perf_counter()
        computed = services.index_search_documents()
        if computed:
            self.stdout.write(f"search documents: {computed} computed in {time.perf_counter() - started:.1f} s")
