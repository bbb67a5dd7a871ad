"""Import of MathArena proof files: problems with their grading schemes, and model proofs.

A line with a `grading_scheme` is a problem (`problem_idx, problem, points, grading_scheme [{title, points, desc}],
sample_solution`): it becomes a ProofProblem with its official solution and a one-chain rubric. A line with an
`answer` is a model output (`problem_idx, model_name, model_config, idx_answer, answer`): it becomes a
ProofSubmission of that problem (from the same file or already stored). Both may share one file.

The rules are the ones of every import: each line is validated on its own and against the lines before it;
any invalid line or conflict with a stored row rejects the whole file and writes nothing, unless
`skip_invalid` imports the valid lines and writes the others with their reasons to a rejects file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from verifybench.importing import IDENTIFIER, LIST, NON_NEGATIVE_INTEGER, TEXT, TEXT_OR_OBJECT, ImportReport
from verifybench.importing.report import Conflict, LineError
from verifybench.importing.sources import decode_json_line
from verifybench.services import ImportRejected

from . import scoring as proof_scoring
from .models import Competition, ProofProblem, ProofSubmission
from .services import add_problem, get_or_create_competition

FORMAT_NAME = "matharena-proofs"
PROBLEM_FIELDS = {"problem_idx": IDENTIFIER, "problem": TEXT, "points": NON_NEGATIVE_INTEGER, "grading_scheme": LIST}
OUTPUT_FIELDS = {
    "problem_idx": IDENTIFIER,
    "model_name": TEXT,
    "model_config": TEXT_OR_OBJECT,
    "idx_answer": NON_NEGATIVE_INTEGER,
    "answer": TEXT,
}


@dataclass
class ProofImportReport(ImportReport):
    competition_id: int | None = None
    problems_created: int = 0
    problems_unchanged: int = 0
    rubrics_created: int = 0
    submissions_created: int = 0
    submissions_unchanged: int = 0

    @property
    def changed_anything(self) -> bool:
        return bool(self.problems_created or self.submissions_created or self.dataset_created)

    def destination(self) -> str:
        return f"competition {self.dataset_name!r} (format {FORMAT_NAME})"

    def counts_line(self) -> str:
        return (
            f"problems: {self.problems_created} created, {self.problems_unchanged} unchanged; "
            f"rubrics: {self.rubrics_created} created; "
            f"proofs: {self.submissions_created} created, {self.submissions_unchanged} unchanged."
        )


@dataclass
class _ProblemLine:
    line: int
    raw: bytes
    problem_idx: str
    statement: str
    points: int
    rubric: dict
    solution: str
    position: int


@dataclass
class _OutputLine:
    line: int
    raw: bytes
    problem_idx: str
    model_name: str
    model_config: Any
    run_index: int
    text: str


@dataclass
class _Parsed:
    problems: dict[str, _ProblemLine] = field(default_factory=dict)
    outputs: list[_OutputLine] = field(default_factory=list)
    rejected: list[tuple[int, bytes, list]] = field(default_factory=list)
    line_count: int = 0


def _json_type(value: Any) -> str:
    return {
        type(None): "null",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _check_fields(obj: dict, fields: dict, number: int) -> list[LineError]:
    errors = []
    for name, kind in fields.items():
        if name not in obj:
            errors.append(LineError(number, name, "required field is missing"))
        elif not kind.check(obj[name]):
            errors.append(LineError(number, name, f"must be {kind.expected}, got {_json_type(obj[name])}"))
    return errors


def _has_unstorable(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value or any(0xD800 <= ord(ch) <= 0xDFFF for ch in value)
    if isinstance(value, list):
        return any(_has_unstorable(v) for v in value)
    if isinstance(value, dict):
        return any(_has_unstorable(k) or _has_unstorable(v) for k, v in value.items())
    return False


def _scheme_errors(scheme: list, number: int) -> list[LineError]:
    errors = []
    for position, entry in enumerate(scheme, start=1):
        where = f"grading_scheme[{position}]"
        if not isinstance(entry, dict):
            errors.append(
                LineError(number, where, f"must be an object {{title, points, desc}}, got {_json_type(entry)}")
            )
            continue
        if not isinstance(entry.get("title"), str) or not entry["title"].strip():
            errors.append(LineError(number, f"{where}.title", "must be a non-empty string"))
        points = entry.get("points")
        if isinstance(points, bool) or not isinstance(points, int) or points < 0:
            errors.append(LineError(number, f"{where}.points", f"must be a non-negative integer, got {points!r}"))
        if "desc" in entry and not isinstance(entry["desc"], str):
            errors.append(LineError(number, f"{where}.desc", "must be a string"))
    return errors


def _parse_line(number: int, raw: bytes, parsed: _Parsed) -> tuple[_ProblemLine | _OutputLine | None, list[LineError]]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [LineError(number, "", f"invalid UTF-8 at byte {exc.start + 1} of the line")]
    obj, error = decode_json_line(text)
    if error:
        return None, [LineError(number, "", error)]
    if not isinstance(obj, dict):
        return None, [LineError(number, "", f"expected a JSON object, got {_json_type(obj)}")]
    if _has_unstorable(obj):
        return None, [
            LineError(number, "", "contains a NUL character or an unpaired surrogate, which cannot be stored")
        ]
    if "grading_scheme" in obj:
        errors = _check_fields(obj, PROBLEM_FIELDS, number)
        solution = obj.get("sample_solution")
        if solution is not None and not isinstance(solution, str):
            errors.append(LineError(number, "sample_solution", f"must be a string, got {_json_type(solution)}"))
        if errors:
            return None, errors
        if obj["points"] <= 0:
            return None, [LineError(number, "points", "must be a positive integer")]
        errors = _scheme_errors(obj["grading_scheme"], number)
        if errors:
            return None, errors
        problem_idx = str(obj["problem_idx"])
        rubric = proof_scoring.rubric_from_grading_scheme(obj["grading_scheme"], max_points=obj["points"])
        problems = proof_scoring.validate_rubric(rubric)
        if problems:
            return None, [LineError(number, "grading_scheme", reason) for reason in problems]
        if problem_idx in parsed.problems:
            first = parsed.problems[problem_idx].line
            return None, [LineError(number, "problem_idx", f"problem {problem_idx!r} is already given on line {first}")]
        return _ProblemLine(
            line=number,
            raw=raw,
            problem_idx=problem_idx,
            statement=obj["problem"],
            points=obj["points"],
            rubric=json.loads(json.dumps(proof_scoring.rubric_to_dict(rubric))),
            solution=solution or "",
            position=_position(obj["problem_idx"], number),
        ), []
    if "answer" in obj or "model_name" in obj:
        errors = _check_fields(obj, OUTPUT_FIELDS, number)
        if errors:
            return None, errors
        if not obj["model_name"].strip():
            return None, [LineError(number, "model_name", "must not be empty")]
        config = obj["model_config"]
        return _OutputLine(
            line=number,
            raw=raw,
            problem_idx=str(obj["problem_idx"]),
            model_name=obj["model_name"].strip(),
            model_config=config if isinstance(config, dict) else {"name": config},
            run_index=obj["idx_answer"],
            text=obj["answer"],
        ), []
    return None, [
        LineError(
            number,
            "",
            "cannot tell whether the line is a problem (needs grading_scheme) or a model proof "
            f"(needs answer); fields: {', '.join(sorted(obj)) or '(none)'}",
        )
    ]


def _position(problem_idx: Any, number: int) -> int:
    if isinstance(problem_idx, int) and not isinstance(problem_idx, bool):
        return problem_idx
    return int(problem_idx) if str(problem_idx).isdigit() else number


def _read(lines) -> _Parsed:
    parsed = _Parsed()
    seen_outputs: dict[tuple[str, str, int], int] = {}
    for number, raw in enumerate(lines, start=1):
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        parsed.line_count += 1
        record, errors = _parse_line(number, raw, parsed)
        if isinstance(record, _OutputLine):
            key = (record.problem_idx, record.model_name, record.run_index)
            if key in seen_outputs:
                errors = [
                    LineError(
                        number,
                        "idx_answer",
                        f"run {record.run_index} of {record.model_name!r} on problem "
                        f"{record.problem_idx!r} is already given on line {seen_outputs[key]}",
                    )
                ]
                record = None
            else:
                seen_outputs[key] = number
        if errors:
            parsed.rejected.append((number, raw, errors))
        elif isinstance(record, _ProblemLine):
            parsed.problems[record.problem_idx] = record
        else:
            parsed.outputs.append(record)
    return parsed


def _write_rejects(path: Path, rejected: list[tuple[int, bytes, list]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for number, raw, problems in sorted(rejected, key=lambda entry: entry[0]):
            handle.write(
                json.dumps(
                    {
                        "line": number,
                        "errors": [{"field": problem.field, "reason": problem.reason} for problem in problems],
                        "original": raw.decode("utf-8", "replace").rstrip("\r\n"),
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )


def import_matharena_proofs(
    *,
    competition_name: str,
    source,
    skip_invalid: bool = False,
    rejects_path=None,
    created_by=None,
    competition_date=None,
    source_name: str = "",
    workspace=None,
) -> ProofImportReport:
    """Import a MathArena proof file (a path or a binary file object) into the competition `competition_name`.

    Raises ImportRejected (nothing written) when any line is invalid or conflicts with a stored row, unless
    `skip_invalid`; then the other lines are imported and the rejected ones written to `rejects_path`
    (default `<file>.rejects.jsonl`).
    """
    if isinstance(source, (str, os.PathLike)):
        source_name = source_name or str(source)
    report = ProofImportReport(
        format=FORMAT_NAME,
        dataset_name=(competition_name or "").strip(),
        source_name=source_name or getattr(source, "name", "") or "",
        skip_invalid=skip_invalid,
    )
    if not report.dataset_name:
        report.add_error(LineError(0, "dataset", "a competition name is required (--dataset)"))
        raise ImportRejected(report)
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as handle:
            parsed = _read(handle)
    else:
        parsed = _read(source)
    report.lines = parsed.line_count

    with transaction.atomic():
        existed = Competition.objects.filter(name=report.dataset_name).exists()
        competition = get_or_create_competition(
            report.dataset_name, date=competition_date, created_by=created_by, workspace=workspace
        )
        stored = {problem.problem_idx: problem for problem in competition.problems.all()}
        rejected = list(parsed.rejected)
        to_create: list[_ProblemLine] = []
        conflicted_problems: set[str] = set()
        for line in parsed.problems.values():
            existing = stored.get(line.problem_idx)
            if existing is None:
                to_create.append(line)
                continue
            conflict = _problem_conflict(existing, line)
            if conflict:
                report.add_conflict(Conflict(line.line, line.problem_idx, None, *conflict))
                rejected.append((line.line, line.raw, [LineError(line.line, *conflict)]))
                conflicted_problems.add(line.problem_idx)
            else:
                report.problems_unchanged += 1
        for line in to_create:
            problem = add_problem(
                competition,
                problem_idx=line.problem_idx,
                statement=line.statement,
                max_points=line.points,
                solutions=[line.solution],
                rubric=line.rubric,
                position=line.position,
                created_by=created_by,
            )
            stored[line.problem_idx] = problem
            report.problems_created += 1
            report.rubrics_created += 1
        existing_runs = {
            (problem_idx, model, run): text
            for problem_idx, model, run, text in ProofSubmission.objects.filter(
                problem__competition=competition
            ).values_list("problem__problem_idx", "model_name", "run_index", "text")
        }
        new_submissions = []
        for line in parsed.outputs:
            problem = stored.get(line.problem_idx)
            if problem is None or line.problem_idx in conflicted_problems:
                error = LineError(
                    line.line,
                    "problem_idx",
                    f"no problem {line.problem_idx!r} in this file or in competition {competition.name!r}",
                )
                rejected.append((line.line, line.raw, [error]))
                report.add_error(error)
                continue
            key = (line.problem_idx, line.model_name, line.run_index)
            if key in existing_runs:
                if existing_runs[key] != line.text:
                    reason = "a different proof is already stored for this model and run"
                    report.add_conflict(
                        Conflict(line.line, line.problem_idx, f"{line.model_name}#{line.run_index}", "answer", reason)
                    )
                    rejected.append((line.line, line.raw, [LineError(line.line, "answer", reason)]))
                else:
                    report.submissions_unchanged += 1
                continue
            new_submissions.append(
                ProofSubmission(
                    problem=problem,
                    model_name=line.model_name,
                    model_config=line.model_config,
                    run_index=line.run_index,
                    text=line.text,
                )
            )
        for submission in new_submissions:
            submission.save()
        report.submissions_created = len(new_submissions)
        for _number, _raw, problems in parsed.rejected:
            for problem in problems:
                report.add_error(problem)
        report.rejected_lines = len({number for number, _raw, _problems in rejected})
        accepted = (
            report.problems_created + report.problems_unchanged + len(new_submissions) + report.submissions_unchanged
        )
        if report.lines == 0:
            report.add_error(LineError(0, "", "the file is empty: it has no rows to import"))
        if (report.has_problems and not skip_invalid) or accepted == 0:
            report.ok = False
            report.rejected_lines = 0
            report.problems_created = report.problems_unchanged = report.rubrics_created = 0
            report.submissions_created = report.submissions_unchanged = 0
            transaction.set_rollback(True)
        else:
            report.ok = True
            report.competition_id = competition.pk
            report.dataset_id = competition.dataset_id
            report.dataset_created = not existed
    if not report.ok:
        raise ImportRejected(report)
    if rejected and skip_invalid:
        path = (
            Path(rejects_path)
            if rejects_path
            else Path(f"{os.fspath(source)}.rejects.jsonl")
            if isinstance(source, (str, os.PathLike))
            else Path(f"{report.dataset_name}.rejects.jsonl")
        )
        _write_rejects(path, rejected)
        report.rejects_path = str(path)
    return report


def _problem_conflict(existing: ProofProblem, line: _ProblemLine) -> tuple[str, str] | None:
    if existing.statement != line.statement:
        return "problem", f"problem {line.problem_idx!r} is stored with a different statement"
    if existing.max_points != line.points:
        return "points", f"problem {line.problem_idx!r} is stored worth {existing.max_points} points, not {line.points}"
    first = existing.rubrics.order_by("version").first()
    if first is not None and first.spec != line.rubric:
        return "grading_scheme", (
            f"problem {line.problem_idx!r} is stored with a different grading scheme; "
            "edit its rubric in the app to make a new version"
        )
    return None


def looks_like_proofs(first_record: dict) -> bool:
    """A MathArena proofs file: its first line is a problem with its grading scheme, or a model's proof."""
    keys = first_record.keys()
    if {"grading_scheme", "points"} <= keys:
        return True
    # a proof has neither a gold answer nor its problem's text (a MathArena final-answer row has both)
    return {"problem_idx", "model_name", "idx_answer", "answer"} <= keys and not {"gold_answer", "problem"} & keys


def import_into_competition(
    *,
    dataset_name: str,
    source,
    skip_invalid: bool = False,
    rejects_path=None,
    created_by=None,
    source_name: str = "",
    workspace=None,
) -> ProofImportReport:
    """verifybench's import entry point for this format: the dataset name is the competition's name."""
    return import_matharena_proofs(
        competition_name=dataset_name,
        source=source,
        skip_invalid=skip_invalid,
        rejects_path=rejects_path,
        created_by=created_by,
        source_name=source_name,
        workspace=workspace,
    )
