"""Verdicts computed elsewhere (a lab's own harness, a provider's batch results), imported as the verdicts of external
verifier configurations.

A verdict file is JSON Lines, CSV or Parquet, one verdict per row: `completion_id` (the dataset's own id of the
completion; `question_id` too where a completion id repeats across questions), `verifier` (a name: an external
configuration made on first use, with its provenance) and `verdict` (`correct` / `incorrect` / `inconclusive`, or
true / false / null), optionally `raw_output`, `prompt_tokens`, `completion_tokens`, `cost` and `judged_at`. A
completions file with one column per judge is read the same way when the columns are named (`verdict_columns`).

The rules are the import's: every row is checked (an unknown completion or verifier value, a duplicate, a bad
number); any problem rejects the whole file and writes nothing unless `skip_invalid`, which imports the valid rows
and writes the others, with their reasons, to the rejects file. A verdict already stored with the same value is
left as it is (a second import changes nothing); a different value for the same verifier and completion is a
conflict, reported and not written. Imported verdicts go through `verdict_writes`, so projects' figures move with
them as with a run's.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.utils import timezone

from core import workspaces
from verifybench.importing.report import Conflict, ImportReport, LineError
from verifybench.models import Completion, Dataset
from verifybench.services import ImportRejected
from verifybench.source_files import RejectsFile, default_rejects_path, open_rows

from .models import Verdict, VerifierConfig
from .verdict_writes import write_verdicts

FORMAT_NAME = "verdicts"
WRITE_CHUNK = 5000
MAX_VERIFIER_NAME = 200

_CORRECT, _INCORRECT, _INCONCLUSIVE = Verdict.Status.CORRECT, Verdict.Status.INCORRECT, Verdict.Status.INCONCLUSIVE
VERDICT_WORDS = {
    "correct": _CORRECT,
    "incorrect": _INCORRECT,
    "inconclusive": _INCONCLUSIVE,
    "true": _CORRECT,
    "false": _INCORRECT,
    "null": _INCONCLUSIVE,
    "none": _INCONCLUSIVE,
    "yes": _CORRECT,
    "no": _INCORRECT,
    "1": _CORRECT,
    "0": _INCORRECT,
}


@dataclass
class VerdictImportReport(ImportReport):
    verdicts_created: int = 0
    verdicts_unchanged: int = 0
    verifiers_created: list[str] = field(default_factory=list)
    verifiers: list[str] = field(default_factory=list)

    @property
    def changed_anything(self) -> bool:
        return bool(self.verdicts_created)

    def destination(self) -> str:
        return f"the verdicts on dataset {self.dataset_name!r} (format {FORMAT_NAME})"

    def counts_line(self) -> str:
        made = f" (new: {', '.join(self.verifiers_created)})" if self.verifiers_created else ""
        return (
            f"verdicts: {self.verdicts_created} written, {self.verdicts_unchanged} unchanged; "
            f"verifiers: {', '.join(self.verifiers) or 'none'}{made}."
        )


@dataclass(frozen=True)
class ImportedVerdict:
    """A verdict as `verdict_writes` stores it."""

    status: str
    raw_output: str
    prompt_tokens: int
    completion_tokens: int
    cost: Decimal
    reason: str
    explanation: str = "imported verdict"
    extracted_answer: str = ""


@dataclass
class _Row:
    line: int
    raw: bytes
    verifier: str
    completion_pk: int
    question_id: str
    completion_id: str
    verdict: ImportedVerdict


def looks_like_verdicts(first_record: dict) -> bool:
    """A verdict file in the long shape: its first row names a completion, a verifier and a verdict."""
    return {"completion_id", "verifier", "verdict"} <= first_record.keys()


def verdict_status(value) -> str | None:
    """The verdict a file's value means, or None when it means none of them."""
    if value is None:
        return _INCONCLUSIVE
    if isinstance(value, bool):
        return _CORRECT if value else _INCORRECT
    if isinstance(value, int) and value in (0, 1):
        return _CORRECT if value else _INCORRECT
    if isinstance(value, str):
        return VERDICT_WORDS.get(value.strip().lower())
    return None


