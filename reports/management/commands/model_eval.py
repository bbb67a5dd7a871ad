"""Pass@k, G-Pass@k_tau and mG-Pass@k per model of a dataset, from human labels or a verifier's verdicts."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.models import AnnotationProject
from reports import evaluation
from reports.management.commands import gpass
from verifybench.models import Dataset


class Command(BaseCommand):
    help = (
        "Model stability of a dataset's completions: accuracy, greedy accuracy, Pass@k, G-Pass@k_tau and mG-Pass@k "
        "per model with bootstrap 95% intervals over questions. Correctness comes from the final human labels of a "
        "correctness project (--project) or from one verifier's verdicts (--verifier; inconclusive counts as "
        "incorrect). --json prints the shape of the gpass command."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="dataset name")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--project", type=int, help="correctness project of the dataset whose final labels count")
        source.add_argument("--verifier", help="VerifierConfig name whose verdicts count")
        parser.add_argument(
            "--k",
            dest="ks",
            type=int,
            nargs="+",
            default=list(evaluation.DEFAULT_KS),
            help="values of k (default: 4 8 16)",
        )
        parser.add_argument(
            "--tau",
            dest="taus",
            nargs="+",
            default=list(evaluation.DEFAULT_TAUS),
            help="thresholds in (0, 1]; keys keep the spelling given here (default: 0.25 0.5 0.75 1.0)",
        )
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")
        parser.add_argument(
            "--bootstrap", type=int, default=1000, help="bootstrap resamples; 0 turns the intervals off"
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")

    def handle(self, *args, **options):
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset named {options['dataset']!r}")
        if options["bootstrap"] < 0:
            raise CommandError(f"--bootstrap must be >= 0, got {options['bootstrap']}")
        try:
            ks = evaluation.parse_ks(options["ks"])
            taus = evaluation.parse_taus(options["taus"])
            if options["project"] is not None:
                project = AnnotationProject.objects.filter(pk=options["project"]).first()
                if project is None:
                    raise CommandError(f"no annotation project {options['project']}")
                source = evaluation.CorrectnessSource(project=project)
            else:
                source = evaluation.CorrectnessSource(verifier=evaluation.resolve_verifiers([options["verifier"]])[0])
            result = evaluation.model_evaluate(
                dataset, source, ks, taus, bootstrap=options["bootstrap"], seed=options["seed"]
            )
        except evaluation.EvaluationError as error:
            raise CommandError(str(error)) from error

        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.stdout.write(f"{dataset.name}: correctness from the {source.describe()}")
            self.stdout.write(gpass.Command()._render_table(result, ks, taus))
