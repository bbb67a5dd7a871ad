"""Run a verifier configuration over a dataset or a project's completions, here or on a Celery worker."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.models import AnnotationProject
from grading import runs, selectors
from grading.models import VerificationRun, VerifierConfig
from verifybench.models import Dataset


class Command(BaseCommand):
    help = (
        "Verify completions with a verifier configuration (rule-based, LLM judge or cascade) in chunks, writing one "
        "verdict per completion. Completions that already have a verdict of this configuration are skipped, so "
        "running the same command again goes on where an interrupted run stopped. Prints the run as JSON, with a "
        'cascade\'s per-stage figures under "cascade".'
    )

    def add_arguments(self, parser):
        parser.add_argument("--verifier", help="verifier configuration name")
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument("--dataset", help="dataset name")
        scope.add_argument("--project", type=int, help="annotation project id (its completions)")
        scope.add_argument("--resume", type=int, metavar="RUN_ID", help="resume an earlier run instead")
        parser.add_argument(
            "--answer-type",
            action="append",
            default=[],
            dest="answer_types",
            help="keep this answer type (A1) or class (A); repeatable",
        )
        parser.add_argument("--domain", action="append", default=[], dest="domains", help="repeatable")
        parser.add_argument("--model", action="append", default=[], dest="models", help="repeatable")
        parser.add_argument(
            "--chunk-size",
            type=int,
            default=None,
            help="completions per chunk (default: 2000 for the rules, 200 for a judge)",
        )
        parser.add_argument("--queue", action="store_true", help="queue the run for a Celery worker and return")

    def handle(self, *args, **options):
        try:
            run = self._resume(options) if options["resume"] else self._create(options)
        except runs.RunRequestError as exc:
            raise CommandError(str(exc)) from None
        if not options["queue"]:
            run = runs.execute_run(run.pk, run.attempt)
        self.stdout.write(json.dumps(selectors.run_payload(run, cascade=runs.cascade_report(run)), indent=2))
        if run.status == VerificationRun.Status.FAILED:
            raise CommandError(f"run {run.pk} failed: {run.error}")

    def _create(self, options) -> VerificationRun:
        if not options["verifier"]:
            raise CommandError("--verifier is required")
        verifier = VerifierConfig.objects.filter(name=options["verifier"]).first()
        if verifier is None:
            raise CommandError(f"no verifier configuration named {options['verifier']!r}")
        dataset = project = None
        if options["dataset"]:
            dataset = Dataset.objects.filter(name=options["dataset"]).first()
            if dataset is None:
                raise CommandError(f"no dataset named {options['dataset']!r}")
        elif options["project"] is not None:
            project = AnnotationProject.objects.filter(pk=options["project"]).first()
            if project is None:
                raise CommandError(f"no annotation project {options['project']}")
        else:
            raise CommandError("give --dataset, --project or --resume")
        return runs.create_run(
            verifier=verifier,
            dataset=dataset,
            project=project,
            answer_types=options["answer_types"],
            domains=options["domains"],
            models=options["models"],
            chunk_size=options["chunk_size"],
            enqueue=options["queue"],
        )

    def _resume(self, options) -> VerificationRun:
        run = VerificationRun.objects.filter(pk=options["resume"]).first()
        if run is None:
            raise CommandError(f"no verification run {options['resume']}")
        return runs.resume_run(run, enqueue=options["queue"])
