"""What a run covers: the completions of its scope, the ones still without a usable verdict, and how they are cut into
chunks. Every query walks the scope by completion id; none sorts or de-duplicates wide rows, and none rereads the
verdicts of earlier chunks (a chunk looks up only its own completions' verdicts, by the unique index)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection
from django.db.models import Count, Exists, F, OuterRef

from annotation.models import Item
from verifybench.models import Completion

from ..models import Verdict, VerificationRun
from ..selectors import answer_type_condition

COUNT_KEYS = (Verdict.Status.CORRECT, Verdict.Status.INCORRECT, Verdict.Status.INCONCLUSIVE, "failed")


def scope_filter(run: VerificationRun):
    """The completions a run covers, as a plain filter (no order, no DISTINCT) to use inside a subquery."""
    if run.project_id is not None:
        subjects = Item.objects.filter(project_id=run.project_id).values("subject_id")
        completions = Completion.objects.filter(pk__in=subjects)
    else:
        assert run.dataset_id is not None  # a run has exactly one scope (a check constraint)
        completions = Completion.objects.filter(question__dataset_id=run.dataset_id)
    if run.answer_types:
        completions = completions.filter(answer_type_condition(run.answer_types))
    if run.domains:
        completions = completions.filter(question__domain__in=run.domains)
    if run.model_names:
        completions = completions.filter(model_name__in=run.model_names)
    return completions


def scope_completions(run: VerificationRun):
    """The completions a run covers, in id order (a project holds each completion once, so no DISTINCT is needed)."""
    return scope_filter(run).order_by("pk")


def usable_verdicts(run: VerificationRun):
    """Verdicts of the run's verifier that count as done: not a failed call, and written since a restart."""
    usable = Verdict.objects.filter(verifier_id=run.verifier_id, failed=False)
    if run.redo_from is not None:
        usable = usable.filter(updated_at__gte=run.redo_from)
    return usable


def pending_completions(run: VerificationRun, first_id: int | None = None, last_id: int | None = None):
    """Completions of the scope with no usable verdict for the run's verifier yet (since the restart, if any), those
    with ids from `first_id` to `last_id` when given (a chunk: then only the chunk's own verdicts are looked at,
    whatever the planner thinks of the verifier's other verdicts)."""
    verdicts = usable_verdicts(run)
    completions = scope_filter(run)
    if first_id is not None and last_id is not None:
        verdicts = verdicts.filter(completion_id__gte=first_id, completion_id__lte=last_id)
        completions = completions.filter(pk__gte=first_id, pk__lte=last_id)
    return completions.filter(~Exists(verdicts.filter(completion=OuterRef("pk"))))


def scope_counts(run: VerificationRun) -> dict[str, int]:
    """Verdicts of the run's verifier on its scope (since the restart, if any), by status, and failed calls."""
    verdicts = Verdict.objects.filter(verifier_id=run.verifier_id, completion__in=scope_filter(run).values("pk"))
    if run.redo_from is not None:
        verdicts = verdicts.filter(updated_at__gte=run.redo_from)
    rows = verdicts.order_by().values("status", "failed").annotate(n=Count("pk"))
    counts = dict.fromkeys(COUNT_KEYS, 0)
    for row in rows:
        counts["failed" if row["failed"] else row["status"]] += row["n"]
    return counts


@dataclass(frozen=True)
class Stretch:
    first_id: int
    last_id: int
    size: int


def pending_stretches(
    run: VerificationRun, chunk_size: int, *, leave_out: Sequence[tuple[int, int]] = ()
) -> list[Stretch]:
    """The run's pending completions cut into stretches of `chunk_size` consecutive ids, computed by the database
    (a window over the ids; only one row per stretch comes back). Completions inside the `leave_out` id ranges (chunks
    still being worked on) are left out."""
    pending = pending_completions(run)
    for first_id, last_id in leave_out:
        pending = pending.exclude(pk__gte=first_id, pk__lte=last_id)
    inner_sql, params = pending.order_by().values(pending_id=F("pk")).query.sql_with_params()
    sql = (
        "SELECT MIN(numbered.pending_id), MAX(numbered.pending_id), COUNT(*) FROM ("
        "  SELECT pending.pending_id, (ROW_NUMBER() OVER (ORDER BY pending.pending_id) - 1) / %s AS stretch"
        f"  FROM ({inner_sql}) pending"
        ") numbered GROUP BY numbered.stretch ORDER BY 1"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [chunk_size, *params])
        return [Stretch(int(first), int(last), int(size)) for first, last, size in cursor.fetchall()]


@dataclass(frozen=True, slots=True)
class CompletionRow:
    """What verifying a completion needs, read in one query per chunk (no model instances)."""

    pk: int
    text: str
    question: str
    answer_type: str
    reference: str
    reference_is_solution: bool


def chunk_rows(run: VerificationRun, first_id: int, last_id: int) -> list[CompletionRow]:
    """The chunk's completions still pending, in id order, with their question and primary reference."""
    rows = (
        pending_completions(run, first_id, last_id)
        .with_primary_reference()
        .order_by("pk")
        .values_list(
            "pk", "text", "question__text", "question__answer_type", "reference_final_answer", "reference_solution"
        )
    )
    return [
        CompletionRow(pk, text, question, answer_type or "", final or solution, not final and bool(solution))
        for pk, text, question, answer_type, final, solution in rows
    ]
