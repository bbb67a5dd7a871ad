"""A project's figures kept as tallies (`ProjectTally`), moved in the transaction of each change.

Every write of the workflow that changes what a figure counts (a label given or changed, a claim that starts an item,
a tie-break, an adjudication, an override, an exclusion, a re-opening, gold marking, new items) goes through this
module: `track` reads the changed items' contribution (core.metrics.tallies.item_tallies) before and after the
change and adds the difference to the stored tallies. Pages then read a few hundred counter rows instead of every
label (`project_tallies`). `rebuild` recomputes a project's tallies from its items and labels. Counters that a
project has one of per question and model (`q|` keys) are kept in GroupTally rows instead, which only the model
evaluation reads; vectors of counters per question (`w|` keys) are kept in VectorTally rows, and each change of one
moves the moments of its series (SeriesTally), which the meta-evaluation's bootstrap reads.

Writers take a shared advisory lock before they add to the tallies and `rebuild` takes it exclusive, so a rebuild
never misses or doubles a concurrent change.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from django.db import connection, transaction
from django.db.models import Count, Q, Sum

from core.keys import subject_keys
from core.metrics import tallies
from core.rows import prepared_cursor

from .models import AnnotationProject, GroupTally, Item, Label, ProjectTally, SeriesTally, VectorTally

GROUP_PREFIX = "q|"  # keys `q|n|<[series, group] as JSON>` and `q|c|...` are kept in GroupTally, not ProjectTally
VECTOR_PREFIX = tallies.VECTOR_PREFIX  # `w|<[series, group, cell] as JSON>`: VectorTally rows, moments in SeriesTally
MOMENT_PREFIXES = tallies.MOMENT_PREFIXES
SHARDS = 8  # rows a project-wide counter is split over, so concurrent writers rarely wait on one row
_REBUILD_LOCK_SPACE = 0x6D74


def _lock_exclusive(project_id: int) -> None:
    """The rebuild's lock; writers take it shared in the statement that adds to the tallies (`add`)."""
    if connection.vendor != "postgresql":
        return  # SQLite runs one writer at a time
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_REBUILD_LOCK_SPACE, project_id % 2**31])


def _day(moment) -> str | None:
    return moment.date().isoformat() if moment is not None else None


def item_facts(item: Item) -> tallies.ItemFacts:
    return tallies.ItemFacts(
        state=item.state,
        resolution=item.resolution,
        excluded=item.excluded,
        final_value=item.final_value,
        is_gold=item.is_gold,
        gold_value=item.gold_value,
        answer_type=item.answer_type,
        resolved_day=_day(item.resolved_at),
    )


