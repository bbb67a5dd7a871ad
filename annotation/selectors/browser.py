"""The item browser: filters, keyset pages and the rows it shows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef, Q

from core import labels, roles, subjects, taxonomy

from .. import workflow
from ..models import (
    AnnotationProject,
    Item,
    ItemEvent,
    Label,
    ProjectMember,
)
from .items import InvalidFilter, page_key, parse_page_key, summaries

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
        value, item_id = parse_page_key(after or before)
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
        next_key=page_key(rows[-1], sort_field) if has_next else None,
        previous_key=page_key(rows[0], sort_field) if has_previous else None,
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
            "display": "Unsuitable" if label.unsuitable else judgement.display(label.value),
            "summary": found.get(label.item_id, {}),
            "changeable": label.item.state in workflow.OPEN_STATES or label.item.is_gold,
            "at": label.created_at.isoformat(),
        }
        for label in chosen
    ]
