"""Writes and business rules of the benchmark data: importing files of questions, references and completions.

The lines are read and validated by the pure `verifybench.importing` package, written by `bulk_writer` (through
`row_inserters`: COPY on PostgreSQL), and the file handling (paths or uploads, the rejects file, the progress bar)
is in `source_files`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from django.conf import settings
from django.db import connection, transaction

from core.search import SEARCH_CONFIG

from . import selectors
from .bulk_writer import DatabaseWriter
from .importing import ImportReport, LineError, RecordReader, UnknownFormat, format_names, get_format
from .models import Completion, CompletionSearch, Dataset, PriorLabel, Question, QuestionSearch, ReferenceAnswer
from .source_files import RejectsFile, default_rejects_path, open_rows, progress_bar


class ImportRequestError(ValueError):
    """An import request that cannot be carried out (no dataset name, an unknown format); the message says why."""


class ImportRejected(Exception):
    """The file was rejected and nothing was written; `.report` says why, line by line."""

    def __init__(self, report: ImportReport):
        super().__init__(report.summary())
        self.report = report


# Formats whose lines are not questions and completions (e.g. MathArena proof problems and model proofs): the
# owning app registers a function that imports the whole file with the same validation and all-or-nothing rules.
_FILE_IMPORTERS: dict[str, Callable[..., ImportReport]] = {}
_FILE_DETECTORS: dict[str, Callable[[dict], bool]] = {}
SNIFF_BYTES = 1 << 20  # how much of a JSON Lines file is read to find its first record when no format is given


def register_file_importer(
    name: str, importer: Callable[..., ImportReport], *, detect: Callable[[dict], bool] | None = None
) -> None:
    """`importer(*, dataset_name, source, skip_invalid, rejects_path, created_by, source_name)` returns a report
    or raises ImportRejected, like import_jsonl. `detect(first_record)` says whether a JSON Lines file given without
    a format is one of this importer's."""
    _FILE_IMPORTERS[name] = importer
    if detect is not None:
        _FILE_DETECTORS[name] = detect


def _detected_file_importer(source, source_name: str, file_type: str | None) -> str | None:
    """The registered file importer whose format the file's first JSON record has, if any (the file is left where it
    was)."""
    if not _FILE_DETECTORS or file_type not in (None, "jsonl"):
        return None
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    else:
        try:
            position = source.tell()
            head = source.read(SNIFF_BYTES)
            source.seek(position)
        except (AttributeError, OSError, ValueError):
            return None
    if head[:4] == b"PAR1" or source_name.lower().endswith((".csv", ".parquet")):
        return None
    for line in head.splitlines():
        if not line.strip():
            continue
        try:
            first = json.loads(line)
        except ValueError:
            return None
        if not isinstance(first, dict):
            return None
        return next((name for name, detect in _FILE_DETECTORS.items() if detect(first)), None)
    return None


def import_format_names() -> list[str]:
    """Every format import_jsonl accepts: the line formats of verifybench.importing and the registered importers."""
    return sorted({*format_names(), *_FILE_IMPORTERS})