def _as_stored(value):
    """A label value held in memory as the database gives it back (JSON: tuples become lists, and so on)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return json.loads(json.dumps(value))


def _facts_of(label: Label) -> tallies.LabelFacts:
    seconds = float(label.seconds_spent) if label.seconds_spent is not None else None
    return tallies.LabelFacts(
        label.annotator_id, _as_stored(label.value), label.unsuitable, seconds, _day(label.created_at)
    )


def _label_facts(item_ids: Sequence[int]) -> dict[int, list[tallies.LabelFacts]]:
    found: dict[int, list[tallies.LabelFacts]] = {item_id: [] for item_id in item_ids}
    if not item_ids:
        return found
    rows = (
        Label.objects.filter(item_id__in=item_ids)
        .order_by("item_id", "created_at", "id")
        .values_list("item_id", "annotator_id", "value", "unsuitable", "seconds_spent", "created_at")
    )
    for item_id, annotator_id, value, unsuitable, seconds, created_at in rows:
        found[item_id].append(tallies.LabelFacts(annotator_id, value, unsuitable, seconds, _day(created_at)))
    return found


def _facts_from_labels(items: Sequence[Item], labels: Iterable[Label]) -> dict[int, list[tallies.LabelFacts]]:
    found: dict[int, list[tallies.LabelFacts]] = {item.pk: [] for item in items}
    for label in sorted(labels, key=lambda label: (label.item_id, label.created_at, label.pk)):
        found[label.item_id].append(_facts_of(label))
    return found


class Reads:
    """What contributors read about a tracker's items, kept for the tracker's second look when the change being
    tracked cannot alter it (a label does not change verdicts or completions): `once(key, read)` calls `read()`
    the first time a key is asked for, then returns the same value."""

    def __init__(self, *, keep: bool = True):
        self.keep = keep
        self._values: dict = {}

    def once(self, key, read: Callable[[], object]):
        if not self.keep:
            return read()
        if key not in self._values:
            self._values[key] = read()
        return self._values[key]


Contributor = Callable[[AnnotationProject, Sequence[Item], Reads], Counter]
_CONTRIBUTORS: dict[str, list[Contributor]] = {}


def register_contributor(kind: str, contributor: Contributor) -> None:
    """A higher layer that keeps figures about a kind's items (grading: verdicts against final labels) adds its
    own tallies: `contributor(project, items, reads)` returns what those items add, from the items as given and
    what it stores itself, reading its own rows through `reads.once`. It must then call `track_subjects` around
    every write of its own that changes them."""
    _CONTRIBUTORS.setdefault(kind, []).append(contributor)


def contribution(
    project: AnnotationProject,
    items: Sequence[Item],
    *,
    labels: Iterable[Label] | None = None,
    reads: Reads | None = None,
) -> Counter:
    """What these items (as they are in memory, with their labels as stored now, or `labels` when the caller
    holds every label of these items) add to the project's tallies."""
    rules, threshold = project.judgement, project.agreement_threshold
    by_item = _label_facts([item.pk for item in items]) if labels is None else _facts_from_labels(items, labels)
    total = tallies.sum_tallies(
        tallies.item_tallies(rules, threshold, item_facts(item), by_item[item.pk]) for item in items
    )
    reads = reads if reads is not None else Reads()
    for contributor in _CONTRIBUTORS.get(project.kind, ()):
        total.update(contributor(project, items, reads))
    return total


def _shard(key: str, actor_id: int | None) -> int:
    if key.startswith(("n|", "t|")):
        return 0  # one annotator's counters: their own writes come one at a time
    return (actor_id or 0) % SHARDS


def group_counts(tally: Mapping[str, int]) -> dict[tuple[str, str], list[int]]:
    """The `q|` keys of a tally as {(series, group): [n, c]}."""
    found: dict[tuple[str, str], list[int]] = {}
    for key, count in tally.items():
        if count and key.startswith(GROUP_PREFIX):
            _, counter, about = key.split("|", 2)
            series, group = json.loads(about)
            found.setdefault((series, group), [0, 0])["nc".index(counter)] += count
    return found


def _group_rows(groups: Mapping[tuple[str, str], list[int]]) -> list[tuple[str, str, int, int]]:
    return sorted((series, group, n, c) for (series, group), (n, c) in groups.items() if n or c)


_PROJECT_TABLE, _GROUP_TABLE = ProjectTally._meta.db_table, GroupTally._meta.db_table
_VECTOR_TABLE, _SERIES_TABLE = VectorTally._meta.db_table, SeriesTally._meta.db_table
# PostgreSQL: the shared lock and both upserts in one statement of fixed text (the rows travel as arrays); every
# row to insert is joined to the lock's row, so no counter moves before the lock is held
_ADD_IN_ONE_STATEMENT = f"""
    WITH held AS (SELECT pg_advisory_xact_lock_shared(%(space)s, %(key)s) AS done),
    groups AS (
        INSERT INTO {_GROUP_TABLE} (project_id, series, "group", n, c)
        SELECT %(project)s, r.series, r.grp, r.n, r.c
        FROM held, unnest(%(series)s::text[], %(groups)s::text[], %(ns)s::bigint[], %(cs)s::bigint[])
            WITH ORDINALITY AS r(series, grp, n, c, position)
        ORDER BY r.position
        ON CONFLICT (project_id, series, "group") DO UPDATE
        SET n = {_GROUP_TABLE}.n + EXCLUDED.n, c = {_GROUP_TABLE}.c + EXCLUDED.c
    ),
    vectors AS (
        UPDATE {_VECTOR_TABLE} AS v SET counts = r.counts
        FROM held, unnest(%(vector_series)s::text[], %(vector_groups)s::text[], %(vector_counts)s::text[])
            AS r(series, grp, counts)
        WHERE v.project_id = %(project)s AND v.series = r.series AND v."group" = r.grp
    ),
    moments AS (
        INSERT INTO {_SERIES_TABLE} (project_id, key, shard, count)
        SELECT %(project)s, r.key, r.shard, r.count
        FROM held, unnest(%(moment_keys)s::text[], %(moment_shards)s::int[], %(moment_counts)s::bigint[])
            WITH ORDINALITY AS r(key, shard, count, position)
        ORDER BY r.position
        ON CONFLICT (project_id, key, shard) DO UPDATE SET count = {_SERIES_TABLE}.count + EXCLUDED.count
    )
    INSERT INTO {_PROJECT_TABLE} (project_id, key, shard, count)
    SELECT %(project)s, r.key, r.shard, r.count
    FROM held, unnest(%(keys)s::text[], %(shards)s::int[], %(counts)s::bigint[])
        WITH ORDINALITY AS r(key, shard, count, position)
    ORDER BY r.position
    ON CONFLICT (project_id, key, shard) DO UPDATE SET count = {_PROJECT_TABLE}.count + EXCLUDED.count
"""


