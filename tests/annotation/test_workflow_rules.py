"""The pure state machine and judgement kinds: every transition, legal and illegal, and every kind's rules."""

import math

import pytest

from annotation import workflow
from annotation.workflow import (
    EXCLUDED,
    IN_PROGRESS,
    NEEDS_ADJUDICATION,
    NEEDS_TIEBREAK,
    PENDING,
    RESOLVED,
    IllegalTransition,
    Policy,
)
from core import labels, subjects
from core.labels import UNSUITABLE, Vote

CORRECTNESS = subjects.get("correctness").rules
ANSWER_TYPE = subjects.get("answer_type").rules
PROOF_GRADE = subjects.get("proof_grade").rules


def votes(*tokens):
    return [Vote(n, None if t == UNSUITABLE else t, t == UNSUITABLE) for n, t in enumerate(tokens, start=1)]


# The protocol's moves, written out here independently of workflow.TRANSITIONS: a change to the table must be made in
# both places on purpose.
EXPECTED_TRANSITIONS = {
    (PENDING, IN_PROGRESS): "claim",
    (IN_PROGRESS, IN_PROGRESS): "label",
    (PENDING, RESOLVED): "label",
    (IN_PROGRESS, RESOLVED): "label",
    (IN_PROGRESS, NEEDS_TIEBREAK): "label",
    (IN_PROGRESS, NEEDS_ADJUDICATION): "label",
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


@pytest.mark.parametrize(
    ("current", "target", "event"),
    sorted((current, target, event) for (current, target), event in EXPECTED_TRANSITIONS.items()),
)
def test_every_listed_transition_is_legal(current, target, event):
    workflow.check_transition(current, target, event)


def test_the_transition_table_is_the_protocol():
    assert workflow.TRANSITIONS == EXPECTED_TRANSITIONS


def _label_moves(policy: Policy, rules, values) -> set[tuple[str, str]]:
    """Every (state before, state after) a label can cause, by evaluating all label sequences up to the cap. An item
    is claimed before its first label, which moves it from pending to in progress."""
    moves = set()
    cap = policy.labels_per_item + policy.tiebreak_annotators
    sequences = [[]]
    for _ in range(cap):
        longer = []
        for sequence in sequences:
            before = workflow.evaluate(rules, policy, votes(*sequence)).state
            if before not in workflow.OPEN_STATES:
                continue
            for value in values:
                after = workflow.evaluate(rules, policy, votes(*sequence, value)).state
                moves.add((IN_PROGRESS if before == PENDING else before, after))
                longer.append([*sequence, value])
        sequences = longer
    return moves


@pytest.mark.parametrize("policy", [Policy(2, 1), Policy(1, 1), Policy(2, 0), Policy(3, 2), Policy(2, 1, 1.0)])
def test_every_state_change_a_label_causes_is_a_listed_label_transition(policy):
    rules, values = (
        (PROOF_GRADE, (0.0, 1.0, 5.0, UNSUITABLE)) if policy.threshold else (CORRECTNESS, (True, False, UNSUITABLE))
    )
    moves = _label_moves(policy, rules, values)
    for before, after in moves:
        workflow.check_transition(before, after, "label")
    listed_label_moves = {pair for pair, event in EXPECTED_TRANSITIONS.items() if event == "label"}
    assert moves <= listed_label_moves


ALL_EVENTS = ("claim", "label", "adjudicate", "override", "reopen", "exclude")


@pytest.mark.parametrize(
    ("current", "target", "event"),
    [
        (current, target, event)
        for current in workflow.STATES
        for target in workflow.STATES
        for event in ALL_EVENTS
        if workflow.TRANSITIONS.get((current, target)) != event
    ],
)
def test_every_other_transition_is_illegal(current, target, event):
    with pytest.raises(IllegalTransition, match=f"cannot {event} an item from {current} to {target}"):
        workflow.check_transition(current, target, event)


def test_resolved_items_move_only_by_override_reopen_or_exclusion():
    leaving = {(a, b): e for (a, b), e in workflow.TRANSITIONS.items() if a == RESOLVED}
    assert leaving == {
        (RESOLVED, RESOLVED): "override",
        (RESOLVED, IN_PROGRESS): "reopen",
        (RESOLVED, EXCLUDED): "exclude",
    }


def test_excluded_is_final_and_every_other_state_can_be_excluded():
    assert not [pair for pair in workflow.TRANSITIONS if pair[0] == EXCLUDED]
    for state in workflow.STATES:
        if state != EXCLUDED:
            workflow.check_transition(state, EXCLUDED, "exclude")
    assert EXCLUDED not in workflow.OPEN_STATES


def test_reopen_asks_for_one_more_label_and_only_from_resolved():
    outcome = workflow.reopen(RESOLVED, label_count=2)
    assert (outcome.state, outcome.required_labels, outcome.final_value, outcome.resolution) == (
        IN_PROGRESS,
        3,
        None,
        "",
    )
    for state in (PENDING, IN_PROGRESS, NEEDS_TIEBREAK, NEEDS_ADJUDICATION, EXCLUDED):
        with pytest.raises(IllegalTransition):
            workflow.reopen(state, label_count=2)


def test_exclude_leaves_every_export():
    outcome = workflow.exclude(IN_PROGRESS, required_labels=2)
    assert (outcome.state, outcome.excluded, outcome.required_labels) == (EXCLUDED, True, 2)
    with pytest.raises(IllegalTransition):
        workflow.exclude(EXCLUDED, required_labels=2)


def test_decide_adjudicates_only_items_that_need_it():
    outcome = workflow.decide(NEEDS_ADJUDICATION, "A2", event="adjudicate", required_labels=3)
    assert (outcome.state, outcome.resolution, outcome.final_value) == (RESOLVED, workflow.BY_ADJUDICATION, "A2")
    for state in (PENDING, IN_PROGRESS, NEEDS_TIEBREAK, RESOLVED):
        with pytest.raises(IllegalTransition):
            workflow.decide(state, "A2", event="adjudicate", required_labels=3)


def test_decide_overrides_only_resolved_items():
    outcome = workflow.decide(RESOLVED, UNSUITABLE, event="override", required_labels=2)
    assert (outcome.state, outcome.resolution, outcome.excluded, outcome.final_value) == (
        RESOLVED,
        workflow.BY_OVERRIDE,
        True,
        None,
    )
    for state in (PENDING, IN_PROGRESS, NEEDS_TIEBREAK, NEEDS_ADJUDICATION):
        with pytest.raises(IllegalTransition):
            workflow.decide(state, True, event="override", required_labels=2)


class TestEvaluateCorrectness:
    policy = Policy()  # 2 labels, 1 tie-break

    def test_no_labels_is_pending(self):
        assert workflow.evaluate(CORRECTNESS, self.policy, []).state == PENDING

    def test_one_label_is_in_progress(self):
        outcome = workflow.evaluate(CORRECTNESS, self.policy, votes(True))
        assert (outcome.state, outcome.required_labels) == (IN_PROGRESS, 2)

    def test_two_agreeing_labels_resolve_by_agreement(self):
        outcome = workflow.evaluate(CORRECTNESS, self.policy, votes(False, False))
        assert (outcome.state, outcome.resolution, outcome.final_value, outcome.excluded) == (
            RESOLVED,
            workflow.BY_AGREEMENT,
            False,
            False,
        )

    def test_disagreement_needs_a_tiebreak_and_a_third_slot(self):
        outcome = workflow.evaluate(CORRECTNESS, self.policy, votes(True, False))
        assert (outcome.state, outcome.required_labels) == (NEEDS_TIEBREAK, 3)

    def test_tiebreak_resolves_by_majority(self):
        outcome = workflow.evaluate(CORRECTNESS, self.policy, votes(True, False, True))
        assert (outcome.state, outcome.resolution, outcome.final_value) == (RESOLVED, workflow.BY_MAJORITY, True)

    def test_no_majority_needs_adjudication(self):
        outcome = workflow.evaluate(CORRECTNESS, self.policy, votes(True, False, UNSUITABLE))
        assert outcome.state == NEEDS_ADJUDICATION

    def test_unsuitable_by_agreement_excludes(self):
        outcome = workflow.evaluate(CORRECTNESS, self.policy, votes(UNSUITABLE, UNSUITABLE))
        assert (outcome.state, outcome.excluded, outcome.final_value) == (RESOLVED, True, None)

    def test_unsuitable_by_majority_excludes(self):
        outcome = workflow.evaluate(CORRECTNESS, self.policy, votes(UNSUITABLE, True, UNSUITABLE))
        assert (outcome.state, outcome.resolution, outcome.excluded) == (RESOLVED, workflow.BY_MAJORITY, True)

    def test_without_tiebreak_annotators_disagreement_goes_to_adjudication(self):
        outcome = workflow.evaluate(CORRECTNESS, Policy(2, 0), votes(True, False))
        assert (outcome.state, outcome.required_labels) == (NEEDS_ADJUDICATION, 2)
        workflow.check_transition(IN_PROGRESS, outcome.state, "label")

    def test_one_label_per_item_resolves_at_once(self):
        outcome = workflow.evaluate(CORRECTNESS, Policy(1, 1), votes(True))
        assert (outcome.state, outcome.resolution, outcome.final_value) == (RESOLVED, workflow.BY_AGREEMENT, True)

    def test_two_tiebreak_annotators(self):
        policy = Policy(2, 2)
        assert workflow.evaluate(CORRECTNESS, policy, votes(True, False, True)).state == NEEDS_TIEBREAK
        outcome = workflow.evaluate(CORRECTNESS, policy, votes(True, False, True, True))
        assert (outcome.state, outcome.final_value, outcome.required_labels) == (RESOLVED, True, 4)
        assert workflow.evaluate(CORRECTNESS, policy, votes(True, False, True, False)).state == NEEDS_ADJUDICATION


class TestEvaluateAfterReopen:
    """A re-opened item has more labels than the protocol asks for; every label counts."""

    def test_the_extra_label_agreeing_keeps_the_agreement(self):
        outcome = workflow.evaluate(CORRECTNESS, Policy(2, 0), votes(True, True, True))
        assert (outcome.state, outcome.resolution, outcome.final_value, outcome.required_labels) == (
            RESOLVED,
            workflow.BY_AGREEMENT,
            True,
            3,
        )

    def test_the_extra_label_disagreeing_is_outvoted(self):
        outcome = workflow.evaluate(CORRECTNESS, Policy(2, 0), votes(True, True, False))
        assert (outcome.state, outcome.resolution, outcome.final_value, outcome.required_labels) == (
            RESOLVED,
            workflow.BY_MAJORITY,
            True,
            3,
        )

    def test_no_majority_after_a_reopen_goes_to_adjudication(self):
        outcome = workflow.evaluate(CORRECTNESS, Policy(2, 1), votes(True, False, True, False))
        assert (outcome.state, outcome.required_labels) == (NEEDS_ADJUDICATION, 4)
        workflow.check_transition(IN_PROGRESS, outcome.state, "label")

    def test_scores_after_a_reopen(self):
        outcome = workflow.evaluate(PROOF_GRADE, Policy(2, 0, 1.0), votes(5.0, 6.0, 5.5))
        assert (outcome.state, outcome.final_value) == (RESOLVED, 5.5)

    def test_within_the_protocol_nothing_changes(self):
        # a resolved-by-agreement item re-opened under a tie-break policy: its third label is the tie-break slot
        outcome = workflow.evaluate(CORRECTNESS, Policy(2, 1), votes(True, True, False))
        assert (outcome.state, outcome.resolution, outcome.required_labels) == (RESOLVED, workflow.BY_MAJORITY, 3)


class TestEvaluateAnswerType:
    def test_majority_of_three(self):
        outcome = workflow.evaluate(ANSWER_TYPE, Policy(), votes("A1", "B3", "B3"))
        assert (outcome.state, outcome.final_value) == (RESOLVED, "B3")

    def test_three_different_types_need_adjudication(self):
        assert workflow.evaluate(ANSWER_TYPE, Policy(), votes("A1", "B3", "C1")).state == NEEDS_ADJUDICATION


class TestEvaluateProofGrade:
    def test_scores_within_threshold_agree_and_average(self):
        outcome = workflow.evaluate(PROOF_GRADE, Policy(threshold=1.0), votes(5.0, 6.0))
        assert (outcome.state, outcome.final_value) == (RESOLVED, 5.5)

    def test_scores_too_far_apart_need_a_tiebreak(self):
        assert workflow.evaluate(PROOF_GRADE, Policy(threshold=1.0), votes(1.0, 6.0)).state == NEEDS_TIEBREAK

    def test_tiebreak_close_to_one_score_resolves_with_the_median(self):
        outcome = workflow.evaluate(PROOF_GRADE, Policy(threshold=1.0), votes(1.0, 6.0, 5.5))
        assert (outcome.state, outcome.resolution, outcome.final_value) == (RESOLVED, workflow.BY_MAJORITY, 5.5)

    def test_three_scores_all_too_far_apart_need_adjudication(self):
        assert workflow.evaluate(PROOF_GRADE, Policy(threshold=1.0), votes(0.0, 3.0, 7.0)).state == NEEDS_ADJUDICATION

    def test_unsuitable_pair_excludes(self):
        outcome = workflow.evaluate(PROOF_GRADE, Policy(threshold=1.0), votes(UNSUITABLE, UNSUITABLE))
        assert outcome.excluded

    def test_unsuitable_and_score_disagree(self):
        assert workflow.evaluate(PROOF_GRADE, Policy(threshold=7.0), votes(UNSUITABLE, 3.0)).state == NEEDS_TIEBREAK


class TestKindValues:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            (True, True),
            (False, False),
            ("correct", True),
            ("Incorrect", False),
            (" yes ", True),
            (0, False),
        ],
    )
    def test_correctness_aliases(self, raw, expected):
        assert CORRECTNESS.clean(raw) is expected

    @pytest.mark.parametrize("raw", [None, "maybe", 2, [True], {"value": True}])
    def test_correctness_refuses_anything_else(self, raw):
        with pytest.raises(labels.InvalidValue, match="true .correct. or false"):
            CORRECTNESS.clean(raw)

    def test_answer_type_codes(self):
        assert ANSWER_TYPE.clean("B3") == "B3"
        for raw in ("Z9", 3, None, ""):
            with pytest.raises(labels.InvalidValue):
                ANSWER_TYPE.clean(raw)

    def test_proof_grade_scores(self):
        assert PROOF_GRADE.clean(7) == 7.0
        assert PROOF_GRADE.clean({"score": 3.5}) == 3.5
        for raw in (True, "7", None, math.nan, math.inf):
            with pytest.raises(labels.InvalidValue, match="numeric score"):
                PROOF_GRADE.clean(raw)

    def test_unknown_kind(self):
        with pytest.raises(labels.InvalidValue, match="unknown kind"):
            subjects.get("sentiment")
