"""Subject kinds: what the items of an annotation project are about, plugged into the workflow by the app that owns
the subject. Pure registry, no Django imports (the registered callables may use Django).

The annotation workflow is generic: an item only holds `subject_id`, and the project's `kind` names the entry here
that knows what that id points at. Each entry says

- what a valid label is and how labels compare (`rules`),
- which subjects a dataset offers to a new project (`subject_ids`) and their answer types (`answer_types`, kept
  on the items for per-type figures),
- what an annotator is shown (`task_view`) and what a reviewer sees (`review_view`),
- how an item is summed up in lists (`summaries`),
- optionally, how its items are found by what their subjects say (`filter_subject_ids` answering the criteria named
  in `filter_criteria`, e.g. a model name or a text search, with `filter_choices` for forms).

The benchmark data registers `correctness` (a completion) and `answer_type` (a question); proof grading registers
`proof_grade` (a model proof). A new kind (e.g. a step-level label on a proof) is one more `register` call in the app
that owns its subject; the workflow does not change.

Verdicts of automatic verifiers are not the subject's own data: the app that keeps them registers a verdict source
(`register_verdict_source`), which views ask through `verdicts_for` when the project lets the viewer see them. Such an
app may also answer criteria of its own about the subjects (`register_subject_filter`, e.g. "the verifier X said
incorrect"); the workflow asks every hook through `subject_id_filters` and never learns which app answered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .labels import InvalidValue, LabelRules


@dataclass(frozen=True)
class ViewContext:
    """What a subject's view may show, decided by the workflow for the person looking."""

    kind: str
    project: Mapping[str, Any] = field(default_factory=dict)  # id, name, kind
    show_model_names: bool = False
    show_verdicts: bool = False
    my_label: Mapping[str, Any] | None = None  # task views: the viewer's own label, if any
    labels: Sequence[Mapping[str, Any]] = ()  # review views: every label, with its annotator
    threshold: float = 0.0


@dataclass(frozen=True)
class SubjectKind:
    name: str
    title: str
    rules: LabelRules
    # (dataset_id, chosen subject ids or None) -> the subject ids a new project of this kind gets
    subject_ids: Callable[[int, Sequence[int] | None], list[int]] | None
    # subject ids -> {subject_id: answer type code or ""}
    answer_types: Callable[[Sequence[int]], dict[int, str]]
    # (subject_id, context) -> the subject's part of an annotator's task payload
    task_view: Callable[[int, ViewContext], dict]
    # (subject_id, context) -> the subject's part of a reviewer's item payload; may replace "labels"
    review_view: Callable[[int, ViewContext], dict]
    # subject ids -> {subject_id: {"name": short name, "title": what it is about, "detail": ...}} for lists
    summaries: Callable[[Sequence[int]], dict[int, dict]]
    # subject_id -> the subject itself (a model instance), for code that works with one item at a time
    load: Callable[[int], Any]
    # When set, a bare value is not a label of this kind: the message says where labels go ({task_id} filled in).
    submit_elsewhere: str | None = None
    # Whether the dataset's own project form offers this kind (proof projects are made from a competition).
    creatable_from_dataset: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict)
    # Optional. (dataset_id, **criteria) -> the subjects that match every criterion given: a query of subject rows
    # (e.g. `Completion.objects.filter(...)`, whose primary keys are the subject ids), a list of such queries when a
    # subject may match any of them (one indexed query per table beats one OR across a join), or None when nothing
    # narrows. Called only with criteria named in `filter_criteria`.
    filter_subject_ids: Callable[..., Any] | None = None
    filter_criteria: tuple[str, ...] = ()
    # Optional. dataset_id -> {criterion: [(value, label), ...]}: the values a form offers; others are free text.
    filter_choices: Callable[[int], Mapping[str, Sequence[tuple[str, str]]]] | None = None


@dataclass(frozen=True)
class SubjectFilter:
    """Criteria about subjects answered by an app that keeps data on them without owning them (verdicts, say)."""

    name: str
    criteria: tuple[str, ...]
    # SubjectKind -> whether these criteria make sense for that kind's subjects
    applies_to: Callable[[SubjectKind], bool]
    # (kind_name, dataset_id, **criteria) -> matching subjects, as SubjectKind.filter_subject_ids returns them
    filter_subject_ids: Callable[..., Any]
    # (kind_name, dataset_id) -> {criterion: [(value, label), ...]}
    choices: Callable[[str, int], Mapping[str, Sequence[tuple[str, str]]]] = lambda kind_name, dataset_id: {}


class UnknownSubjectKind(InvalidValue, KeyError):
    def __str__(self):
        return self.args[0]


class UnsupportedCriterion(InvalidValue):
    """A filter on subjects that nothing registered can answer for this kind."""


_KINDS: dict[str, SubjectKind] = {}
_VERDICT_SOURCES: list[Callable[[str, int], list[dict]]] = []
_SUBJECT_FILTERS: dict[str, SubjectFilter] = {}


