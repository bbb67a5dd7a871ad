import datetime as dt
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from grading.proofs.importing import import_matharena_proofs
from verifybench.services import ImportRejected

EXIT_REJECTED = 1
EXIT_USAGE = 2


class Command(BaseCommand):
    help = (
        "Import a MathArena proof file into a competition: problems with their grading schemes (as one-chain "
        "rubrics) and model proofs. Any invalid line or conflict rejects the whole file unless --skip-invalid."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the JSONL file to import")
        parser.add_argument(
            "--dataset",
            "--competition",
            dest="competition",
            required=True,
            help="name of the competition (created with a dataset of the same name if missing)",
        )
        parser.add_argument("--date", help="the competition's date, YYYY-MM-DD (for the leaderboard's release flag)")
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

    def handle(self, *args, file, competition, date=None, skip_invalid=False, rejects=None, **options):
        path = Path(file)
        if not path.is_file():
            raise CommandError(f"{file}: no such file", returncode=EXIT_USAGE)
        try:
            day = dt.date.fromisoformat(date) if date else None
        except ValueError:
            raise CommandError(f"--date: expected YYYY-MM-DD, got {date!r}", returncode=EXIT_USAGE) from None
        try:
            report = import_matharena_proofs(
                competition_name=competition,
                source=path,
                skip_invalid=skip_invalid,
                rejects_path=rejects,
                competition_date=day,
                source_name=str(path),
            )
        except ImportRejected as rejected:
            self.stderr.write(rejected.report.summary())
            raise CommandError(f"{file} was rejected; nothing was written.", returncode=EXIT_REJECTED) from None
        self.stdout.write(report.summary())
