"""Select completions with the VerifyBench, VerifyBench-Hard or cascade recipe and create an annotation project of
them."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from grading.models import VerifierConfig
from grading.selection import recipes as selection
from grading.selection import selectors, services
from verifybench.models import Dataset


class Command(BaseCommand):
    help = (
        "verifybench: per question, 2 completions the verifier judged correct and 2 it judged incorrect. "
        "verifybench-hard: completions the verifiers disagree on (minority >= --min-minority votes), sampled by "
        "domain, source and answer type in proportion up to --target. cascade: the completions a cascade verifier left to humans (--route undecided / "
        "disputed; both by default), at most --target at random when given. Creates a correctness project and prints "
        "its id and the selection report as JSON."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="dataset name")
        parser.add_argument("--strategy", required=True, choices=selection.STRATEGIES)
        parser.add_argument(
            "--verifiers",
            nargs="+",
            required=True,
            metavar="NAME",
            help="verifier configuration names (one for verifybench)",
        )
        parser.add_argument(
            "--target",
            type=int,
            default=None,
            help="verifybench-hard: completions to pick (2000); cascade: at most this many",
        )
        parser.add_argument(
            "--route",
            action="append",
            default=[],
            dest="routes",
            choices=selection.CASCADE_ROUTES,
            help="cascade: route undecided or disputed completions only; repeatable",
        )
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--name", default="", help="project name")
        parser.add_argument("--per-side", type=int, default=2, help="verifybench: picks per side and question")
        parser.add_argument(
            "--min-minority",
            type=int,
            default=2,
            help="verifybench-hard: votes the minority side needs (2 of 5 keeps 2 vs 3 splits)",
        )
        parser.add_argument(
            "--answer-type",
            action="append",
            default=[],
            dest="answer_types",
            help="keep this answer type (A1) or class (A); repeatable",
        )
        parser.add_argument("--domain", action="append", default=[], dest="domains", help="repeatable")
        parser.add_argument("--model", action="append", default=[], dest="models", help="repeatable")
        parser.add_argument("--report", help="also write the full report (with every pick) to this JSON file")

    def handle(self, *args, **options):
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset named {options['dataset']!r}")
        names = list(dict.fromkeys(options["verifiers"]))
        verifiers = {config.name: config for config in VerifierConfig.objects.filter(name__in=names)}
        missing = [name for name in names if name not in verifiers]
        if missing:
            raise CommandError(f"no verifier configuration named {', '.join(missing)}")
        try:
            project, record = services.select_for_annotation(
                dataset=dataset,
                strategy=options["strategy"],
                verifiers=[verifiers[name] for name in names],
                seed=options["seed"],
                target=options["target"],
                per_side=options["per_side"],
                min_minority=options["min_minority"],
                routes=options["routes"] or None,
                answer_types=options["answer_types"],
                domains=options["domains"],
                models=options["models"],
                name=options["name"],
            )
        except services.SelectionRequestError as exc:
            raise CommandError(str(exc)) from None
        if options["report"]:
            try:
                with open(options["report"], "w", encoding="utf-8") as handle:
                    json.dump(record.report, handle, indent=2)
            except OSError as exc:
                raise CommandError(
                    f"project {project.pk} was created, but the report could not be written to "
                    f"{options['report']}: {exc.strerror}"
                ) from None
        summary = selectors.selection_payload(record)
        summary["report"] = {key: value for key, value in record.report.items() if key != "picks"}
        # a large selection's items come from a project-setup job, which a worker runs (`manage.py jobs` shows it)
        self.stdout.write(json.dumps({"project_id": project.pk, "preparing": project.preparing, **summary}, indent=2))
