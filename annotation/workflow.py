"""The item state machine of the annotation protocol. Pure module, no Django imports.

pending -> in_progress -> resolved (agreement)
                       -> needs_tiebreak -> resolved (majority)
                                         -> needs_adjudication -> resolved (adjudication)
                       -> resolved (model: a project that aggregates with its annotator model)
resolved -> resolved (override, admin only)
resolved -> in_progress (re-open: one more label is wanted, researchers only)
any state but excluded -> excluded (a researcher takes the item out of the workflow; it is never exported)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.labels import UNSUITABLE, LabelRules, Vote

PENDING = "pending"
IN_PROGRESS = "in_progress"
NEEDS_TIEBREAK = "needs_tiebreak"
NEEDS_ADJUDICATION = "needs_adjudication"
RESOLVED = "resolved"
EXCLUDED = "excluded"
STATES = (PENDING, IN_PROGRESS, NEEDS_TIEBREAK, NEEDS_ADJUDICATION, RESOLVED, EXCLUDED)
OPEN_STATES = (PENDING, IN_PROGRESS, NEEDS_TIEBREAK)  # states in which annotators can still be given the item


def label_change_refusal(state: str, *, is_gold: bool) -> str | None:
    """Why an annotator can no longer change the label they gave an item in this state, or None when they can."""
    if state == RESOLVED:
        return "this item is already resolved; your label can no longer change"
    if not is_gold and state not in OPEN_STATES:
        return "this item is waiting for adjudication; your label can no longer change"
    return None


BY_AGREEMENT = "agreement"
BY_MAJORITY = "majority"
BY_ADJUDICATION = "adjudication"
BY_OVERRIDE = "override"
BY_MODEL = "model"  # the annotator model's most probable value (annotation.label_model), with its confidence
RESOLUTIONS = (BY_AGREEMENT, BY_MAJORITY, BY_ADJUDICATION, BY_OVERRIDE, BY_MODEL)

# Every legal (from, to) pair, with the event that causes it.
TRANSITIONS: dict[tuple[str, str], str] = {
    (PENDING, IN_PROGRESS): "claim",
    (IN_PROGRESS, IN_PROGRESS): "label",
    (PENDING, RESOLVED): "label",  # labels_per_item = 1
    (IN_PROGRESS, RESOLVED): "label",
    (IN_PROGRESS, NEEDS_TIEBREAK): "label",
    (IN_PROGRESS, NEEDS_ADJUDICATION): "label",  # tiebreak_annotators = 0
    (NEEDS_TIEBREAK, NEEDS_TIEBREAK): "label",
    (NEEDS_TIEBREAK, RESOLVED): "label",
    (NEEDS_TIEBREAK, NEEDS_ADJUDICATION): "label",
    (NEEDS_ADJUDICATION, RESOLVED): "adjudicate",
    (RESOLVED, RESOLVED): "override",
    (RESOLVED, IN_PROGRESS): "reopen",
    (PENDING, EXCLUDED): "exclude",
    (IN_PROGRESS, EXCLUDED): "exclude",
    (NEEDS_TIEBREAK, EXCLUDED): "exclude",
    (NEEDS_ADJUDICATION, EXCLUDED): "exclude",
    (RESOLVED, EXCLUDED): "exclude",
}


class IllegalTransition(Exception):
    pass


@dataclass(frozen=True)
class Policy:
    labels_per_item: int = 2
    tiebreak_annotators: int = 1
    threshold: float = 0.0


@dataclass(frozen=True)
class Outcome:
    state: str
    required_labels: int
    resolution: str = ""
    final_value: Any = None
    excluded: bool = False  # resolved as unsuitable


def check_transition(current: str, target: str, event: str) -> None:
    allowed = TRANSITIONS.get((current, target))
    if allowed != event:
        raise IllegalTransition(f"cannot {event} an item from {current} to {target}")


def _resolved(value, resolution: str, required: int) -> Outcome:
    if value == UNSUITABLE:
        return Outcome(RESOLVED, required, resolution, None, excluded=True)
    return Outcome(RESOLVED, required, resolution, value, excluded=False)


def evaluate(kind: LabelRules, policy: Policy, votes: list[Vote]) -> Outcome:
    """Where an item stands given its human labels (gold items never come here)."""
    first_round = policy.labels_per_item
    with_tiebreak = first_round + policy.tiebreak_annotators
    tokens = [vote.token for vote in votes]
    if not tokens:
        return Outcome(PENDING, first_round)
    if len(tokens) < first_round:
        return Outcome(IN_PROGRESS, first_round)
    if len(tokens) > with_tiebreak:
        return _beyond_protocol(kind, policy, tokens)
    if len(tokens) == first_round or policy.tiebreak_annotators == 0:
        if kind.agree(tokens[:first_round], policy.threshold):
            return _resolved(kind.combine_agreeing(tokens[:first_round]), BY_AGREEMENT, first_round)
        if policy.tiebreak_annotators == 0:
            return Outcome(NEEDS_ADJUDICATION, first_round)
        return Outcome(NEEDS_TIEBREAK, with_tiebreak)
    if len(tokens) < with_tiebreak:
        return Outcome(NEEDS_TIEBREAK, with_tiebreak)
    found, value = kind.majority(tokens, policy.threshold)
    if found:
        return _resolved(value, BY_MAJORITY, with_tiebreak)
    return Outcome(NEEDS_ADJUDICATION, with_tiebreak)


def _beyond_protocol(kind: LabelRules, policy: Policy, tokens: list) -> Outcome:
    """More labels than the protocol asks for: the item was re-opened for another opinion after it resolved. Every
    label counts: all agreeing resolve by agreement, else a strict majority decides, else an adjudicator."""
    required = len(tokens)
    if kind.agree(tokens, policy.threshold):
        return _resolved(kind.combine_agreeing(tokens), BY_AGREEMENT, required)
    found, value = kind.majority(tokens, policy.threshold)
    if found:
        return _resolved(value, BY_MAJORITY, required)
    return Outcome(NEEDS_ADJUDICATION, required)


def reopen(current_state: str, label_count: int) -> Outcome:
    """A resolved item asks for one more label: it goes back to the annotators, its final value is gone until the
    labels settle again (evaluate counts every label, the extra one included)."""
    check_transition(current_state, IN_PROGRESS, "reopen")
    return Outcome(IN_PROGRESS, label_count + 1)


def exclude(current_state: str, required_labels: int) -> Outcome:
    """Take an item out of the workflow: nobody is given it again and no export includes it."""
    check_transition(current_state, EXCLUDED, "exclude")
    return Outcome(EXCLUDED, required_labels, excluded=True)


def decide(current_state: str, value, *, event: str, required_labels: int) -> Outcome:
    """A human decision (adjudication or admin override) that sets the final value."""
    check_transition(current_state, RESOLVED, event)
    resolution = BY_ADJUDICATION if event == "adjudicate" else BY_OVERRIDE
    return _resolved(value, resolution, required_labels)
