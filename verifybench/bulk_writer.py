"""The batched database writer of imports: checks valid lines against stored rows and inserts what is new.

It owns what to write: buffering valid lines into batches, looking up the rows already stored, the conflicts with
them, the report's counts, and the order of the inserts. How the rows go in (COPY through psycopg on PostgreSQL,
from a thread that writes one batch while the next is parsed; bulk_create elsewhere) is in `row_inserters`.
Everything happens in the caller's transaction, so an import that is rejected leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.utils import timezone

from .importing import Conflict, ImportReport, LineError, LineOutcome, RecordFormat, WrittenRecord
from .importing.records import CompletionRecord, ParsedRecord, PriorLabelRecord, QuestionRecord
from .models import Completion, Dataset, PriorLabel, Question
from .row_inserters import BackgroundWriter, CopyInserter, OrmInserter

BATCH_ROWS = 1000
BATCH_BYTES = 8 * 1024 * 1024
_LOOKUP_CHUNK = 1000


@dataclass(slots=True)
class _KnownQuestion:
    id: int | None
    content_hash: str
    answer_type: str
    stored_before: bool  # in the database before this import started
    counted: bool = False


@dataclass(slots=True)
class _StoredCompletion:
    id: int
    content_hash: str


class DatabaseWriter:
    """Buffers valid lines, checks them against stored rows in batches and inserts what is new."""

    def __init__(self, dataset: Dataset, report: ImportReport, rejects, source_name: str, dataset_is_new: bool):
        self.dataset = dataset
        self.report = report
        self.rejects = rejects
        self.source_file = source_name[-500:]
        self.dataset_is_new = dataset_is_new
        self.writing = True
        self.accepted = 0
        self.now = timezone.now()
        self.questions: dict[str, _KnownQuestion] = {}
        self.batch: list[LineOutcome] = []
        self.batch_bytes = 0
        self.record_format: RecordFormat | None = None
        self.bulk = CopyInserter() if connection.vendor == "postgresql" else OrmInserter()
        # On PostgreSQL the inserts of one batch run while the next batch is parsed.
        self.background = BackgroundWriter() if isinstance(self.bulk, CopyInserter) else None

    # -- intake ---------------------------------------------------------------------------------------------------

    def add(self, outcome: LineOutcome, record_format: RecordFormat) -> None:
        self.record_format = record_format
        self.batch.append(outcome)
        self.batch_bytes += len(outcome.raw)
        if len(self.batch) >= BATCH_ROWS or self.batch_bytes >= BATCH_BYTES:
            self.flush()

    def reject(self, outcome: LineOutcome, problems: list[LineError] | list[Conflict]) -> None:
        for problem in problems:
            if isinstance(problem, Conflict):
                self.report.add_conflict(problem)
            else:
                self.report.add_error(problem)
        self.report.rejected_lines += 1
        if self.report.skip_invalid:
            self.rejects.write(outcome.line, outcome.raw, problems)
        else:
            self.writing = False  # the import will be rolled back; keep validating to report every bad line

    # -- batch processing -----------------------------------------------------------------------------------------

    def finish(self) -> None:
        """Flush the last batch and wait for every insert; must run before the transaction ends."""
        try:
            self.flush()
            if self.background is not None:
                self.background.wait()
        finally:
            self.close()

    def close(self) -> None:
        if self.background is not None:
            self.background.close()

    def flush(self) -> None:
        batch, self.batch, self.batch_bytes = self.batch, [], 0
        if not batch:
            return
        if not self.dataset_is_new and self.background is not None:
            self.background.wait()  # the lookups below must see the rows of the batches before
        self._load_stored_questions(batch)
        stored_completions = self._load_stored_completions(batch)
        stored_labels = self._load_stored_labels(stored_completions)

        new_questions: list[tuple[_KnownQuestion, QuestionRecord]] = []
        new_completions: list[tuple[_KnownQuestion, list, CompletionRecord, PriorLabelRecord | None]] = []
        new_labels_for_stored: list[tuple[int, PriorLabelRecord]] = []
        accepted: list[tuple[LineOutcome, _KnownQuestion, list, bool]] = []

        for outcome in batch:
            record = outcome.record
            question = record.question
            known = self.questions.get(question.external_id)
            conflicts: list[Conflict] = []
            if known is None:
                known = _KnownQuestion(None, question.content_hash, question.answer_type, stored_before=False)
                self.questions[question.external_id] = known
                new_questions.append((known, question))
            elif known.stored_before:
                conflicts += self._question_conflicts(outcome.line, record, known)

            completion_slot: list = [None]  # filled with the completion id once known
            completion_created = False
            if not conflicts and record.completion is not None:
                stored = stored_completions.get((known.id, record.completion.external_id)) if known.id else None
                if stored is None:
                    new_completions.append((known, completion_slot, record.completion, record.prior_label))
                    completion_created = True
                else:
                    conflicts += self._completion_conflicts(outcome.line, record, stored, stored_labels)
                    completion_slot[0] = stored.id
                    if not conflicts and record.prior_label is not None and self._label_source():
                        if stored.id in stored_labels:
                            self.report.prior_labels_unchanged += 1
                        else:
                            new_labels_for_stored.append((stored.id, record.prior_label))
            if conflicts:
                self.reject(outcome, conflicts)
                continue

            self.accepted += 1
            self._note_shape(record)
            if known.stored_before and not known.counted:
                known.counted = True
                self.report.questions_unchanged += 1
            if record.completion is not None and not completion_created:
                self.report.completions_unchanged += 1
            accepted.append((outcome, known, completion_slot, completion_created))

        self.report.questions_created += len(new_questions)
        self.report.references_created += sum(1 for _, q in new_questions if q.final_answer or q.solution)
        self.report.completions_created += len(new_completions)
        label_count = sum(1 for *_, label in new_completions if label is not None) + len(new_labels_for_stored)
        self.report.prior_labels_created += label_count if self._label_source() else 0
        if not self.writing:
            return
        if self.background is not None and self.record_format.write_extra is None:
            self.background.submit(lambda: self._write(new_questions, new_completions, new_labels_for_stored))
        else:
            if self.background is not None:
                self.background.wait()
            self._write(new_questions, new_completions, new_labels_for_stored)
            self._write_extra(accepted)

    def _note_shape(self, record: ParsedRecord) -> None:
        """Count what the report tells about the file: unlabeled rows, generated ids, the JSON types of the ids."""
        types = self.report.id_types
        for name, value in record.question.origin.items():
            if name.endswith("_id") or name in ("uuid", "problem_idx"):
                types.setdefault(name, set()).add(_json_type_name(value))
        if record.completion is not None:
            self.report.unlabeled_completions += record.prior_label is None
            self.report.completion_ids_generated += record.completion.id_generated
            for name, value in record.completion.origin.items():
                types.setdefault(name, set()).add(_json_type_name(value))

    def _label_source(self) -> str | None:
        return self.record_format.prior_label_source if self.record_format else None

    def _question_conflicts(self, line: int, record: ParsedRecord, known: _KnownQuestion) -> list[Conflict]:
        question = record.question
        completion_id = record.completion.external_id if record.completion else None
        conflicts = []
        if known.content_hash != question.content_hash:
            conflicts.append(
                Conflict(
                    line,
                    question.external_id,
                    completion_id,
                    "question",
                    "the stored question has a different text or reference answer",
                )
            )
        if known.answer_type and question.answer_type and known.answer_type != question.answer_type:
            conflicts.append(
                Conflict(
                    line,
                    question.external_id,
                    completion_id,
                    "answer_type",
                    f"stored as {known.answer_type}, the file says {question.answer_type}",
                )
            )
        return conflicts

    def _completion_conflicts(self, line, record, stored: _StoredCompletion, stored_labels) -> list[Conflict]:
        question, completion, label = record.question, record.completion, record.prior_label
        conflicts = []
        if stored.content_hash != completion.content_hash:
            conflicts.append(
                Conflict(
                    line,
                    question.external_id,
                    completion.external_id,
                    "completion",
                    "the stored completion has a different text or model",
                )
            )
        stored_label = stored_labels.get(stored.id)
        if label is not None and stored_label is not None and stored_label != label.is_correct:
            conflicts.append(
                Conflict(
                    line,
                    question.external_id,
                    completion.external_id,
                    "prior_label",
                    f"stored as {'correct' if stored_label else 'incorrect'}, "
                    f"the file says {'correct' if label.is_correct else 'incorrect'}",
                )
            )
        return conflicts

    # -- lookups of stored rows -----------------------------------------------------------------------------------

    def _load_stored_questions(self, batch: list[LineOutcome]) -> None:
        if self.dataset_is_new:
            return
        unknown = list({o.record.question.external_id for o in batch} - self.questions.keys())
        for chunk in _chunks(unknown, _LOOKUP_CHUNK):
            rows = Question.objects.filter(dataset=self.dataset, external_id__in=chunk).values_list(
                "id", "external_id", "content_hash", "answer_type"
            )
            for pk, external_id, content_hash, answer_type in rows:
                self.questions[external_id] = _KnownQuestion(pk, content_hash, answer_type, stored_before=True)

    def _load_stored_completions(self, batch: list[LineOutcome]) -> dict[tuple[int, str], _StoredCompletion]:
        wanted: dict[int, set[str]] = {}
        for outcome in batch:
            record = outcome.record
            known = self.questions.get(record.question.external_id)
            if known is not None and known.stored_before and record.completion is not None:
                wanted.setdefault(known.id, set()).add(record.completion.external_id)
        stored: dict[tuple[int, str], _StoredCompletion] = {}
        for chunk in _chunks(list(wanted), _LOOKUP_CHUNK):
            external_ids = set().union(*(wanted[q] for q in chunk))
            rows = Completion.objects.filter(question_id__in=chunk, external_id__in=external_ids).values_list(
                "id", "question_id", "external_id", "content_hash"
            )
            for pk, question_id, external_id, content_hash in rows:
                if external_id in wanted[question_id]:
                    stored[(question_id, external_id)] = _StoredCompletion(pk, content_hash)
        return stored

    def _load_stored_labels(self, stored_completions: dict) -> dict[int, bool]:
        source_format = self._label_source()
        if not stored_completions or not source_format:
            return {}
        ids = [c.id for c in stored_completions.values()]
        labels: dict[int, bool] = {}
        for chunk in _chunks(ids, _LOOKUP_CHUNK):
            labels.update(
                PriorLabel.objects.filter(completion_id__in=chunk, source_format=source_format).values_list(
                    "completion_id", "is_correct"
                )
            )
        return labels

    # -- inserts --------------------------------------------------------------------------------------------------

    def _write(self, new_questions, new_completions, new_labels_for_stored) -> None:
        dataset_id = self.dataset.pk
        if new_questions:
            ids = self.bulk.insert_questions(dataset_id, [q for _, q in new_questions], self.now)
            for (known, _), pk in zip(new_questions, ids):
                known.id = pk
            self.bulk.insert_references(
                [(known.id, q) for known, q in new_questions if q.final_answer or q.solution], self.now
            )
        if new_completions:
            ids = self.bulk.insert_completions(
                [(known.id, completion) for known, _, completion, _ in new_completions], self.now
            )
            for (_, slot, _, _), pk in zip(new_completions, ids):
                slot[0] = pk
        source_format = self._label_source()
        if source_format:
            labels = [(slot[0], label) for _, slot, _, label in new_completions if label is not None]
            labels += new_labels_for_stored
            if labels:
                self.bulk.insert_prior_labels(labels, source_format, self.source_file, self.now)

    def _write_extra(self, accepted) -> None:
        if self.record_format is None or self.record_format.write_extra is None or not accepted:
            return
        written = [
            WrittenRecord(
                line=outcome.line,
                record=outcome.record,
                dataset_id=self.dataset.pk,
                question_id=known.id,
                completion_id=slot[0],
                question_created=not known.stored_before,
                completion_created=created,
            )
            for outcome, known, slot, created in accepted
        ]
        self.record_format.write_extra(written)


def _chunks(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _json_type_name(value: Any) -> str:
    return "int" if isinstance(value, int) and not isinstance(value, bool) else "str"