def add(project_id: int, delta: Mapping[str, int], *, actor_id: int | None = None) -> None:
    """Add `delta` to the project's tallies (in the caller's transaction)."""
    # sorted, so concurrent writers lock the rows in one order
    rows = sorted(
        (key, _shard(key, actor_id), count)
        for key, count in delta.items()
        if count and not key.startswith((GROUP_PREFIX, VECTOR_PREFIX))
    )
    group_rows = _group_rows(group_counts(delta))
    vector_changes = tallies.vector_deltas(delta)
    if not rows and not group_rows and not vector_changes:
        return
    vector_rows, moments = _changed_vectors(project_id, vector_changes)
    series_rows = sorted((key, _shard(key, actor_id), count) for key, count in moments.items() if count)
    if connection.vendor == "postgresql":
        series, groups, ns, cs = _columns(group_rows, 4)
        keys, shards, counts = _columns(rows, 3)
        vector_series, vector_groups, vector_texts = _columns(vector_rows, 3)
        moment_keys, moment_shards, moment_counts = _columns(series_rows, 3)
        with prepared_cursor() as cursor:
            cursor.execute(
                _ADD_IN_ONE_STATEMENT,
                {
                    "space": _REBUILD_LOCK_SPACE,
                    "key": project_id % 2**31,
                    "project": project_id,
                    "series": series,
                    "groups": groups,
                    "ns": ns,
                    "cs": cs,
                    "vector_series": vector_series,
                    "vector_groups": vector_groups,
                    "vector_counts": vector_texts,
                    "moment_keys": moment_keys,
                    "moment_shards": moment_shards,
                    "moment_counts": moment_counts,
                    "keys": keys,
                    "shards": shards,
                    "counts": counts,
                },
            )
        return
    # SQLite runs one writer at a time: the same upserts, each with a VALUES list
    _upsert_adding(_GROUP_TABLE, ("series", '"group"'), ("n", "c"), project_id, group_rows)
    _upsert_adding(_SERIES_TABLE, ("key", "shard"), ("count",), project_id, series_rows)
    _upsert_adding(_PROJECT_TABLE, ("key", "shard"), ("count",), project_id, rows)
    if vector_rows:
        with connection.cursor() as cursor:
            cursor.executemany(
                f'UPDATE {_VECTOR_TABLE} SET counts = %s WHERE project_id = %s AND series = %s AND "group" = %s',
                [(text, project_id, series_name, group) for series_name, group, text in vector_rows],
            )


# PostgreSQL: the shared lock, then each changed vector's row created if missing and locked (a no-op update), in
# sorted order, returning what it holds now; the new vectors and their series' moments go out with the other tallies
_LOCK_VECTORS = f"""
    WITH held AS (SELECT pg_advisory_xact_lock_shared(%(space)s, %(key)s) AS done)
    INSERT INTO {_VECTOR_TABLE} (project_id, series, "group", counts)
    SELECT %(project)s, r.series, r.grp, ''
    FROM held, unnest(%(series)s::text[], %(groups)s::text[]) WITH ORDINALITY AS r(series, grp, position)
    ORDER BY r.position
    ON CONFLICT (project_id, series, "group") DO UPDATE SET counts = {_VECTOR_TABLE}.counts
    RETURNING series, "group", counts
"""


