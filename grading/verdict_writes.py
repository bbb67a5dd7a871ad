"""Verdicts written in bulk: every rule about storing a verifier's verdicts, stated once.

A verdict replaces the verifier's earlier verdict on the completion (one per completion and verifier); it never
touches a human label; the annotation projects that hold the completion see their figures move with it (their items
are locked and their tallies adjusted in the same transaction); a judge's answer is cached by its prompt so the same
question is never paid twice. `record_verdict` (one completion) and a run's chunks both come through here, so a
chunk of any size costs a few set-based statements: the items' lock and tallies, one multi-row upsert of the
verdicts, and one multi-row insert of the cache entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, is_dataclass
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from annotation import aggregates
from core.keys import subject_keys
from verifybench.label_rules import CORRECTNESS

from .judges.caching import CachedResponse
from .models import JudgeResponseCache, Verdict, VerifierConfig

# What a verdict's outcome carries beyond status, answer, explanation, reason and raw output, with its default.
OPTIONAL_FIELDS: dict[str, Any] = {
    "extraction_output": "",
    "prompt_tokens": 0,
    "completion_tokens": 0,
    "cost": Decimal(0),
    "attempts": 0,
    "cache_hit": False,
    "failed": False,
    "stage": "",
    "rule_status": "",
    "judge_status": "",
}
# The fields a new verdict replaces on the stored one (everything but the keys and the creation time).
REPLACED_FIELDS = [
    "prompt_template",
    "status",
    "extracted_answer",
    "explanation",
    "reason",
    "raw_output",
    *OPTIONAL_FIELDS,
    "updated_at",
]
UPSERT_BATCH = 1000


@dataclass(frozen=True)
class Written:
    """What a bulk write changed: usable verdicts by status, failed calls newly failed, and failed calls that are
    usable now (a resumed run that got an answer)."""

    by_status: dict[str, int]
    newly_failed: int
    no_longer_failed: int

    @property
    def usable(self) -> int:
        return sum(self.by_status.values())


COLUMNS = [
    "completion_id",
    "verifier_id",
    "prompt_template_id",
    "status",
    "extracted_answer",
    "explanation",
    "reason",
    "raw_output",
    *OPTIONAL_FIELDS,
    "created_at",
    "updated_at",
]


_STATUSES = frozenset(Verdict.Status.values)
_DEFAULTS = tuple(OPTIONAL_FIELDS.values())
_CARRIED: dict[type, bool] = {}  # dataclass of outcomes -> whether it carries any optional field (a rule outcome not)


def _optional_values(result) -> tuple | list:
    carried = _CARRIED.get(type(result))
    if carried is None:
        carried = any(hasattr(result, name) for name in OPTIONAL_FIELDS)
        if is_dataclass(result):  # a class whose instances all have the same fields
            _CARRIED[type(result)] = carried
    if not carried:
        return _DEFAULTS
    return [getattr(result, name, default) or default for name, default in OPTIONAL_FIELDS.items()]


def _row(completion_id: int, config: VerifierConfig, result, now) -> tuple:
    """The verdict's column values, in COLUMNS order."""
    if result.status not in _STATUSES:
        raise ValidationError(f"Unknown verdict status {result.status!r}.")
    template_id = getattr(result, "template_id", None)
    if template_id is None and config.kind == VerifierConfig.Kind.JUDGE:
        template_id = config.template_id
    optional = _optional_values(result)
    return (
        completion_id,
        config.pk,
        template_id,
        result.status,
        result.extracted_answer or "",
        result.explanation or "",
        result.reason or "",
        result.raw_output or "",
        *optional,
        now,
        now,
    )


_FAILED = COLUMNS.index("failed")
_STATUS = COLUMNS.index("status")


def _copy_sql() -> tuple[str, str, str]:
    table = connection.ops.quote_name(Verdict._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(column) for column in COLUMNS)
    replaced = ", ".join(
        f"{quoted} = EXCLUDED.{quoted}"
        for quoted in (connection.ops.quote_name(column) for column in COLUMNS)
        if quoted not in ('"completion_id"', '"verifier_id"', '"created_at"')
    )
    return table, columns, replaced


def _insert_by_copy(rows: list[tuple]) -> bool:
    """PostgreSQL, none of the rows' verdicts stored yet (a first run): COPY them straight into the table. False, with
    nothing written, when a verdict was stored meanwhile by another writer (the caller upserts instead)."""
    from psycopg import errors

    table, columns, _ = _copy_sql()
    connection.ensure_connection()
    try:
        with transaction.atomic(), connection.connection.cursor() as cursor:
            with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
    except errors.UniqueViolation:
        return False
    return True


