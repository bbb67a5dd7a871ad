"""The outcome of an import: counts, every rejected line with its reason, conflicts with stored rows."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Reports keep this many errors and conflicts in full; the counts always cover all of them.
MAX_KEPT = 1000
SHOWN_IN_SUMMARY = 50


@dataclass(frozen=True, slots=True)
class LineError:
    line: int  # 1-based; 0 for a problem with the file as a whole
    field: str  # empty when the whole line is at fault
    reason: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "file"
        return f"{where}: {self.field + ': ' if self.field else ''}{self.reason}"


@dataclass(frozen=True, slots=True)
class Conflict:
    """A line whose id is already stored with a different content; the stored row is kept as it is."""

    line: int
    question_id: str
    completion_id: str | None
    field: str
    reason: str

    def __str__(self) -> str:
        ids = f"question {self.question_id!r}" + (
            f", completion {self.completion_id!r}" if self.completion_id is not None else ""
        )
        return f"line {self.line}: conflict on {ids}: {self.field}: {self.reason}"


@dataclass
class ImportReport:
    format: str | None = None
    dataset_id: int | None = None
    dataset_name: str = ""
    dataset_created: bool = False
    source_name: str = ""
    lines: int = 0
    questions_created: int = 0
    questions_unchanged: int = 0
    completions_created: int = 0
    completions_unchanged: int = 0
    references_created: int = 0
    prior_labels_created: int = 0
    prior_labels_unchanged: int = 0
    rejected_lines: int = 0
    error_count: int = 0
    conflict_count: int = 0
    errors: list[LineError] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    rejects_path: str | None = None
    skip_invalid: bool = False
    ok: bool = False
    file_type: str = "jsonl"
    unlabeled_completions: int = 0
    completion_ids_generated: int = 0
    # JSON types the file gave each id field ("int", "str"), so exports can give them back
    id_types: dict[str, set[str]] = field(default_factory=dict)

    def add_error(self, error: LineError) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_KEPT:
            self.errors.append(error)

    def add_conflict(self, conflict: Conflict) -> None:
        self.conflict_count += 1
        if len(self.conflicts) < MAX_KEPT:
            self.conflicts.append(conflict)

    @property
    def has_problems(self) -> bool:
        return bool(self.error_count or self.conflict_count)

    @property
    def changed_anything(self) -> bool:
        return bool(
            self.questions_created
            or self.completions_created
            or self.references_created
            or self.prior_labels_created
            or self.dataset_created
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["changed"] = self.changed_anything
        data["id_types"] = {name: sorted(types) for name, types in self.id_types.items()}
        return data

    def destination(self) -> str:
        return f"dataset {self.dataset_name!r} (format {self.format})"

    def counts_line(self) -> str:
        return (
            f"questions: {self.questions_created} created, {self.questions_unchanged} unchanged; "
            f"completions: {self.completions_created} created, {self.completions_unchanged} unchanged; "
            f"references: {self.references_created} created; "
            f"prior labels: {self.prior_labels_created} created, {self.prior_labels_unchanged} unchanged."
        )

    def summary(self) -> str:
        name = self.source_name or "the file"
        lines: list[str] = []
        if not self.ok:
            whole_file = [error for error in self.errors if error.line == 0]
            if whole_file and self.error_count == len(whole_file) and not self.conflict_count:
                lines.append(f"Rejected {name}: {whole_file[0].reason}. Nothing was written.")
            else:
                found = _count(self.error_count, "error") + (
                    f" and {_count(self.conflict_count, 'conflict')}" if self.conflict_count else ""
                )
                lines.append(f"Rejected {name}: {found} in {_count(self.lines, 'line')}. Nothing was written.")
        else:
            lines.append(f"Imported {name} into {self.destination()}.")
            lines.append(f"  {self.counts_line()}")
            if not self.changed_anything:
                lines.append("  Nothing changed: every line was already imported.")
            if self.unlabeled_completions:
                lines.append(f"  {self.unlabeled_completions} completion(s) came without a label, ready to annotate.")
            if self.completion_ids_generated:
                lines.append(
                    f"  {self.completion_ids_generated} completion(s) had no completion_id; ids were made "
                    "from their content (the same content gets the same id on a re-import)."
                )
            if self.rejected_lines:
                lines.append(f"  Skipped {self.rejected_lines} line(s); they are in {self.rejects_path}.")
        problems: list[LineError | Conflict] = sorted([*self.errors, *self.conflicts], key=lambda problem: problem.line)
        for problem in problems[:SHOWN_IN_SUMMARY]:
            lines.append(f"  {problem}")
        total = self.error_count + self.conflict_count
        if total > SHOWN_IN_SUMMARY:
            lines.append(f"  ... and {total - SHOWN_IN_SUMMARY} more.")
        return "\n".join(lines)


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"