def _changed_vectors(
    project_id: int, changes: Mapping[tuple[str, str], Mapping[int, int]]
) -> tuple[list[tuple[str, str, str]], Counter]:
    """Lock the changed vectors' rows and read them; returns the rows' new text and how their series' moments
    move."""
    if not changes:
        return [], Counter()
    ordered = sorted(changes)
    if connection.vendor == "postgresql":
        with prepared_cursor() as cursor:
            cursor.execute(
                _LOCK_VECTORS,
                {
                    "space": _REBUILD_LOCK_SPACE,
                    "key": project_id % 2**31,
                    "project": project_id,
                    "series": [series for series, _ in ordered],
                    "groups": [group for _, group in ordered],
                },
            )
            held = {(series, group): counts for series, group, counts in cursor.fetchall()}
    else:
        held = {
            (series, group): counts
            for series, group, counts in VectorTally.objects.filter(
                project_id=project_id,
                series__in={series for series, _ in ordered},
                group__in={group for _, group in ordered},
            ).values_list("series", "group", "counts")
        }
        missing = [key for key in ordered if key not in held]
        VectorTally.objects.bulk_create(
            [VectorTally(project_id=project_id, series=series, group=group) for series, group in missing]
        )
    rows, moments = [], Counter()
    for series, group in ordered:
        before = tallies.parse_vector(held.get((series, group), ""))
        after = tallies.add_cells(before, changes[(series, group)])
        rows.append((series, group, tallies.vector_text(after)))
        moments.update(tallies.moment_change(series, before, after))
    return rows, moments


def _columns(rows: Sequence[tuple], width: int) -> list[list]:
    """The rows' values column by column (`width` empty lists when there are no rows)."""
    return [list(column) for column in zip(*rows)] if rows else [[] for _ in range(width)]


def _upsert_adding(
    table: str, key_columns: Sequence[str], counters: Sequence[str], project_id: int, rows: Sequence[tuple]
) -> None:
    """Insert the project's rows (key columns, then counters), adding the counters to those of a row that exists."""
    if not rows:
        return
    columns = ("project_id", *key_columns, *counters)
    values = ", ".join([f"({', '.join(['%s'] * len(columns))})"] * len(rows))
    updates = ", ".join(f"{counter} = {table}.{counter} + EXCLUDED.{counter}" for counter in counters)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES {values} "
            f"ON CONFLICT (project_id, {', '.join(key_columns)}) DO UPDATE SET {updates}",
            [value for row in rows for value in (project_id, *row)],
        )


class Tracker:
    """Reads the items' contribution when made; `done()` reads it again and adds the difference. The caller holds
    the items' row locks and changes the same instances (and their labels) in between.

    A caller that already holds every label of the items passes them (`labels=` here and to `done`), and the
    tracker reads none; what contributors read is read once unless the change alters it (`stable_reads=False`)."""

    def __init__(
        self,
        project: AnnotationProject,
        items: Iterable[Item],
        *,
        actor_id: int | None = None,
        labels: Iterable[Label] | None = None,
        stable_reads: bool = True,
    ):
        self.project, self.items, self.actor_id = project, list(items), actor_id
        self.reads = Reads(keep=stable_reads)
        self.before = contribution(project, self.items, labels=labels, reads=self.reads) if self.items else Counter()

    def done(self, *, labels: Iterable[Label] | None = None) -> None:
        if not self.items:
            return
        after = contribution(self.project, self.items, labels=labels, reads=self.reads)
        add(self.project.pk, tallies.difference(after, self.before), actor_id=self.actor_id)


def track(
    project: AnnotationProject,
    items: Iterable[Item],
    *,
    actor_id: int | None = None,
    labels: Iterable[Label] | None = None,
) -> Tracker:
    return Tracker(project, items, actor_id=actor_id, labels=labels)


class SubjectTracker:
    """`track_subjects`: trackers over every project item of these subjects, whatever the project."""

    def __init__(self, trackers: list[Tracker]):
        self.trackers = trackers

    def done(self) -> None:
        for tracker in self.trackers:
            tracker.done()