def _count(value, name: str, errors: list[str]) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        errors.append(f"{name}: must be a non-negative integer, got {value!r}")
        return 0
    return value


def _cost(value, errors: list[str]) -> Decimal:
    if value is None or value == "":
        return Decimal(0)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        errors.append(f"cost: must be a number, got {value!r}")
        return Decimal(0)
    try:
        cost = Decimal(str(value).strip())
    except InvalidOperation:
        errors.append(f"cost: must be a number, got {value!r}")
        return Decimal(0)
    if not cost.is_finite() or cost < 0 or cost >= Decimal(10) ** 6:
        errors.append(f"cost: must be between 0 and 1,000,000, got {value!r}")
        return Decimal(0)
    return cost.quantize(Decimal("0.00000001"))


def _judged_at(value, errors: list[str]) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        try:
            return datetime.datetime.fromisoformat(value.strip().replace("Z", "+00:00")).isoformat()
        except ValueError:
            pass
    errors.append(f"judged_at: must be an ISO 8601 date and time, got {value!r}")
    return ""


def _identifier(value) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


class _Completions:
    """The dataset's completions by their own ids (and question ids, where a completion id repeats)."""

    def __init__(self, dataset: Dataset):
        self.by_id: dict[str, list[tuple[str, int]]] = {}
        rows = Completion.objects.filter(question__dataset=dataset).values_list(
            "external_id", "question__external_id", "pk"
        )
        for completion_id, question_id, pk in rows.iterator(chunk_size=20_000):
            self.by_id.setdefault(completion_id, []).append((question_id, pk))

    def find(self, completion_id: str, question_id: str | None) -> tuple[int | None, str, str]:
        """(pk, question id) of the completion, or (None, "", reason)."""
        found = self.by_id.get(completion_id, [])
        if question_id is not None:
            found = [entry for entry in found if entry[0] == question_id]
        if len(found) == 1:
            return found[0][1], found[0][0], ""
        if not found:
            where = f" of question {question_id!r}" if question_id is not None else ""
            return None, "", f"no completion {completion_id!r}{where} in the dataset"
        return None, "", f"{len(found)} completions of the dataset have the id {completion_id!r}: give question_id"


