"""The look-ups of every claim and submit as fixed SQL: the next item an annotator may be given, an item's live
leases, the current lease, the membership check and the task being submitted.

They run on every label. Built with the ORM (the candidate query has two correlated subqueries, an annotation, a
list of ids; the others join wide rows), compiling them cost the web process more CPU than PostgreSQL spends
running them, and under load that CPU is what annotators
wait for; so the statements are written once, here, with parameters. They hold the same rules as the workflow:
an item is a candidate when it is open, not gold, the annotator has no task on it other than a lease that ran out
(the one task per item and annotator is unique), and its live leases leave a slot free.

Row locks (FOR UPDATE ... SKIP LOCKED) only on PostgreSQL: SQLite runs one writer at a time.
"""

from __future__ import annotations

from datetime import datetime

from django.db import connection

from core import rows

from . import workflow
from .models import AnnotationProject, Item, Label, ProjectMember, Task

# started items a claim looks at before it turns to the unstarted ones
STARTED_LOOKAHEAD = 128

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
        f"SELECT {rows.columns(Item, 'i')} FROM {_ITEM} i WHERE {_CANDIDATE} {_PHASES[phase](connection.vendor)} "
        f"ORDER BY i.started DESC, i.priority DESC, i.random_key LIMIT 1 {_lock_clause(skip_locked=skip_locked)}"
    )
    params = {"project": project_id, "user": user_id, "now": _stored(now), "lookahead": STARTED_LOOKAHEAD}
    row = rows.fetch_one(sql, params)
    return rows.instance(Item, row) if row is not None else None


def has_candidate(project_id: int, user_id: int, now: datetime) -> bool:
    sql = f"SELECT 1 FROM {_ITEM} i WHERE {_CANDIDATE} LIMIT 1"
    return rows.fetch_one(sql, {"project": project_id, "user": user_id, "now": _stored(now)}) is not None


def live_leases(item_id: int, now: datetime, *, other_than: int | None = None) -> int:
    """How many live leases the item has (leaving out task `other_than`)."""
    sql = f"SELECT COUNT(*) FROM {_TASK} WHERE item_id = %s AND status = '{_LEASED}' AND expires_at > %s"
    params: list = [item_id, _stored(now)]
    if other_than is not None:
        sql += " AND id <> %s"
        params.append(other_than)
    return rows.fetch_one(sql, params)[0]


def current_lease_id(project_id: int, user_id: int, now: datetime) -> int | None:
    """The user's oldest live lease in the project on an item that still takes labels (or is gold), or None."""
    params = {"project": project_id, "user": user_id, "now": _stored(now)}
    return rows.fetch_one(f"SELECT ({_CURRENT_LEASE})", params)[0]


_CURRENT_LEASE = f"""
    SELECT t.id FROM {_TASK} t JOIN {_ITEM} i ON i.id = t.item_id
    WHERE t.annotator_id = %(user)s AND t.status = '{_LEASED}' AND t.expires_at > %(now)s
    AND i.project_id = %(project)s AND (i.state IN ({_OPEN}) OR i.is_gold)
    ORDER BY t.leased_at, t.id LIMIT 1
"""
_IS_MEMBER = (
    f"SELECT 1 FROM {ProjectMember._meta.db_table} "
    "WHERE project_id = %(project)s AND user_id = %(user)s AND role = %(role)s AND is_active LIMIT 1"
)


def is_active_member(project_id: int, user_id: int, role: str) -> bool:
    """Whether the user is an active member of the project in this role (checked on every claim)."""
    return rows.fetch_one(_IS_MEMBER, {"project": project_id, "user": user_id, "role": role}) is not None


def membership_and_current_lease(project_id: int, user_id: int, role: str, now: datetime) -> tuple[bool, int | None]:
    """`is_active_member` and `current_lease_id` in one round trip: what every claim asks first."""
    params = {"project": project_id, "user": user_id, "role": role, "now": _stored(now)}
    member, lease_id = rows.fetch_one(f"SELECT EXISTS ({_IS_MEMBER}), ({_CURRENT_LEASE})", params)
    return bool(member), lease_id