def import_jsonl(
    *,
    dataset_name: str,
    source,
    fmt: str | None = None,
    skip_invalid: bool = False,
    rejects_path=None,
    created_by=None,
    progress: bool = False,
    source_name: str = "",
    file_type: str | None = None,
    on_progress: Callable[[int, int | None], None] | None = None,
    before_commit: Callable[[ImportReport], None] | None = None,
    workspace=None,
) -> ImportReport:
    """Import a file (a path or a binary file object) into the dataset `dataset_name`, creating it if missing.

    The file is JSON Lines, CSV with a header row, or Parquet (`file_type`, detected from its first bytes and its name
    when not given). It is read once, streaming, inside one transaction. By default any invalid line or any conflict with a
    stored row rejects the whole file (ImportRejected, nothing written, not even the dataset). With `skip_invalid`
    the valid lines are imported and the others are written with their reasons to `rejects_path`
    (default `<file>.rejects.jsonl`).
    """
    if isinstance(source, (str, os.PathLike)):
        source_name = source_name or str(source)
    else:
        source_name = source_name or getattr(source, "name", "") or ""
    if fmt is None:
        fmt = _detected_file_importer(source, source_name, file_type)
    if fmt in _FILE_IMPORTERS:
        imported = _FILE_IMPORTERS[fmt](
            dataset_name=dataset_name,
            source=source,
            skip_invalid=skip_invalid,
            rejects_path=rejects_path,
            created_by=created_by,
            source_name=source_name,
            workspace=workspace,
        )
        if imported.dataset_id is not None:
            recount(Dataset.objects.get(pk=imported.dataset_id))
        return imported
    report = ImportReport(dataset_name=dataset_name, source_name=source_name, skip_invalid=skip_invalid)

    if not dataset_name or not dataset_name.strip():
        report.add_error(LineError(0, "dataset", "a dataset name is required"))
        raise ImportRejected(report)
    try:
        reader_format = get_format(fmt) if fmt else None
    except UnknownFormat as exc:
        report.add_error(LineError(0, "format", exc.args[0]))
        raise ImportRejected(report) from None
    report.format = reader_format.name if reader_format else None

    rejects = (
        RejectsFile(default_rejects_path(source, source_name, dataset_name, rejects_path)) if skip_invalid else None
    )
    limit = getattr(settings, "IMPORT_MAX_LINE_BYTES", None)
    with open_rows(source, source_name=source_name, file_type=file_type, max_line_bytes=limit) as (
        rows,
        total_bytes,
        report.file_type,
    ):
        reader = RecordReader(rows, fmt)
        with progress_bar(progress, total_bytes, source_name, on_progress) as advance:
            try:
                _import_in_transaction(
                    reader, report, rejects, dataset_name, created_by, source_name, advance, before_commit, workspace
                )
            except BaseException:
                if rejects is not None:
                    rejects.discard()
                raise
    if rejects is not None:
        rejects.close()
        report.rejects_path = str(rejects.path) if rejects.count else None
    analyze_imported_tables()
    return report


def analyze_imported_tables() -> None:
    """Refresh PostgreSQL's statistics of the tables an import writes, once its rows are committed, so the next
    queries (a verification run's plan, the item browser) are planned for the table as it is now rather than as it
    was before a bulk load, whatever autovacuum has done yet. Inside a caller's transaction the rows are not
    committed yet: the caller's own commit is followed by the next import's analysis, or autovacuum's."""
    _analyze(Question, ReferenceAnswer, Completion, PriorLabel, QuestionSearch, CompletionSearch)


def _analyze(*models) -> None:
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        return
    tables = ", ".join(connection.ops.quote_name(model._meta.db_table) for model in models)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {tables}")


def dataset_name_clash(name: str, workspace) -> str:
    """Why a dataset of this name cannot be imported into in `workspace` (it belongs to another one), or ""."""
    existing = Dataset.objects.filter(name=name).values_list("workspace_id", flat=True).first()
    if existing is None or existing == workspace.pk:
        return ""
    return f"the dataset name {name!r} is taken by another workspace; choose another name"


SEARCH_CHUNK_ROWS = 500