def _read_rows(
    source, source_name: str, report: VerdictImportReport, verdict_columns: Sequence[str], completions: _Completions
) -> tuple[list[_Row], list[tuple[int, bytes, list[LineError]]]]:
    """Every row checked on its own and against the rows before it: (accepted rows, rejected lines)."""
    accepted: list[_Row] = []
    rejected: list[tuple[int, bytes, list[LineError]]] = []
    seen: dict[tuple[str, int], int] = {}
    with open_rows(source, source_name=source_name) as (rows, _size, report.file_type):
        for row in rows:
            report.lines += 1
            problems: list[LineError] = []
            if row.error:
                rejected.append((row.number, row.raw, [LineError(row.number, "", row.error)]))
                continue
            obj = row.obj if isinstance(row.obj, dict) else None
            if obj is None:
                rejected.append((row.number, row.raw, [LineError(row.number, "", "a row must be an object")]))
                continue
            completion_id = _identifier(obj.get("completion_id"))
            question_id = _identifier(obj.get("question_id")) if obj.get("question_id") is not None else None
            if completion_id is None:
                problems.append(LineError(row.number, "completion_id", "required: the dataset's id of the completion"))
            if verdict_columns:
                pairs = [(name, obj.get(name)) for name in verdict_columns if name in obj]
                if not pairs:
                    problems.append(LineError(row.number, "", f"none of the verdict columns {list(verdict_columns)}"))
            else:
                verifier = obj.get("verifier")
                if not isinstance(verifier, str) or not verifier.strip():
                    problems.append(LineError(row.number, "verifier", "required: the name of the verifier"))
                    verifier = ""
                pairs = [(verifier.strip(), obj.get("verdict"))] if "verdict" in obj else []
                if "verdict" not in obj:
                    problems.append(LineError(row.number, "verdict", "required: correct, incorrect or inconclusive"))
            found_pk, found_question = None, ""
            if completion_id is not None:
                found_pk, found_question, missing = completions.find(completion_id, question_id)
                if found_pk is None:
                    problems.append(LineError(row.number, "completion_id", missing))
            errors: list[str] = []
            raw_output = obj.get("raw_output") if not verdict_columns else None
            if raw_output is not None and not isinstance(raw_output, str):
                errors.append(f"raw_output: must be text, got {type(raw_output).__name__}")
                raw_output = None
            prompt_tokens = _count(obj.get("prompt_tokens") if not verdict_columns else None, "prompt_tokens", errors)
            completion_tokens = _count(
                obj.get("completion_tokens") if not verdict_columns else None, "completion_tokens", errors
            )
            cost = _cost(obj.get("cost") if not verdict_columns else None, errors)
            judged_at = _judged_at(obj.get("judged_at"), errors)
            problems.extend(LineError(row.number, *error.split(": ", 1)) for error in errors)
            line_rows = []
            for verifier, value in pairs:
                status = verdict_status(value)
                if len(verifier) > MAX_VERIFIER_NAME:
                    problems.append(LineError(row.number, "verifier", f"at most {MAX_VERIFIER_NAME} characters"))
                    continue
                if status is None:
                    column = verifier if verdict_columns else "verdict"
                    problems.append(
                        LineError(
                            row.number,
                            column,
                            f"{value!r} is not a verdict: correct, incorrect or inconclusive (or true, false, null)",
                        )
                    )
                    continue
                if found_pk is None or not verifier:
                    continue
                earlier = seen.get((verifier, found_pk))
                if earlier is not None:
                    problems.append(
                        LineError(row.number, "completion_id", f"a second verdict of {verifier} (line {earlier})")
                    )
                    continue
                reason = f"imported from {source_name or 'a file'}" + (f"; judged at {judged_at}" if judged_at else "")
                line_rows.append(
                    _Row(
                        row.number,
                        row.raw,
                        verifier,
                        found_pk,
                        found_question,
                        completion_id or "",
                        ImportedVerdict(
                            status, raw_output or "", prompt_tokens, completion_tokens, cost, reason=reason
                        ),
                    )
                )
            if problems:
                rejected.append((row.number, row.raw, problems))
                continue
            for accepted_row in line_rows:
                seen[(accepted_row.verifier, accepted_row.completion_pk)] = row.number
            accepted.extend(line_rows)
    return accepted, rejected


def _verifiers(names: Iterable[str], dataset: Dataset) -> tuple[dict[str, VerifierConfig], dict[str, str], list[str]]:
    """(configurations by name, a reason per name that cannot take imported verdicts, names to create)."""
    names = sorted(set(names))
    stored = {config.name: config for config in VerifierConfig.objects.filter(name__in=names)}
    refused: dict[str, str] = {}
    for name, config in stored.items():
        if config.kind != VerifierConfig.Kind.EXTERNAL:
            refused[name] = (
                f"{name} is a {config.get_kind_display().lower()} configuration; imported verdicts need a name of their "
                "own"
            )
        elif config.workspace_id not in (None, dataset.workspace_id):
            refused[name] = f"{name} belongs to another workspace"
    return stored, refused, [name for name in names if name not in stored]


