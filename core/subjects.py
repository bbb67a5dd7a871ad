"""Subject kinds: what the items of an annotation project are about, plugged into the workflow by the app that owns
the subject. Pure registry, no Django imports (the registered callables may use Django).

The annotation workflow is generic: an item only holds `subject_id`, and the project's `kind` names the entry here
that knows what that id points at. Each entry says

- what a valid label is and how labels compare (`rules`),
- which subjects a dataset offers to a new project (`subject_ids`) and their answer types (`answer_types`, kept
  on the items for per-type figures),
- what an annotator is shown (`task_view`) and what a reviewer sees (`review_view`),
- how an item is summed up in lists (`summaries`).

The benchmark data registers `correctness` (a completion) and `answer_type` (a question); proof grading registers
`proof_grade` (a model proof). A new kind (e.g. a step-level label on a proof) is one more `register` call in the app
that owns its subject; the workflow does not change.

Verdicts of automatic verifiers are not the subject's own data: the app that keeps them registers a verdict source
(`register_verdict_source`), which views ask through `verdicts_for` when the project lets the viewer see them.
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


class UnknownSubjectKind(InvalidValue, KeyError):
    def __str__(self):
        return self.args[0]


_KINDS: dict[str, SubjectKind] = {}
_VERDICT_SOURCES: list[Callable[[str, int], list[dict]]] = []


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