def track_subjects(kind: str, subject_ids: Sequence[int]) -> SubjectTracker:
    """Before a write outside the workflow changes what a contributor counts for these subjects (a verdict):
    locks their items in every project of the kind and reads their contribution; call `done()` after the write,
    in the same transaction."""
    if kind not in _CONTRIBUTORS or not subject_ids:
        return SubjectTracker([])
    # the items are found first without a lock (most completions a run verifies are in no project), then locked
    wanted = set(subject_ids)
    item_ids = [
        pk
        for pk, subject_id in Item.objects.filter(project__kind=kind)
        .filter(subject_keys("subject_id", wanted))
        .values_list("pk", "subject_id")
        if subject_id in wanted
    ]
    items = (
        list(
            Item.objects.select_for_update(of=("self",))
            .select_related("project")
            .filter(pk__in=item_ids, subject_id__in=wanted)
            .order_by("pk")
        )
        if item_ids
        else []
    )
    by_project: dict[int, list[Item]] = {}
    for item in items:
        by_project.setdefault(item.project_id, []).append(item)
    return SubjectTracker(
        [Tracker(project_items[0].project, project_items, stable_reads=False) for project_items in by_project.values()]
    )


def state_moved(item: Item, from_state: str, *, actor_id: int | None = None) -> None:
    """A claim moved an unlabeled item from one state to another: the only figure that changes is its state."""
    if item.is_gold or from_state == item.state:
        return
    add(item.project_id, {f"s|{from_state}": -1, f"s|{item.state}": 1}, actor_id=actor_id)


def items_added(project: AnnotationProject, items: Sequence[Item], chunk: int = 2000) -> None:
    """New items (no labels yet) joined the project; what they add includes the higher layers' figures (a verdict
    recorded on a completion before the project existed counts as soon as its item does)."""
    for start in range(0, len(items), chunk):
        delta = contribution(project, items[start : start + chunk])
        if delta:
            add(project.pk, delta)


def group_key(counter: str, series: str, group: str) -> str:
    return f"{GROUP_PREFIX}{counter}|{json.dumps([series, group])}"


def all_kept_tallies(project: AnnotationProject) -> dict[str, int]:
    """Every tally kept for the project, the GroupTally rows as their `q|` keys: what `computed_tallies` gives when
    nothing was missed (for checks; pages read `project_tallies` or aggregate GroupTally in SQL)."""
    kept = project_tallies(project)
    for series, group, n, c in GroupTally.objects.filter(project=project).values_list("series", "group", "n", "c"):
        for counter, count in (("n", n), ("c", c)):
            if count:
                kept[group_key(counter, series, group)] = count
    for series, group, text in VectorTally.objects.filter(project=project).values_list("series", "group", "counts"):
        for cell, count in enumerate(tallies.parse_vector(text)):
            if count:
                kept[tallies.vector_key(series, group, cell)] = count
    kept.update(series_tallies(project))
    return kept


def series_tallies(project: AnnotationProject, series: Sequence[str] | None = None) -> dict[str, int]:
    """The moments of the project's vector series (`SeriesTally`) summed over shards, of every series or of those
    given."""
    rows = SeriesTally.objects.filter(project=project)
    summed = rows.values_list("key").annotate(total=Sum("count")).order_by()
    found = {key: total for key, total in summed if total}
    if series is None:
        return found
    wanted = set(series)
    return {key: count for key, count in found.items() if _series_of(key) in wanted}


def _series_of(key: str) -> str:
    kind, _, rest = key.partition("|")
    if kind == "wn":
        return rest
    return rest.split("|", 2 if kind == "wm" else 1)[-1]


def vector_histogram(project: AnnotationProject, series: Sequence[str]) -> dict[str, list[tuple[list[int], int]]]:
    """{series: [(vector, groups with it)]} for the given series, counted in the database (one grouped query)."""
    if not series:
        return {}
    rows = (
        VectorTally.objects.filter(project=project, series__in=list(series))
        .exclude(counts="")
        .values_list("series", "counts")
        .annotate(groups=Count("pk"))
        .order_by()
    )
    found: dict[str, list[tuple[list[int], int]]] = {}
    for name, text, groups in rows:
        found.setdefault(name, []).append((tallies.parse_vector(text), groups))
    return found


