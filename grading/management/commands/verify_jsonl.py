"""Run the rule-based verifier over a VerifyBench-shaped JSONL file. Does not touch the database."""

from __future__ import annotations

import json
import os

from django.core.management.base import BaseCommand, CommandError

from grading.answercheck import BatchItem, verify_batch

REQUIRED_FIELDS = ("completion_id", "answer", "completion")


def read_rows(path: str) -> list[dict]:
    rows = []
    try:
        handle = open(path, encoding="utf-8")
    except OSError as error:
        raise CommandError(f"cannot open {path}: {error.strerror}") from error
    with handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise CommandError(
                    f"{path}, line {line_number}: not valid JSON ({error.msg} at column {error.colno})"
                ) from error
            if not isinstance(row, dict):
                raise CommandError(f"{path}, line {line_number}: expected a JSON object, got {type(row).__name__}")
            missing = [field for field in REQUIRED_FIELDS if field not in row]
            if missing:
                raise CommandError(f"{path}, line {line_number}: missing field(s) {', '.join(missing)}")
            for field in ("answer", "completion"):
                if not isinstance(row[field], str):
                    raise CommandError(f"{path}, line {line_number}: field {field} must be a string")
            rows.append(row)
    return rows


class Command(BaseCommand):
    help = (
        "Verify completions in a VerifyBench-shaped JSONL file (completion_id, question, answer, completion, "
        "answer_type?) and write one verdict row per input line."
    )

    def add_arguments(self, parser):
        parser.add_argument("input", help="input JSONL")
        parser.add_argument("output", help="output JSONL (overwritten)")
        parser.add_argument("--timeout", type=float, default=5.0, help="seconds allowed per distinct comparison")
        parser.add_argument("--workers", type=int, default=1, help="processes to use")

    def handle(self, *args, **options):
        if options["timeout"] <= 0:
            raise CommandError("--timeout must be positive")
        if options["workers"] < 1:
            raise CommandError("--workers must be at least 1")
        rows = read_rows(options["input"])
        items = [
            BatchItem(
                completion=row["completion"],
                reference=row["answer"],
                answer_type=row.get("answer_type") or None,
                question=row.get("question") or None,
            )
            for row in rows
        ]
        verdicts = verify_batch(items, timeout=options["timeout"], workers=options["workers"])
        temporary = options["output"] + ".partial"
        with open(temporary, "w", encoding="utf-8") as out:
            for row, verdict in zip(rows, verdicts):
                out.write(
                    json.dumps(
                        {
                            "completion_id": row["completion_id"],
                            "predicted_correct": verdict.predicted_correct,
                            "extracted_answer": verdict.extracted_answer,
                            "reference_answer": verdict.reference_answer,
                            "explanation": verdict.explanation,
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
        os.replace(temporary, options["output"])
        counts = {"correct": 0, "incorrect": 0, "inconclusive": 0}
        for verdict in verdicts:
            counts[verdict.status] += 1
        self.stdout.write(
            f"{len(verdicts)} rows: {counts['correct']} correct, {counts['incorrect']} incorrect, "
            f"{counts['inconclusive']} inconclusive -> {options['output']}"
        )