def register(kind: SubjectKind) -> SubjectKind:
    existing = _KINDS.get(kind.name)
    if existing is not None and existing != kind:
        raise ValueError(f"a subject kind named {kind.name!r} is already registered")
    _KINDS[kind.name] = kind
    return kind


def get(name: str) -> SubjectKind:
    try:
        return _KINDS[name]
    except KeyError:
        raise UnknownSubjectKind(f"unknown kind {name!r}; known project kinds: {', '.join(names())}") from None


def names() -> list[str]:
    return list(_KINDS)


def all_kinds() -> list[SubjectKind]:
    return list(_KINDS.values())


def register_verdict_source(source: Callable[[str, int], list[dict]]) -> None:
    """`source(kind_name, subject_id)` returns the automatic verdicts on that subject ([] when it has none)."""
    if source not in _VERDICT_SOURCES:
        _VERDICT_SOURCES.append(source)


def verdicts_for(kind_name: str, subject_id: int) -> list[dict]:
    verdicts: list[dict] = []
    for source in _VERDICT_SOURCES:
        verdicts.extend(source(kind_name, subject_id))
    return verdicts


_VOTE_SOURCES: list[Callable[[str, list[int]], dict[int, list[tuple[str, str]]]]] = []


def register_vote_source(source: Callable[[str, list[int]], dict[int, list[tuple[str, str]]]]) -> None:
    """`source(kind_name, subject_ids)` returns `{subject_id: [(verifier name, verdict status), ...]}`: the automatic
    verdicts on many subjects at once, reduced to what an annotator model weighs as weak votes."""
    if source not in _VOTE_SOURCES:
        _VOTE_SOURCES.append(source)


def votes_for(kind_name: str, subject_ids: list[int]) -> dict[int, list[tuple[str, str]]]:
    votes: dict[int, list[tuple[str, str]]] = {}
    for source in _VOTE_SOURCES:
        for subject_id, found in source(kind_name, subject_ids).items():
            votes.setdefault(subject_id, []).extend(found)
    return votes


def register_subject_filter(subject_filter: SubjectFilter) -> SubjectFilter:
    existing = _SUBJECT_FILTERS.get(subject_filter.name)
    if existing is not None and existing != subject_filter:
        raise ValueError(f"a subject filter named {subject_filter.name!r} is already registered")
    _SUBJECT_FILTERS[subject_filter.name] = subject_filter
    return subject_filter


def _filters_for(kind: SubjectKind) -> list[SubjectFilter]:
    return [subject_filter for subject_filter in _SUBJECT_FILTERS.values() if subject_filter.applies_to(kind)]


def filter_criteria(kind_name: str) -> list[str]:
    """Every criterion the items of this kind can be filtered by, through their subjects."""
    kind = get(kind_name)
    found = list(kind.filter_criteria) if kind.filter_subject_ids is not None else []
    for subject_filter in _filters_for(kind):
        found.extend(criterion for criterion in subject_filter.criteria if criterion not in found)
    return found


def filter_choices(kind_name: str, dataset_id: int) -> dict[str, list[tuple[str, str]]]:
    """{criterion: [(value, label), ...]} for the criteria whose values come from a list."""
    kind = get(kind_name)
    choices: dict[str, list[tuple[str, str]]] = {}
    if kind.filter_subject_ids is not None and kind.filter_choices is not None:
        choices.update({name: list(values) for name, values in kind.filter_choices(dataset_id).items()})
    for subject_filter in _filters_for(kind):
        choices.update({name: list(values) for name, values in subject_filter.choices(kind_name, dataset_id).items()})
    return choices


def subject_id_filters(kind_name: str, dataset_id: int, criteria: Mapping[str, Any]) -> list[Any]:
    """What an item's subject must be among, one entry per hook that answers some of the criteria (empty values are
    left out): a query of subject rows, or a list of them (any). Raises UnsupportedCriterion for a criterion
    nothing answers for this kind."""
    kind = get(kind_name)
    given = {name: value for name, value in criteria.items() if value not in (None, "")}
    queries: list[Any] = []
    answered: set[str] = set()

    def ask(names_answered: tuple[str, ...], hook: Callable[..., Any], *leading: Any) -> None:
        mine = {name: value for name, value in given.items() if name in names_answered}
        if mine:
            answered.update(mine)
            query = hook(*leading, dataset_id, **mine)
            if query is not None:
                queries.append(query)

    if kind.filter_subject_ids is not None:
        ask(kind.filter_criteria, kind.filter_subject_ids)
    for subject_filter in _filters_for(kind):
        ask(subject_filter.criteria, subject_filter.filter_subject_ids, kind_name)
    unanswered = sorted(set(given) - answered)
    if unanswered:
        raise UnsupportedCriterion(f"{kind.title} items cannot be filtered by {', '.join(unanswered)}")
    return queries
