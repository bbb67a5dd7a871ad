"""Read-side queries of the annotation workflow. Everything an annotator may see goes through task_payload."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, OuterRef, Q, Sum
from django.utils import timezone

from core import labels, roles, subjects, taxonomy
from core.metrics import tallies
from core.subjects import ViewContext

from . import aggregates, workflow
from .models import (
    AnnotationProject,
    GuidelinesVersion,
    Invitation,
    Item,
    ItemEvent,
    Label,
    ProjectChange,
    ProjectMember,
    Task,
)


def projects_for(user):
    """Researchers and admins see every project; others only those they are members of."""
    projects = AnnotationProject.objects.select_related("dataset")
    if roles.is_researcher(user):
        return projects
    return projects.filter(memberships__user=user, memberships__is_active=True).distinct()


def visible_project(user, project_id: int) -> AnnotationProject | None:
    return projects_for(user).filter(pk=project_id).first()


def member_roles(project: AnnotationProject, user) -> set[str]:
    return set(ProjectMember.objects.filter(project=project, user=user, is_active=True).values_list("role", flat=True))


def can_adjudicate(project: AnnotationProject, user) -> bool:
    if roles.is_admin(user):
        return True
    return roles.is_adjudicator(user) and (
        ProjectMember.Role.ADJUDICATOR in member_roles(project, user) or roles.is_researcher(user)
    )


def can_review(project: AnnotationProject, user) -> bool:
    """Researchers and the project's adjudicators see all labels, history and verdicts."""
    return roles.is_researcher(user) or can_adjudicate(project, user)


def guidelines_for(project: AnnotationProject, user) -> dict:
    """The guidelines as a member sees them: the current version and whether it is newer than the last one they
    acknowledged (then the page opens it for them)."""
    seen = (
        ProjectMember.objects.filter(project=project, user=user, is_active=True)
        .order_by("-guidelines_seen_version")
        .values_list("guidelines_seen_version", flat=True)
        .first()
    ) or 0
    return {
        "version": project.guidelines_version,
        "text": project.guidelines,
        "description": project.description,
        "seen_version": seen,
        "unseen": bool(project.guidelines) and project.guidelines_version > seen,
    }


def guidelines_history(project: AnnotationProject, limit: int = 20):
    return GuidelinesVersion.objects.filter(project=project).select_related("created_by").order_by("-version")[:limit]


def recent_changes(project: AnnotationProject, limit: int = 30, kinds=None):
    rows = ProjectChange.objects.filter(project=project)
    if kinds is not None:
        rows = rows.filter(kind__in=kinds)
    return rows.select_related("actor").order_by("-created_at", "-id")[:limit]


def label_counts(project: AnnotationProject) -> dict[int, int]:
    """{annotator id: labels they gave in the project}, gold items left out."""
    return dict(
        Label.objects.filter(item__project=project, item__is_gold=False)
        .values_list("annotator_id")
        .annotate(n=Count("pk"))
        .order_by()
    )