def import_verdicts(
    *,
    dataset_name: str,
    source,
    verdict_columns: Sequence[str] = (),
    skip_invalid: bool = False,
    rejects_path=None,
    created_by=None,
    source_name: str = "",
    workspace=None,
) -> VerdictImportReport:
    """Import a verdict file (a path or a binary file object) about the completions of the dataset `dataset_name`.
    Raises ImportRejected (nothing written) when a row is invalid or conflicts with a stored verdict, unless
    `skip_invalid`."""
    if isinstance(source, (str, os.PathLike)):
        source_name = source_name or str(source)
    else:
        source_name = source_name or getattr(source, "name", "") or ""
    shown_source = os.path.basename(source_name)
    report = VerdictImportReport(
        format=FORMAT_NAME,
        dataset_name=(dataset_name or "").strip(),
        source_name=source_name,
        skip_invalid=skip_invalid,
    )
    dataset = Dataset.objects.filter(name=report.dataset_name).first() if report.dataset_name else None
    if dataset is not None and created_by is not None and not workspaces.can_research(created_by, dataset.workspace_id):
        dataset = None  # another workspace's dataset is not disclosed
    if dataset is None:
        report.add_error(
            LineError(0, "dataset", f"no dataset named {report.dataset_name!r}: import its completions first")
        )
        raise ImportRejected(report)
    report.dataset_id = dataset.pk
    completions = _Completions(dataset)
    accepted, rejected = _read_rows(source, shown_source, report, verdict_columns, completions)
    del completions

    stored, refused, _new = _verifiers((row.verifier for row in accepted), dataset)
    kept: list[_Row] = []
    refused_lines: dict[int, tuple[bytes, list[LineError]]] = {}
    stored_status: dict[tuple[int, int], str] = {}
    for config in stored.values():
        if config.name in refused:
            continue
        stored_status.update(
            ((config.pk, completion_id), status)
            for completion_id, status in Verdict.objects.filter(
                verifier=config, completion__question__dataset=dataset
            ).values_list("completion_id", "status")
        )
    for row in accepted:
        if row.verifier in refused:
            refused_lines.setdefault(row.line, (row.raw, []))[1].append(
                LineError(row.line, "verifier", refused[row.verifier])
            )
            continue
        config = stored.get(row.verifier)
        before = stored_status.get((config.pk, row.completion_pk)) if config is not None else None
        if before is None:
            kept.append(row)
        elif before == row.verdict.status:
            report.verdicts_unchanged += 1
        else:
            report.add_conflict(
                Conflict(
                    row.line,
                    row.question_id,
                    row.completion_id,
                    "verdict",
                    f"{row.verifier} said {before}; the file says {row.verdict.status}",
                )
            )
            refused_lines.setdefault(row.line, (row.raw, []))
    for _line, _raw, problems in rejected:
        for problem in problems:
            report.add_error(problem)
    for _raw, problems in refused_lines.values():
        for problem in problems:
            report.add_error(problem)
    if refused_lines:
        kept = [row for row in kept if row.line not in refused_lines]
    report.rejected_lines = len(rejected) + len(refused_lines)
    if report.lines == 0:
        report.add_error(LineError(0, "", "the file is empty: it has no rows to import"))
    if report.has_problems and not skip_invalid or report.lines == 0:
        raise ImportRejected(report)

    if skip_invalid and report.rejected_lines:
        rejects = RejectsFile(default_rejects_path(source, source_name, report.dataset_name, rejects_path))
        for line, raw, problems in sorted(rejected + [(ln, raw, p) for ln, (raw, p) in refused_lines.items()]):
            rejects.write(line, raw, problems or [LineError(line, "verdict", "conflicts with a stored verdict")])
        rejects.close()
        report.rejects_path = str(rejects.path)

    by_verifier: dict[str, list[tuple[int, ImportedVerdict]]] = {}
    for row in kept:
        by_verifier.setdefault(row.verifier, []).append((row.completion_pk, row.verdict))
    report.verifiers = sorted({row.verifier for row in accepted if row.verifier not in refused})
    note = (
        f"verdicts imported from {shown_source or 'a file'} by "
        f"{getattr(created_by, 'username', None) or 'the command line'} on {timezone.now():%Y-%m-%d %H:%M} UTC"
    )
    with transaction.atomic():
        for name, rows in sorted(by_verifier.items()):
            config = stored.get(name)
            if config is None:
                config = VerifierConfig.objects.create(
                    name=name, kind=VerifierConfig.Kind.EXTERNAL, workspace_id=dataset.workspace_id, provenance=note
                )
                report.verifiers_created.append(name)
            else:
                config.provenance = f"{config.provenance}\n{note}".strip()
                config.save(update_fields=["provenance", "updated_at"])
            for start in range(0, len(rows), WRITE_CHUNK):
                write_verdicts(config, rows[start : start + WRITE_CHUNK])
        report.verdicts_created = len(kept)
    report.ok = True
    return report