def _upsert_by_copy(rows: list[tuple]) -> None:
    """PostgreSQL: COPY the rows into a temporary table, then one INSERT ... ON CONFLICT moves them in."""
    table, columns, replaced = _copy_sql()
    connection.ensure_connection()
    with connection.connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMPORARY TABLE IF NOT EXISTS verdict_load ON COMMIT DELETE ROWS AS "
            f"SELECT {columns} FROM {table} WITH NO DATA"
        )
        with cursor.copy(f"COPY verdict_load ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cursor.execute(
            f"INSERT INTO {table} ({columns}) SELECT {columns} FROM verdict_load "
            f"ON CONFLICT (completion_id, verifier_id) DO UPDATE SET {replaced}"
        )
        # emptied for a second write in this transaction (a TRUNCATE would rewrite the catalog each time)
        cursor.execute("DELETE FROM verdict_load")


def _upsert_by_orm(rows: list[tuple]) -> None:
    Verdict.objects.bulk_create(
        [Verdict(**dict(zip(COLUMNS, row, strict=True))) for row in rows],
        batch_size=UPSERT_BATCH,
        update_conflicts=True,
        unique_fields=["completion", "verifier"],
        update_fields=REPLACED_FIELDS,
    )


def write_verdicts(config: VerifierConfig, outcomes: Sequence[tuple[int, Any]]) -> Written:
    """Store each (completion id, outcome) as the verifier's verdict on that completion, replacing earlier ones,
    with the tallies of every project holding those completions moved accordingly. Runs in the caller's
    transaction (or its own); returns what changed."""
    if not outcomes:
        return Written({}, 0, 0)
    now = timezone.now()
    rows = [_row(completion_id, config, result, now) for completion_id, result in outcomes]
    ids = [row[0] for row in rows]
    with transaction.atomic():
        wanted = set(ids)
        stored = {
            completion_id: failed
            for completion_id, failed in Verdict.objects.filter(verifier_id=config.pk)
            .filter(subject_keys("completion_id", wanted))
            .values_list("completion_id", "failed")
            if completion_id in wanted
        }
        previously_failed = {completion_id for completion_id, failed in stored.items() if failed}
        # the meta-evaluation's tallies of the completions' items move with their verdicts
        tracker = aggregates.track_subjects(CORRECTNESS, ids)
        if connection.vendor != "postgresql":
            _upsert_by_orm(rows)
        elif stored or not _insert_by_copy(rows):
            _upsert_by_copy(rows)
        tracker.done()
    by_status: dict[str, int] = {}
    newly_failed = no_longer_failed = 0
    for row in rows:
        was_failed = row[0] in previously_failed
        if row[_FAILED]:
            newly_failed += 0 if was_failed else 1
            continue
        by_status[row[_STATUS]] = by_status.get(row[_STATUS], 0) + 1
        no_longer_failed += 1 if was_failed else 0
    return Written(by_status, newly_failed, no_longer_failed)


def record_verdict(completion, config: VerifierConfig, result) -> Verdict:
    """Store what a verifier said about one completion, replacing its earlier verdict for that verifier.

    `result` is a judge's JudgeResult or any object with `status`, `extracted_answer`, `explanation`, `reason` and
    `raw_output`; token, cost and cache fields default to zero. Verdicts are kept apart from human labels."""
    completion_id = getattr(completion, "pk", completion)
    write_verdicts(config, [(completion_id, result)])
    return Verdict.objects.get(completion_id=completion_id, verifier_id=config.pk)


def cache_judge_answers(
    entries: Iterable[tuple[str, CachedResponse]], *, template_name: str, template_version: int, model: str
) -> None:
    """Keep judge answers by prompt key as they arrive (one multi-row insert); an answer already kept stays."""
    rows = [
        JudgeResponseCache(
            key=key,
            template_name=template_name,
            template_version=template_version,
            model=model,
            raw_output=response.raw_output,
            extraction_output=response.extraction_output,
            status=response.status,
            extracted_answer=response.extracted_answer,
            reason=response.reason,
            prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens,
        )
        for key, response in entries
    ]
    if rows:
        JudgeResponseCache.objects.bulk_create(rows, batch_size=UPSERT_BATCH, ignore_conflicts=True)


def cached_judge_answers(keys: Iterable[str]) -> dict[str, CachedResponse]:
    """The kept answers among these prompt keys, in one query."""
    found = {}
    fields = (
        "key",
        "raw_output",
        "extraction_output",
        "status",
        "extracted_answer",
        "reason",
        "prompt_tokens",
        "completion_tokens",
    )
    for key, *values in JudgeResponseCache.objects.filter(key__in=list(set(keys))).values_list(*fields):
        found[key] = CachedResponse(*values)
    return found