def member_rows(project: AnnotationProject) -> list[dict]:
    """Every membership of the project, active ones first, with the labels each person gave in it (gold
    excluded) and the live leases they hold."""
    now = timezone.now()
    labels_given = label_counts(project)
    lease_counts = dict(
        Task.objects.filter(item__project=project, status=Task.Status.LEASED, expires_at__gt=now)
        .values_list("annotator_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    memberships = (
        ProjectMember.objects.filter(project=project)
        .select_related("user")
        .order_by("-is_active", "role", "user__username")
    )
    return [
        {
            "member": member,
            "labels": labels_given.get(member.user_id, 0),
            "live_leases": lease_counts.get(member.user_id, 0),
            "password_set": member.user.has_usable_password(),
            "guidelines_current": member.guidelines_seen_version >= project.guidelines_version,
        }
        for member in memberships
    ]


def active_members(project: AnnotationProject):
    return (
        ProjectMember.objects.filter(project=project, is_active=True)
        .select_related("user")
        .order_by("role", "user__username")
    )


def invitations(project: AnnotationProject, limit: int = 50) -> list[dict]:
    now = timezone.now()
    rows = (
        Invitation.objects.filter(project=project)
        .select_related("created_by", "used_by", "account", "revoked_by")
        .order_by("-created_at", "-id")[:limit]
    )
    return [{"invitation": invitation, "status": invitation.status(now)} for invitation in rows]


def policy_situation(project: AnnotationProject) -> dict:
    """What decides whether labels per item and tie-break annotators can change now (see
    services.update_project): items waiting for a tie-break, and the most labels any first-round item has."""
    open_items = Item.objects.filter(project=project, is_gold=False, state__in=workflow.OPEN_STATES)
    counts = open_items.aggregate(
        waiting_tiebreak=Count("pk", filter=Q(state=workflow.NEEDS_TIEBREAK)),
        first_round_started=Count(
            "pk", filter=Q(state__in=[workflow.PENDING, workflow.IN_PROGRESS], label_count__gt=0)
        ),
    )
    return counts


def own_task(user, task_id: int) -> Task | None:
    return Task.objects.select_related("item__project").filter(pk=task_id, annotator=user).first()


def own_tasks(user, task_ids) -> list[Task]:
    return list(Task.objects.select_related("item").filter(pk__in=list(task_ids), annotator=user))


def task_payload(task: Task) -> dict:
    """The task as its annotator may see it: no one else's label or note, no prior label, no model name
    unless the project shows it, no verdicts unless the project shows them, nothing that marks gold items.

    The subject's part comes from the project kind's subject plug-in (core.subjects), given only what the
    project allows this annotator to see."""
    item = task.item
    project = item.project
    # only a submitted task has a label (submitting is what ends a lease), so a fresh claim needs no lookup
    label = Label.objects.filter(task=task).first() if task.status == Task.Status.SUBMITTED else None
    context = ViewContext(
        kind=project.kind,
        project={"id": project.pk, "name": project.name, "kind": project.kind},
        show_model_names=project.show_model_names,
        show_verdicts=project.verdict_visibility == AnnotationProject.VerdictVisibility.EVERYONE,
        my_label=label_dict(label, with_annotator=False) if label is not None else None,
        threshold=project.agreement_threshold,
    )
    return {
        "task_id": task.pk,
        "item_id": item.pk,
        "project": {"id": project.pk, "name": project.name, "kind": project.kind},
        "status": task.status,
        "lease_expires_at": task.expires_at.isoformat(),
        **project.subject_kind.task_view(item.subject_id, context),
    }


def label_dict(label: Label, *, with_annotator: bool = True) -> dict:
    data = {
        "value": label.value,
        "unsuitable": label.unsuitable,
        "unsuitable_reason": label.unsuitable_reason,
        "note": label.note,
        "details": label.details,
        "is_tiebreak": label.is_tiebreak,
        "seconds_spent": label.seconds_spent,
        "created_at": label.created_at.isoformat(),
        "updated_at": label.updated_at.isoformat(),
    }
    if with_annotator:
        data["annotator"] = {"id": label.annotator_id, "username": label.annotator.username}
    return data


def item_review(item: Item) -> dict:
    """Everything about an item for adjudicators and researchers: all labels with who gave them, and what the
    subject plug-in shows reviewers (the verdicts too, unless the project hides them from everyone)."""
    project = item.project
    rules = project.judgement
    labels_given = item_labels(item)
    context = ViewContext(
        kind=project.kind,
        project={"id": project.pk, "name": project.name, "kind": project.kind},
        show_model_names=True,
        show_verdicts=project.verdict_visibility != AnnotationProject.VerdictVisibility.NOBODY,
        labels=labels_given,
        threshold=project.agreement_threshold,
    )
    return {
        "item_id": item.pk,
        "project": {"id": item.project_id, "name": project.name, "kind": project.kind},
        "state": item.state,
        "resolution": item.resolution,
        "final_value": item.final_value,
        "final_display": rules.display(item.final_value) if item.final_value is not None else None,
        "excluded": item.excluded,
        "is_gold": item.is_gold,
        "gold_value": item.gold_value,
        "required_labels": item.required_labels,
        "labels": labels_given,
        **project.subject_kind.review_view(item.subject_id, context),
    }


def item_labels(item: Item) -> list[dict]:
    """Every label of an item with who gave it and how it reads, the same for every subject kind."""
    rules = item.project.judgement
    return [
        {**label_dict(label), "display": "Unsuitable" if label.unsuitable else rules.display(label.value)}
        for label in Label.objects.filter(item=item).select_related("annotator").order_by("created_at", "id")
    ]


def summaries(items) -> dict[int, dict]:
    """{item_id: the subject plug-in's summary (name, title, detail)} for a list of items."""
    by_kind: dict[str, list] = {}
    for item in items:
        by_kind.setdefault(item.project.kind, []).append(item)
    found: dict[int, dict] = {}
    for kind_items in by_kind.values():
        of_subject = kind_items[0].project.subject_kind.summaries([item.subject_id for item in kind_items])
        for item in kind_items:
            found[item.pk] = of_subject.get(item.subject_id, {"name": str(item.subject_id), "title": "", "detail": ""})
    return found


def history(item: Item) -> list[dict]:
    return [
        {
            "at": event.created_at.isoformat(),
            "actor": event.actor.username if event.actor else None,
            "event": event.kind,
            "from_state": event.from_state,
            "to_state": event.to_state,
            "value": event.value,
            "rationale": event.rationale,
        }
        for event in ItemEvent.objects.filter(item=item).select_related("actor").order_by("created_at", "id")
    ]


def conflicts(project: AnnotationProject):
    return (
        Item.objects.filter(project=project, state=workflow.NEEDS_ADJUDICATION, is_gold=False)
        .select_related("project")
        .order_by("priority", "id")
    )


CONFLICTS_PAGE_SIZE = 50


def conflicts_page(project: AnnotationProject, after: str = "", page_size: int = CONFLICTS_PAGE_SIZE):
    """One page of the conflicts queue read from a key (the last "priority~id" seen), and the key of the next page
    (None on the last). One query on the conflict-queue index whatever the number of conflicts."""
    rows = conflicts(project)
    if after:
        priority, item_id = _parse_key(after)
        rows = rows.filter(Q(priority__gt=priority) | Q(priority=priority, id__gt=item_id))
    found = list(rows[: page_size + 1])
    next_key = _key(found[page_size - 1], "priority") if len(found) > page_size else None
    return found[:page_size], next_key


def conflict_count(project: AnnotationProject) -> int:
    return tallies.state_counts(aggregates.project_tallies(project, ("s|",)))["by_state"][workflow.NEEDS_ADJUDICATION]


def my_progress(project: AnnotationProject, user) -> dict:
    """The annotator's own figures: labels today and in all, seconds spent today, the project's open items, and
    how many of those are left for them (open items they have neither labeled nor skipped).

    "Left for me" is the open items (index on project and state) less the user's own finished tasks on open items
    (index on annotator, status and item), so it costs two index-range counts and never an anti-join over the
    project."""
    today = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    mine = Label.objects.filter(item__project=project, annotator=user)
    open_items = Item.objects.filter(project=project, is_gold=False, state__in=workflow.OPEN_STATES)
    left_in_project = open_items.count()
    finished_on_open = Task.objects.filter(
        annotator=user,
        status__in=[Task.Status.SUBMITTED, Task.Status.SKIPPED],
        item__project=project,
        item__is_gold=False,
        item__state__in=workflow.OPEN_STATES,
    ).count()
    today_figures = mine.filter(created_at__gte=today).aggregate(n=Count("pk"), seconds=Sum("seconds_spent"))
    done_total = mine.count()
    left_for_me = max(0, left_in_project - finished_on_open)
    return {
        "done_today": today_figures["n"],
        "seconds_today": round(today_figures["seconds"] or 0),
        "done_total": done_total,
        "left_in_project": left_in_project,
        "left_for_me": left_for_me,
        "percent_done": round(100 * done_total / (done_total + left_for_me)) if done_total + left_for_me else 100,
    }


def state_counts(project: AnnotationProject, kept: Mapping[str, int] | None = None) -> dict:
    """Items by state and resolution, excluded items, labels and gold items, from the project's tallies."""
    counts = tallies.state_counts(aggregates.project_tallies(project) if kept is None else kept)
    by_resolution = counts["by_resolution"]
    # "model" is listed for projects that aggregate with their annotator model (or have such final labels)
    counts["by_resolution"] = {
        res: by_resolution.get(res, 0)
        for res in workflow.RESOLUTIONS
        if res != workflow.BY_MODEL or project.aggregation == "model" or by_resolution.get(res)
    }
    return counts


def agreement_figures(project: AnnotationProject, kept: Mapping[str, int] | None = None) -> dict:
    """Raw agreement and Cohen's kappa on each item's first two labels; Krippendorff's alpha over all labels
    (nominal for labels, interval for scores). From the project's tallies."""
    kept = aggregates.project_tallies(project, AGREEMENT_KEYS) if kept is None else kept
    return tallies.overall_agreement(project.judgement, kept)


AGREEMENT_KEYS = ("ai|", "ap|", "aa|", "au|")


def agreement_by_answer_type(project: AnnotationProject, kept: Mapping[str, int] | None = None) -> dict:
    kept = aggregates.project_tallies(project, AGREEMENT_KEYS) if kept is None else kept
    return tallies.agreement_by_group(project.judgement, kept)


def annotator_table(project: AnnotationProject, kept: Mapping[str, int] | None = None) -> list[dict]:
    """Per annotator: labels given, agreement with the final label, median seconds per item, gold accuracy."""
    kept = aggregates.project_tallies(project, ("n|", "t|")) if kept is None else kept
    rows = tallies.annotator_rows(kept)
    names = dict(get_user_model().objects.filter(pk__in=list(rows)).values_list("pk", "username"))
    table = [{"annotator": names.get(annotator_id, str(annotator_id)), **row} for annotator_id, row in rows.items()]
    return sorted(table, key=lambda r: r["annotator"])


def progress(project: AnnotationProject) -> dict:
    kept = aggregates.project_tallies(project)
    return {
        "project": {"id": project.pk, "name": project.name, "kind": project.kind},
        **state_counts(project, kept),
        "agreement": agreement_figures(project, kept),
        "annotators": annotator_table(project, kept),
    }


def progress_over_time(project: AnnotationProject, days: int = 30) -> list[dict]:
    since = (timezone.now() - timedelta(days=days)).date().isoformat()
    return tallies.timeline(aggregates.project_tallies(project, ("dl|", "dr|")), since)


# ---------------------------------------------------------------- the item browser


class InvalidFilter(ValueError):
    """A filter, order or page key the item browser cannot use; the message is meant for the person who sent it."""


# Criteria answered by the subject plug-ins (core.subjects), under the names the browser's forms and the API use.
SUBJECT_PARAMS = {"model": "model", "q": "text", "verifier": "verifier", "verdict": "verdict"}
VERDICT_PARAMS = ("verifier", "verdict")
DISAGREEMENT_EVENTS = ("tiebreak_requested", "adjudication_requested")

# sort name -> (the item field read in that order, descending); ties are broken by id in the same direction
SORTS: dict[str, tuple[str, bool]] = {
    "id": ("id", False),
    "-id": ("id", True),
    "-priority": ("priority", True),
    "priority": ("priority", False),
    "-label_count": ("label_count", True),
    "label_count": ("label_count", False),
}
SORT_NAMES = {
    "id": "Oldest first",
    "-id": "Newest first",
    "-priority": "Highest priority first",
    "priority": "Lowest priority first",
    "-label_count": "Most labels first",
    "label_count": "Fewest labels first",
}
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200


def _yes_no(params: Mapping, name: str) -> bool | None:
    raw = (params.get(name) or "").strip().lower()
    if raw in ("", "any"):
        return None
    if raw in ("yes", "true", "1"):
        return True
    if raw in ("no", "false", "0"):
        return False
    raise InvalidFilter(f"{name} is yes or no, not {raw!r}")


@dataclass(frozen=True)
class ItemFilter:
    """What the item browser (page and API) narrows a project's items to. Empty fields do not narrow."""

    state: str = ""
    resolution: str = ""
    disagreement: bool | None = None  # the labels disagreed: the item went to a tie-break or to adjudication
    answer_type: str = ""
    annotator: int | None = None  # labeled by this user
    gold: bool | None = None
    subject: Mapping[str, str] = field(default_factory=dict)  # subject criteria: model, text, verifier, verdict

    @classmethod
    def from_params(cls, params: Mapping) -> ItemFilter:
        """Read a filter from query parameters (the names of `as_params`); raises InvalidFilter."""

        def text(name: str) -> str:
            value = params.get(name) or ""
            return value.strip() if isinstance(value, str) else str(value)

        state, resolution, answer_type = text("state"), text("resolution"), text("answer_type")
        if state and state not in workflow.STATES:
            raise InvalidFilter(f"{state!r} is not a state; choose from {', '.join(workflow.STATES)}")
        if resolution and resolution not in workflow.RESOLUTIONS:
            raise InvalidFilter(f"{resolution!r} is not a resolution; choose from {', '.join(workflow.RESOLUTIONS)}")
        if answer_type and answer_type not in taxonomy.BY_CODE:
            raise InvalidFilter(f"{answer_type!r} is not an answer type code")
        annotator = text("annotator")
        if annotator and not annotator.isdigit():
            raise InvalidFilter("annotator is a user id")
        subject = {param: text(param) for param in SUBJECT_PARAMS if text(param)}
        if len(subject.get("q", "")) > 200:
            raise InvalidFilter("a search is at most 200 characters")
        return cls(
            state=state,
            resolution=resolution,
            disagreement=_yes_no(params, "disagreement"),
            answer_type=answer_type,
            annotator=int(annotator) if annotator else None,
            gold=_yes_no(params, "gold"),
            subject=subject,
        )

    def as_params(self) -> dict[str, str]:
        """The query parameters that give this filter back (empty ones left out)."""
        params = {
            "state": self.state,
            "resolution": self.resolution,
            "answer_type": self.answer_type,
            "annotator": str(self.annotator) if self.annotator else "",
            **self.subject,
        }
        for name in ("disagreement", "gold"):
            value = getattr(self, name)
            if value is not None:
                params[name] = "yes" if value else "no"
        return {name: value for name, value in params.items() if value}


def filtered_items(project: AnnotationProject, item_filter: ItemFilter):
    """The project's items that match the filter, as a query (nothing is loaded). Filters on what the subject says
    (model, text, verdicts) go through the subject plug-ins, which answer with queries of subject ids."""
    items = Item.objects.filter(project=project)
    if item_filter.state:
        items = items.filter(state=item_filter.state)
    if item_filter.resolution:
        items = items.filter(resolution=item_filter.resolution)
    if item_filter.answer_type:
        items = items.filter(answer_type=item_filter.answer_type)
    if item_filter.gold is not None:
        items = items.filter(is_gold=item_filter.gold)
    if item_filter.annotator is not None:
        items = items.filter(Exists(Label.objects.filter(item=OuterRef("pk"), annotator_id=item_filter.annotator)))
    if item_filter.disagreement is not None:
        disagreed = Exists(ItemEvent.objects.filter(item=OuterRef("pk"), kind__in=DISAGREEMENT_EVENTS))
        items = items.filter(disagreed if item_filter.disagreement else ~disagreed)
    criteria = {SUBJECT_PARAMS[param]: value for param, value in item_filter.subject.items()}
    try:
        for matching in subjects.subject_id_filters(project.kind, project.dataset_id, criteria):
            items = items.filter(_subject_among(matching))
    except labels.InvalidValue as exc:
        raise InvalidFilter(str(exc)) from None
    return items


def _subject_among(matching) -> Q:
    """The item's subject is one of these subject rows (or of any of these queries). A correlated EXISTS on the
    primary key lets PostgreSQL either hash the matching ids once or probe the subject row of each item it reads,
    whichever costs less: a search that matches most rows then stops after a page of items."""
    if isinstance(matching, (list, tuple)):
        condition = Q(pk__in=[])
        for one in matching:
            condition |= _subject_among(one)
        return condition
    return Q(Exists(matching.order_by().filter(pk=OuterRef("subject_id"))))


def may_filter_by_verdicts(project: AnnotationProject, user) -> bool:
    """Researchers always; the project's adjudicators only when the project shows verdicts to reviewers, so that a
    filter never tells them what the item page hides."""
    return roles.is_researcher(user) or project.verdict_visibility != AnnotationProject.VerdictVisibility.NOBODY


def filter_for(project: AnnotationProject, user, params: Mapping) -> ItemFilter:
    """The filter a viewer asks for in query parameters; raises InvalidFilter (also for verdicts they may not see)."""
    item_filter = ItemFilter.from_params(params)
    if any(param in item_filter.subject for param in VERDICT_PARAMS) and not may_filter_by_verdicts(project, user):
        raise InvalidFilter("this project does not show verdicts to reviewers")
    return item_filter


def filter_options(project: AnnotationProject, user) -> dict:
    """What the browser's filter form offers this viewer: the subject criteria the project's kind answers (with
    their choices where they come from a list), and the annotators who can have labeled its items."""
    annotators = (
        ProjectMember.objects.filter(project=project, role=ProjectMember.Role.ANNOTATOR)
        .order_by("user__username")
        .values_list("user_id", "user__username")
    )
    criteria = subjects.filter_criteria(project.kind)
    params = [param for param, criterion in SUBJECT_PARAMS.items() if criterion in criteria]
    if not may_filter_by_verdicts(project, user):
        params = [param for param in params if param not in VERDICT_PARAMS]
    return {
        "subject_params": params,
        "choices": subjects.filter_choices(project.kind, project.dataset_id),
        "annotators": [(str(user_id), username) for user_id, username in annotators],
    }


@dataclass(frozen=True)
class BrowsePage:
    items: list
    next_key: str | None  # the key to pass as `after` for the next page, None on the last page
    previous_key: str | None  # the key to pass as `before` for the previous page, None on the first page


def _parse_key(key: str) -> tuple[int, int]:
    value, _, item_id = key.partition("~")
    try:
        return int(value), int(item_id)
    except ValueError:
        raise InvalidFilter(f"{key!r} is not a page key") from None


def _key(item: Item, sort_field: str) -> str:
    return f"{getattr(item, sort_field)}~{item.pk}"


def browse_items(
    project: AnnotationProject,
    item_filter: ItemFilter,
    *,
    sort: str = "id",
    after: str = "",
    before: str = "",
    page_size: int = DEFAULT_PAGE_SIZE,
) -> BrowsePage:
    """One page of the project's items that match the filter, read from a key (keyset pagination): the page after
    `after`, the page before `before`, or the first page. Every page costs one indexed query of page_size + 1 rows
    whatever the project's size, and rows added or removed elsewhere never shift the pages that follow a key."""
    if sort not in SORTS:
        raise InvalidFilter(f"{sort!r} is not an order; choose from {', '.join(SORTS)}")
    if after and before:
        raise InvalidFilter("give a page key in after or in before, not both")
    page_size = max(1, min(int(page_size), MAX_PAGE_SIZE))
    sort_field, descending = SORTS[sort]
    backwards = bool(before)
    reading_down = descending != backwards  # the direction rows are read in
    items = filtered_items(project, item_filter)
    if after or before:
        value, item_id = _parse_key(after or before)
        beyond = "lt" if reading_down else "gt"
        if sort_field == "id":
            items = items.filter(**{f"id__{beyond}": item_id})
        else:
            items = items.filter(
                Q(**{f"{sort_field}__{beyond}": value}) | Q(**{sort_field: value, f"id__{beyond}": item_id})
            )
    order = [f"-{sort_field}", "-id"] if reading_down else [sort_field, "id"]
    if sort_field == "id":
        order = order[1:]
    rows = list(items.select_related("project").order_by(*order)[: page_size + 1])
    more = len(rows) > page_size
    rows = rows[:page_size]
    if backwards:
        if not more:  # back at the start: the first page, full
            return browse_items(project, item_filter, sort=sort, page_size=page_size)
        rows.reverse()
    if not rows:
        return BrowsePage([], None, None)
    has_next = more if not backwards else True
    has_previous = more if backwards else bool(after)
    return BrowsePage(
        rows,
        next_key=_key(rows[-1], sort_field) if has_next else None,
        previous_key=_key(rows[0], sort_field) if has_previous else None,
    )


def browse_rows(items: list) -> list[dict]:
    """What the browser shows of each item: the subject plug-in's summary and the workflow's own fields."""
    found = summaries(items)
    rows = []
    for item in items:
        rules = item.project.judgement
        rows.append(
            {
                "id": item.pk,
                "subject_id": item.subject_id,
                "summary": found[item.pk],
                "state": item.state,
                "resolution": item.resolution,
                "label_count": item.label_count,
                "required_labels": item.required_labels,
                "final_value": item.final_value,
                "final_display": rules.display(item.final_value) if item.final_value is not None else None,
                "excluded": item.excluded,
                "is_gold": item.is_gold,
                "gold_value": item.gold_value,
                "gold_display": rules.display(item.gold_value) if item.gold_value is not None else None,
                "priority": item.priority,
                "answer_type": item.answer_type,
            }
        )
    return rows


def recent_labels(project: AnnotationProject, user, limit: int = 20) -> list[dict]:
    """The user's last `limit` labels in the project, newest first, with what the subject plug-in says of each item
    and whether the label can still change (the item is still open)."""
    chosen = list(
        Label.objects.filter(item__project=project, annotator=user, task__isnull=False)
        .select_related("item__project")
        .order_by("-created_at", "-pk")[:limit]
    )
    found = summaries([label.item for label in chosen])
    judgement = project.judgement
    return [
        {
            "task_id": label.task_id,
            "item_id": label.item_id,
            "value": label.value,
            "display": "unsuitable" if label.unsuitable else judgement.display(label.value),
            "summary": found.get(label.item_id, {}),
            "changeable": label.item.state in workflow.OPEN_STATES or label.item.is_gold,
            "at": label.created_at.isoformat(),
        }
        for label in chosen
    ]