def index_search_documents(limit: int | None = None) -> int:
    """Compute the pending search documents (texts inserted or changed since), a chunk per transaction; returns how
    many. Several callers can run at once (each takes rows the others have not locked). PostgreSQL only: elsewhere
    the search reads the texts and there is nothing to compute."""
    if connection.vendor != "postgresql":
        return 0
    done = 0
    for searched, search in ((Question, QuestionSearch), (Completion, CompletionSearch)):
        key = search._meta.pk.column
        table, search_table = searched._meta.db_table, search._meta.db_table
        while limit is None or done < limit:
            chunk = SEARCH_CHUNK_ROWS if limit is None else min(SEARCH_CHUNK_ROWS, limit - done)
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(
                    f"""
                    WITH pending AS (
                        SELECT {key} FROM {search_table} WHERE document IS NULL
                        ORDER BY {key} LIMIT %s FOR UPDATE SKIP LOCKED
                    )
                    UPDATE {search_table} AS search SET document = to_tsvector(%s::regconfig, searched.text)
                    FROM pending, {table} AS searched
                    WHERE search.{key} = pending.{key} AND searched.id = pending.{key}
                    """,
                    [chunk, SEARCH_CONFIG],
                )
                computed = cursor.rowcount
            done += computed
            if computed < chunk:
                break
    if done:
        # The share of pending rows decides how a search plans its pending branch: it is now much smaller.
        _analyze(QuestionSearch, CompletionSearch)
    return done


def _import_in_transaction(
    reader, report, rejects, dataset_name, created_by, source_name, advance, before_commit, workspace=None
) -> None:
    with transaction.atomic():
        if workspace is not None and dataset_name_clash(dataset_name.strip(), workspace):
            report.add_error(LineError(0, "dataset", dataset_name_clash(dataset_name.strip(), workspace)))
            raise ImportRejected(report)
        defaults = {"created_by": created_by, **({"workspace": workspace} if workspace is not None else {})}
        dataset, created = Dataset.objects.get_or_create(name=dataset_name.strip(), defaults=defaults)
        dataset = Dataset.objects.select_for_update().get(pk=dataset.pk)
        report.dataset_id, report.dataset_created = dataset.pk, created
        writer = DatabaseWriter(dataset, report, rejects, source_name, dataset_is_new=created)
        try:
            for outcome in reader:
                if outcome.ok:
                    writer.add(outcome, reader.format)
                else:
                    writer.reject(outcome, outcome.errors)
                if reader.line_count % 2000 == 0:
                    advance(reader.bytes_read)
        except BaseException:
            writer.close()
            raise
        writer.finish()
        advance(reader.bytes_read)
        report.lines = reader.line_count
        report.format = reader.format.name if reader.format else report.format
        if report.lines == 0:
            report.add_error(LineError(0, "", "the file is empty: it has no rows to import"))
        elif writer.accepted == 0 and not report.has_problems:
            report.add_error(LineError(0, "", "no line could be imported"))
        if (report.has_problems and not report.skip_invalid) or writer.accepted == 0:
            report.ok = False
            report.dataset_id = None if created else report.dataset_id
            report.dataset_created = False
            _zero_counts(report)
            raise ImportRejected(report)
        report.ok = True
        _remember_id_types(dataset, report)
        recount(dataset)
        if before_commit is not None:
            if rejects is not None:
                rejects.close()
                report.rejects_path = str(rejects.path) if rejects.count else None
            before_commit(report)  # e.g. a job marked succeeded in the same transaction as the rows


def recount(dataset: Dataset) -> None:
    """Store the dataset's question, completion and author model counts (after anything that adds or removes
    questions or completions), so that pages listing datasets read them instead of counting every completion."""
    counts = selectors.counted(dataset)
    Dataset.objects.filter(pk=dataset.pk).update(**counts)
    for name, value in counts.items():
        setattr(dataset, name, value)


def _remember_id_types(dataset: Dataset, report: ImportReport) -> None:
    """Keep the JSON types the files gave each id field, so that exports give integers back as integers."""
    known = {name: set(types) for name, types in (dataset.field_types or {}).items()}
    for name, types in report.id_types.items():
        known.setdefault(name, set()).update(types)
    merged = {name: sorted(types) for name, types in known.items()}
    if merged != dataset.field_types:
        dataset.field_types = merged
        dataset.save(update_fields=["field_types"])


def _zero_counts(report: ImportReport) -> None:
    report.questions_created = report.questions_unchanged = 0
    report.completions_created = report.completions_unchanged = 0
    report.references_created = report.prior_labels_created = report.prior_labels_unchanged = 0