def kinds_with_contributors() -> list[str]:
    return sorted(_CONTRIBUTORS)


def project_tallies(project: AnnotationProject, prefixes: Sequence[str] = ()) -> dict[str, int]:
    """The project's tallies summed over shards: {key: count}; only keys starting with one of `prefixes` if given.
    A page that shows many figures calls `read_once` first, and every later call on that instance reads no row."""
    cached = getattr(project, "_tallies_read", None)
    if cached is not None:
        return {key: count for key, count in cached.items() if not prefixes or key.startswith(tuple(prefixes))}
    rows = ProjectTally.objects.filter(project=project)
    if prefixes:
        condition = Q()
        for prefix in prefixes:
            condition |= Q(key__startswith=prefix)
        rows = rows.filter(condition)
    summed = rows.values_list("key").annotate(total=Sum("count")).order_by()
    return {key: total for key, total in summed if total}


def read_once(project: AnnotationProject) -> None:
    """Read all the project's tallies now and keep them on this instance (for one request's figures)."""
    project._tallies_read = None  # type: ignore[attr-defined]
    project._tallies_read = project_tallies(project)  # type: ignore[attr-defined]


def computed_tallies(project: AnnotationProject, chunk: int = 2000) -> Counter:
    """The project's tallies computed from its items and labels, a chunk of items at a time."""
    total: Counter = Counter()
    rules, threshold = project.judgement, project.agreement_threshold
    last_id = 0
    while True:
        items = list(
            Item.objects.filter(project=project, pk__gt=last_id)
            .order_by("pk")
            .only(
                "id",
                "project_id",
                "subject_id",
                "state",
                "resolution",
                "excluded",
                "final_value",
                "is_gold",
                "gold_value",
                "answer_type",
                "resolved_at",
                "confidence",
            )[:chunk]
        )
        if not items:
            return total
        by_item = _label_facts([item.pk for item in items])
        for item in items:
            total.update(tallies.item_tallies(rules, threshold, item_facts(item), by_item[item.pk]))
        reads = Reads()
        for contributor in _CONTRIBUTORS.get(project.kind, ()):
            total.update(contributor(project, items, reads))
        last_id = items[-1].pk


def computed_with_moments(project: AnnotationProject) -> Counter:
    """`computed_tallies` with the moments of its vector series: every key `all_kept_tallies` gives back."""
    total = computed_tallies(project)
    total.update(tallies.vector_moments(total))
    return total


def rebuild(project: AnnotationProject) -> int:
    """Recompute the project's tallies from scratch and store them; returns how many keys it has. Writers wait
    meanwhile (they take the lock this holds exclusive)."""
    with transaction.atomic():
        _lock_exclusive(project.pk)
        computed = computed_tallies(project)
        ProjectTally.objects.filter(project=project).delete()
        ProjectTally.objects.bulk_create(
            [
                ProjectTally(project=project, key=key, shard=0, count=count)
                for key, count in computed.items()
                if count and not key.startswith((GROUP_PREFIX, VECTOR_PREFIX))
            ],
            batch_size=2000,
        )
        vectors = tallies.vector_deltas(computed)
        VectorTally.objects.filter(project=project).delete()
        VectorTally.objects.bulk_create(
            [
                VectorTally(project=project, series=series, group=group, counts=text)
                for (series, group), cells in vectors.items()
                if (text := tallies.vector_text(tallies.add_cells([], cells)))
            ],
            batch_size=5000,
        )
        SeriesTally.objects.filter(project=project).delete()
        SeriesTally.objects.bulk_create(
            [
                SeriesTally(project=project, key=key, shard=0, count=count)
                for key, count in tallies.vector_moments(computed).items()
                if count
            ],
            batch_size=2000,
        )
        GroupTally.objects.filter(project=project).delete()
        GroupTally.objects.bulk_create(
            [
                GroupTally(project=project, series=series, group=group, n=n, c=c)
                for (series, group), (n, c) in group_counts(computed).items()
            ],
            batch_size=2000,
        )
    return sum(1 for count in computed.values() if count)
