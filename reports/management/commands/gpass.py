"""Pass@k, G-Pass@k_tau and mG-Pass@k per model from a JSONL file of graded samples."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from rich.console import Console
from rich.table import Table

from core.metrics.passk import (
    evaluate_models,
    g_pass_key,
    mg_pass_key,
    normalize_sample_row,
    pass_key,
    tau_fraction,
)


class Command(BaseCommand):
    help = (
        "Model stability from graded samples: reads JSONL rows {question_id, model, correct, sample_index?, greedy?} "
        "and prints Pass@k, G-Pass@k_tau and mG-Pass@k per model, averaged over questions with bootstrap 95% intervals."
    )

    def add_arguments(self, parser):
        parser.add_argument("input", help="JSONL file, one graded sample per line")
        parser.add_argument(
            "--k", dest="ks", type=int, nargs="+", default=[4, 8, 16], help="values of k (default: 4 8 16)"
        )
        parser.add_argument(
            "--tau",
            dest="taus",
            nargs="+",
            default=["0.25", "0.5", "0.75", "1.0"],
            help="thresholds in (0, 1]; keys keep the spelling given here (default: 0.25 0.5 0.75 1.0)",
        )
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")
        parser.add_argument(
            "--bootstrap", type=int, default=1000, help="bootstrap resamples for the 95%% intervals; 0 turns them off"
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")

    def handle(self, *args, **options):
        for k in options["ks"]:
            if k < 1:
                raise CommandError(f"--k values must be positive integers, got {k}")
        for tau in options["taus"]:
            try:
                tau_fraction(tau)
            except ValueError as error:
                raise CommandError(f"--tau: {error}") from error
        if options["bootstrap"] < 0:
            raise CommandError(f"--bootstrap must be >= 0, got {options['bootstrap']}")

        rows = self._read_rows(Path(options["input"]))
        try:
            result = evaluate_models(
                rows, options["ks"], options["taus"], bootstrap=options["bootstrap"], seed=options["seed"]
            )
        except ValueError as error:
            raise CommandError(str(error)) from error

        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.stdout.write(self._render_table(result, options["ks"], options["taus"]))

    def _read_rows(self, path: Path) -> list[dict[str, Any]]:
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        rows: list[dict[str, Any]] = []
        with path.open(encoding="utf-8") as handle:
            for line_number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    raw = json.loads(line)
                except json.JSONDecodeError as error:
                    raise CommandError(f"{path}, line {line_number}: not valid JSON ({error.msg})") from error
                try:
                    rows.append(normalize_sample_row(raw))
                except ValueError as error:
                    raise CommandError(f"{path}, line {line_number}: {error}") from error
        if not rows:
            raise CommandError(f"{path}: no samples")
        return rows

    def _render_table(self, result: dict[str, Any], ks: list[int], taus: list[str]) -> str:
        models = list(result["models"])
        table = Table(title="Model stability in % (mean over questions, 95% bootstrap interval)")
        table.add_column("metric")
        for model in models:
            table.add_column(model, justify="right")

        def cell(entry: dict[str, Any], key: str) -> str:
            value = entry.get(key)
            if value is None:
                return "-"
            interval = entry["ci"].get(key) if key in entry["ci"] else None
            text = f"{100 * value:.2f}"
            return f"{text} [{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]" if interval else text

        table.add_row("questions", *[str(result["models"][m]["n_questions"]) for m in models])
        table.add_row(
            "samples / question",
            *[
                "{min}-{max}".format(**result["models"][m]["samples_per_question"])
                if result["models"][m]["samples_per_question"]
                else "-"
                for m in models
            ],
        )
        for label, key in (("accuracy", "accuracy"), ("greedy accuracy", "greedy_accuracy")):
            table.add_row(label, *[cell(result["models"][m], key) for m in models])
        for k in dict.fromkeys(ks):
            keys = [pass_key(k), *(g_pass_key(k, tau) for tau in dict.fromkeys(taus)), mg_pass_key(k)]
            for key in keys:
                table.add_row(key, *[cell(result["models"][m], key) for m in models])

        buffer = io.StringIO()
        Console(file=buffer, width=max(100, 30 + 28 * len(models)), color_system=None).print(table)
        for warning in result["warnings"]:
            buffer.write(f"warning: {warning}\n")
        return buffer.getvalue().rstrip("\n")
