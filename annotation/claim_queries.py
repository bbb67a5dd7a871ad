"""The claim's look-ups as fixed SQL: the next item an annotator may be given, and an item's live leases.

They run on every claim. Built with the ORM (two correlated subqueries, an annotation, a list of ids), compiling
them cost the web process more CPU than PostgreSQL spends running them, and under load that CPU is what annotators
wait for; so the statements are written once, here, with parameters. They hold the same rules as the workflow:
an item is a candidate when it is open, not gold, the annotator has no task on it other than a lease that ran out
(the one task per item and annotator is unique), and its live leases leave a slot free.

Row locks (FOR UPDATE ... SKIP LOCKED) only on PostgreSQL: SQLite runs one writer at a time.
"""

from __future__ import annotations

from datetime import datetime

from django.db import connection

from . import workflow
from .models import Item, Task

# started items a claim looks at before it turns to the unstarted ones
STARTED_LOOKAHEAD = 256

_ITEM = Item._meta.db_table
_TASK = Task._meta.db_table
_OPEN = ", ".join(f"'{state}'" for state in workflow.OPEN_STATES)
_LEASED, _SUBMITTED, _SKIPPED = Task.Status.LEASED.value, Task.Status.SUBMITTED.value, Task.Status.SKIPPED.value

_OPEN_ITEMS = f"i.project_id = %(project)s AND i.state IN ({_OPEN}) AND NOT i.is_gold"
_CANDIDATE = f"""
    {_OPEN_ITEMS}
    AND NOT EXISTS (
        SELECT 1 FROM {_TASK} mine WHERE mine.item_id = i.id AND mine.annotator_id = %(user)s
        AND (mine.status IN ('{_SUBMITTED}', '{_SKIPPED}') OR (mine.status = '{_LEASED}' AND mine.expires_at > %(now)s))
    )
    AND (
        SELECT COUNT(*) FROM {_TASK} lease
        WHERE lease.item_id = i.id AND lease.status = '{_LEASED}' AND lease.expires_at > %(now)s
    ) < i.required_labels - i.label_count
"""
_STARTED_HEAD = f"""
    SELECT h.id FROM {_ITEM} h
    WHERE h.project_id = %(project)s AND h.state IN ({_OPEN}) AND NOT h.is_gold AND h.started
    ORDER BY h.priority DESC, h.random_key LIMIT %(lookahead)s
"""
# On PostgreSQL the head is read once (an InitPlan) and its ids are looked up by key: a plain IN (subquery) lets
# the planner walk every started item in queue order instead, probing the head for each.
_IN_HEAD = {
    "postgresql": f"i.id = ANY(ARRAY({_STARTED_HEAD}))",
    "sqlite": f"i.id IN ({_STARTED_HEAD})",
}
_PHASES = {
    "head": lambda vendor: f"AND {_IN_HEAD.get(vendor, _IN_HEAD['sqlite'])}",
    "unstarted": lambda vendor: "AND NOT i.started",
    "any": lambda vendor: "",
}
PHASES = ("head", "unstarted", "any")  # started items near the front of the queue, then new ones, then the rest


def _stored(moment: datetime):
    """The moment as the backend stores a DateTimeField (SQLite compares the text form)."""
    return connection.ops.adapt_datetimefield_value(moment)


def _lock_clause(*, skip_locked: bool) -> str:
    if connection.vendor != "postgresql":
        return ""
    return "FOR UPDATE OF i SKIP LOCKED" if skip_locked else "FOR UPDATE OF i"


def next_candidate(project_id: int, user_id: int, now: datetime, *, phase: str, skip_locked: bool = True):
    """The first candidate of the phase in queue order (started, priority, random key), row-locked on
    PostgreSQL (skipping rows another claim or submit holds unless `skip_locked` is False); None if there is none.
    Call inside a transaction."""
    sql = (
        f"SELECT i.* FROM {_ITEM} i WHERE {_CANDIDATE} {_PHASES[phase](connection.vendor)} "
        f"ORDER BY i.started DESC, i.priority DESC, i.random_key LIMIT 1 {_lock_clause(skip_locked=skip_locked)}"
    )
    params = {"project": project_id, "user": user_id, "now": _stored(now), "lookahead": STARTED_LOOKAHEAD}
    found = list(Item.objects.raw(sql, params))
    return found[0] if found else None


def has_candidate(project_id: int, user_id: int, now: datetime) -> bool:
    sql = f"SELECT 1 FROM {_ITEM} i WHERE {_CANDIDATE} LIMIT 1"
    with connection.cursor() as cursor:
        cursor.execute(sql, {"project": project_id, "user": user_id, "now": _stored(now)})
        return cursor.fetchone() is not None


def live_leases(item_id: int, now: datetime, *, other_than: int | None = None) -> int:
    """How many live leases the item has (leaving out task `other_than`)."""
    sql = f"SELECT COUNT(*) FROM {_TASK} WHERE item_id = %s AND status = '{_LEASED}' AND expires_at > %s"
    params: list = [item_id, _stored(now)]
    if other_than is not None:
        sql += " AND id <> %s"
        params.append(other_than)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()[0]
