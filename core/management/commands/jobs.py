"""Background jobs of every kind from the command line: list them, and cancel, resume, restart, run or sweep them."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from core.jobs import runner
from core.jobs.api import job_payload
from core.jobs.selectors import recent_jobs

LIST_LIMIT = 50


class Command(BaseCommand):
    help = (
        "Background jobs (imports, verification runs, exports, ...). `jobs` lists them, newest first; "
        "`jobs cancel|resume|restart KIND-ID` acts on one and queues it for a worker (`--here` runs it in this "
        "process instead); `jobs run KIND-ID` runs a queued job here; `jobs sweep` takes over jobs whose worker died."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "action", nargs="?", default="list", choices=["list", "cancel", "resume", "restart", "run", "sweep"]
        )
        parser.add_argument("job", nargs="?", help="KIND-ID, e.g. import-3 or verification-run-12")
        parser.add_argument("--kind", help="list only this kind")
        parser.add_argument("--status", help="list only jobs in this state")
        parser.add_argument(
            "--force",
            action="store_true",
            help="resume or restart a job that still looks alive (its worker is known to be gone)",
        )
        parser.add_argument("--here", action="store_true", help="run the job in this process, not on a worker")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args, **options):
        action = options["action"]
        if action == "list":
            return self._list(options)
        if action == "sweep":
            report = runner.sweep()
            self.stdout.write(
                json.dumps({"resumed": report.resumed, "requeued": report.requeued, "failed": report.failed})
            )
            return None
        job = self._job(options["job"])
        try:
            if action == "cancel":
                job = runner.cancel(job)
            elif action == "run":
                job = runner.run(runner.kind_of(job).name, job.pk, job.attempt)
            else:
                again = runner.resume if action == "resume" else runner.restart
                job = again(job, force=options["force"], enqueue_it=not options["here"])
                if options["here"]:
                    job = runner.run(runner.kind_of(job).name, job.pk, job.attempt)
        except runner.JobRequestError as exc:
            raise CommandError(str(exc)) from None
        self._show([job], options)
        return None

    def _job(self, slug: str | None):
        if not slug:
            raise CommandError("name the job as KIND-ID, e.g. import-3; `jobs` lists them")
        kind_name, _, number = slug.rpartition("-")
        if not number.isdigit():
            raise CommandError(f"{slug!r} is not KIND-ID, e.g. import-3")
        try:
            kind = runner.get_kind(kind_name)
        except runner.JobRequestError as exc:
            raise CommandError(str(exc)) from None
        job = kind.model.objects.filter(pk=int(number)).select_related("created_by").first()
        if job is None:
            raise CommandError(f"no {kind.noun} {number}")
        return job

    def _list(self, options) -> None:
        self._show(recent_jobs(LIST_LIMIT, options["kind"] or "", options["status"] or ""), options)

    def _show(self, jobs, options) -> None:
        payloads = [job_payload(job) for job in jobs]
        if options["json"]:
            self.stdout.write(json.dumps(payloads if options["action"] == "list" else payloads[0], indent=2))
            return
        if not payloads:
            self.stdout.write("No jobs.")
        for payload in payloads:
            progress = payload["progress"]
            line = (
                f"{payload['kind']}-{payload['id']:<6} {payload['status']:<10} attempt {payload['attempt']}  "
                f"{progress['done']}/{progress['total']}  {payload['created_at'][:19]}  "
                f"{payload['created_by'] or ''}"
            )
            if payload["error"]:
                line += f"  error: {payload['error']}"
            self.stdout.write(line)
