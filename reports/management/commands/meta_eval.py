"""Verifiers and judges scored against the final human labels of a correctness project."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from rich.console import Console
from rich.table import Table

from annotation.models import AnnotationProject
from core.metrics.judge_eval import COARSE_CLASSES, BinaryReport
from reports import evaluation


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


class Command(BaseCommand):
    help = (
        "Score verifiers and judges against the final human labels of a correctness project: accuracy per coarse "
        "answer class and their mean, TPR/TNR/PPV/NPV/macro-F1 overall and per author model, inconclusive rate, "
        "coverage, and the agreement matrix between verifiers, with 95% intervals from a bootstrap that resamples "
        "questions and paired comparisons of the verifiers. Without --verifier, every verifier with verdicts "
        "on the project's completions."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", type=int, required=True, help="id of the correctness annotation project")
        parser.add_argument(
            "--verifier",
            dest="verifiers",
            action="append",
            nargs="+",
            default=[],
            help="VerifierConfig name(s); repeat or list several",
        )
        parser.add_argument("--csv", dest="csv_path", help="also write the figures as CSV to this path")
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")
        parser.add_argument(
            "--bootstrap", type=int, default=1000, help="bootstrap resamples of the questions (0: figures only)"
        )
        parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")

    def handle(self, *args, **options):
        project = AnnotationProject.objects.filter(pk=options["project"]).first()
        if project is None:
            raise CommandError(f"no annotation project {options['project']}")
        names = [name for group in options["verifiers"] for name in group]
        try:
            uncertainty = evaluation.Uncertainty.parse({"bootstrap": options["bootstrap"], "seed": options["seed"]})
            result = evaluation.meta_evaluate(project, names, uncertainty)
        except evaluation.EvaluationError as error:
            raise CommandError(str(error)) from error

        if options["csv_path"]:
            path = Path(options["csv_path"])
            if not path.parent.is_dir():
                raise CommandError(f"{path.parent}: no such directory")
            path.write_text(evaluation.meta_evaluation_csv(result), encoding="utf-8")
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict(), indent=2))
        else:
            self.stdout.write(self.render(result))
            if options["csv_path"]:
                self.stdout.write(f"CSV written to {options['csv_path']}")

    def render(self, result: evaluation.MetaEvaluation) -> str:
        buffer = io.StringIO()
        console = Console(file=buffer, width=140, color_system=None)
        console.print(
            f"Project {result.project.pk} ({result.project.name}): {result.labeled_items} labeled item(s) "
            "(resolved, not excluded, not gold)"
        )
        if not result.reports:
            console.print("No verifier has a verdict on this project's completions.")
        for report in result.reports:
            console.print()
            console.print(
                f"{report.verifier.name} ({report.verifier.get_kind_display()}): verdicts on {report.judged_items} of "
                f"{report.labeled_items} labeled item(s), coverage {percent(report.coverage)}%"
            )
            if report.missing_item_ids:
                shown = ", ".join(str(item) for item in report.missing_item_ids[:20])
                more = report.missing_verdicts - min(20, len(report.missing_item_ids))
                console.print(f"  items without a verdict: {shown}{f' and {more} more' if more > 0 else ''}")
            overall = (report.intervals or {}).get("overall") or {}
            if overall.get("accuracy", {}).get("low") is not None:
                console.print(
                    "  95% intervals (questions resampled): "
                    + ", ".join(
                        f"{name} {ratio(overall[figure]['value'])} [{ratio(overall[figure]['low'])}, "
                        f"{ratio(overall[figure]['high'])}]"
                        for figure, name in (("accuracy", "accuracy"), ("macro_f1", "macro-F1"))
                        if overall[figure]["low"] is not None
                    )
                )
            console.print(self._class_table(report))
            console.print(self._binary_table(report))
        if result.agreement:
            console.print()
            console.print(self._agreement_table(result))
        for comparison in result.comparisons:
            console.print()
            for sentence in comparison["sentences"]:
                console.print(sentence["text"])
        return buffer.getvalue().rstrip("\n")

    def _class_table(self, report: evaluation.VerifierReport) -> Table:
        table = Table(title="Accuracy % per coarse answer class")
        by_class = report.evaluation.by_answer_class
        for letter in COARSE_CLASSES:
            table.add_column(letter, justify="right")
        table.add_column("mean", justify="right")
        table.add_row(
            *[
                f"{percent(by_class[letter].accuracy)} (n={by_class[letter].n})" if letter in by_class else "-"
                for letter in COARSE_CLASSES
            ],
            percent(report.evaluation.mean_class_accuracy),
        )
        return table

    def _binary_table(self, report: evaluation.VerifierReport) -> Table:
        table = Table(title="Against human labels (positive = correct; inconclusive counts as wrong)")
        for column in (
            "scope",
            "n",
            "acc %",
            "inconcl. %",
            "TP",
            "FP",
            "TN",
            "FN",
            "TPR",
            "TNR",
            "PPV",
            "NPV",
            "macro-F1",
        ):
            table.add_column(column, justify="left" if column == "scope" else "right")

        def add(scope: str, values: BinaryReport) -> None:
            table.add_row(
                scope,
                str(values.n),
                percent(values.accuracy),
                percent(values.inconclusive_rate),
                str(values.tp),
                str(values.fp),
                str(values.tn),
                str(values.fn),
                ratio(values.tpr),
                ratio(values.tnr),
                ratio(values.ppv),
                ratio(values.npv),
                ratio(values.macro_f1),
            )

        add("overall", report.evaluation.overall)
        for model, values in sorted(report.evaluation.by_model.items()):
            add(model, values)
        return table

    def _agreement_table(self, result: evaluation.MetaEvaluation) -> Table:
        table = Table(title="Agreement between verifiers on shared items: raw agreement % / Cohen's kappa (items)")
        names = result.verifier_names
        table.add_column("")
        for name in names:
            table.add_column(name, justify="right")
        for first in names:
            cells: list[Any] = []
            for second in names:
                cell = result.agreement[first][second]
                cells.append(f"{percent(cell['agreement'])} / {ratio(cell['kappa'])} ({cell['shared_items']})")
            table.add_row(first, *cells)
        return table