def lease(
    item_id: int,
    user_id: int,
    *,
    now: datetime,
    expires: datetime,
    is_tiebreak: bool,
    free_slots: int | None,
    start_item: bool,
) -> int | None:
    """Lease the item to the user and return the task's id; None when its live leases already fill `free_slots`
    (None: no limit, for gold items). The caller holds the item's row lock, and every lease on an item is taken
    under that lock, so the count, read by this statement after the lock was taken, sees every lease.

    The candidate query left out items on which the user has a task other than a lease that ran out (the one task
    per item and annotator is unique), so the insert either creates the task or renews that lease. `start_item`
    moves a pending item to in progress with it (one statement on PostgreSQL)."""
    capacity = ""
    params = {
        "item": item_id,
        "user": user_id,
        "status": _LEASED,
        "tiebreak": is_tiebreak,
        "now": _stored(now),
        "expires": _stored(expires),
    }
    if free_slots is not None:
        capacity = (
            f"WHERE (SELECT COUNT(*) FROM {_TASK} WHERE item_id = %(item)s AND status = '{_LEASED}' "
            "AND expires_at > %(now)s) < %(slots)s"
        )
        params["slots"] = free_slots
    else:
        capacity = "WHERE 1 = 1"  # SQLite reads ON CONFLICT after a SELECT only when the SELECT has a WHERE
    insert = (
        f"INSERT INTO {_TASK} (item_id, annotator_id, status, is_tiebreak, leased_at, expires_at, finished_at) "
        f"SELECT %(item)s, %(user)s, %(status)s, %(tiebreak)s, %(now)s, %(expires)s, NULL {capacity} "
        "ON CONFLICT (item_id, annotator_id) DO UPDATE SET status = EXCLUDED.status, "
        "is_tiebreak = EXCLUDED.is_tiebreak, leased_at = EXCLUDED.leased_at, expires_at = EXCLUDED.expires_at "
        "RETURNING id"
    )
    start = f"UPDATE {_ITEM} SET state = '{workflow.IN_PROGRESS}' WHERE id = %(item)s AND state = '{workflow.PENDING}'"
    with rows.prepared_cursor() as cursor:
        if start_item and connection.vendor == "postgresql":
            cursor.execute(
                f"WITH leased AS ({insert}), started AS ({start} AND EXISTS (SELECT 1 FROM leased)) "
                "SELECT id FROM leased",
                params,
            )
            row = cursor.fetchone()
            return row[0] if row else None
        cursor.execute(insert, params)
        row = cursor.fetchone()
        if row is not None and start_item:
            cursor.execute(start, params)
    return row[0] if row else None


def task_with_project_id(task_id: int, user_id: int) -> Task | None:
    """The user's task with its project's id and kind as `project_id` and `project_kind`, without loading the
    item or the project (a submit reads both itself, under lock)."""
    sql = (
        f"SELECT {rows.columns(Task, 't')}, i.project_id, p.kind FROM {_TASK} t JOIN {_ITEM} i ON i.id = t.item_id "
        f"JOIN {AnnotationProject._meta.db_table} p ON p.id = i.project_id WHERE t.id = %s AND t.annotator_id = %s"
    )
    row = rows.fetch_one(sql, [task_id, user_id])
    if row is None:
        return None
    task, task.project_id, task.project_kind = rows.split(row, Task)
    return task


def _for_update() -> str:
    return "FOR UPDATE" if connection.vendor == "postgresql" else ""


def locked_submission(item_id: int, task_id: int) -> tuple[Item, Task]:
    """A submit's item with its project, and the task, in one statement: item and task row-locked on PostgreSQL
    (call inside a transaction, after the policy lock, so the project read is the policy in force)."""
    lock = "FOR UPDATE OF i, t" if connection.vendor == "postgresql" else ""
    sql = (
        f"SELECT {rows.columns(Item, 'i')}, {rows.columns(AnnotationProject, 'p')}, {rows.columns(Task, 't')} "
        f"FROM {_ITEM} i "
        f"JOIN {AnnotationProject._meta.db_table} p ON p.id = i.project_id JOIN {_TASK} t ON t.id = %s "
        f"WHERE i.id = %s {lock}"
    )
    row = rows.fetch_one(sql, [task_id, item_id])
    if row is None:
        raise Task.DoesNotExist(f"no task {task_id} on item {item_id}")
    item, item.project, task = rows.split(row, Item, AnnotationProject, Task)
    return item, task


def item_labels(item_id: int) -> list[Label]:
    """Every label of the item, oldest first."""
    sql = f"SELECT {rows.columns(Label, 'l')} FROM {Label._meta.db_table} l WHERE item_id = %s ORDER BY created_at, id"
    with rows.prepared_cursor() as cursor:
        cursor.execute(sql, [item_id])
        return [rows.instance(Label, row) for row in cursor.fetchall()]
