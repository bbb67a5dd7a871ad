"""Proof scoring: chains take the best not the sum, deductions, clamping, partial credit, validation, 2+1 aggregation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grading.proofs.scoring import (
    OVERALL_JUSTIFICATION,
    Chain,
    Checkpoint,
    Deduction,
    GradeChoices,
    GradingError,
    RubricSpec,
    ZeroCreditItem,
    aggregate_proof_scores,
    best_chain_score,
    rubric_from_dict,
    rubric_from_grading_scheme,
    rubric_to_dict,
    score,
    validate_grade,
    validate_rubric,
)

RUBRIC = RubricSpec(
    max_points=7,
    chains=(
        Chain(
            "induction",
            "Induction",
            (
                Checkpoint("base", "Base case", 1),
                Checkpoint("step", "Inductive step", 4, "Shows P(n) implies P(n+1).", allow_partial=True),
                Checkpoint("conclude", "Conclusion", 2),
            ),
        ),
        Chain(
            "bound",
            "Direct bound",
            (
                Checkpoint("estimate", "Key estimate", 5, allow_partial=True),
                Checkpoint("equality", "Equality case", 2),
            ),
        ),
    ),
    deductions=(
        Deduction("gap", "Logic gap", "penalty", 1),
        Deduction("invalid", "Invalid claim", "penalty", 2),
        Deduction("contradiction", "Contradiction", "cap", 5),
        Deduction("circular", "Circular argument", "cap", 3),
    ),
    zero_credit=(ZeroCreditItem("Conjecture", "Stating the answer without proof."),),
)


def grade(chain, awarded, deductions=(), justifications=None):
    return GradeChoices(
        chain_key=chain, awarded=awarded, deductions=list(deductions), justifications=justifications or {}
    )


def test_the_example_rubric_is_valid():
    assert validate_rubric(RUBRIC) == []


def test_checkpoints_of_a_chain_add_up():
    result = score(RUBRIC, grade("induction", {"base": 1, "step": 4}))
    assert (result.total, result.chain_total) == (5, 5)
    assert [(line.key, line.awarded, line.points) for line in result.breakdown] == [
        ("base", 1, 1),
        ("step", 4, 4),
        ("conclude", 0, 2),
    ]


def test_partial_points_only_where_allowed():
    assert score(RUBRIC, grade("induction", {"step": 2})).total == 2
    with pytest.raises(GradingError, match="does not allow partial credit"):
        score(RUBRIC, grade("induction", {"conclude": 1}))
    with pytest.raises(GradingError, match="from 0 to 4"):
        score(RUBRIC, grade("induction", {"step": 5}))
    with pytest.raises(GradingError, match="from 0 to 1"):
        score(RUBRIC, grade("induction", {"base": -1}))


def test_flat_penalties_subtract():
    result = score(RUBRIC, grade("induction", {"base": 1, "step": 4, "conclude": 2}, ["gap", "invalid"]))
    assert result.chain_total == 7
    assert result.total == 4
    assert [d.key for d in result.applied_deductions] == ["gap", "invalid"]


def test_caps_limit_and_the_smallest_cap_applies():
    full = {"base": 1, "step": 4, "conclude": 2}
    assert score(RUBRIC, grade("induction", full, ["contradiction"])).total == 5
    assert score(RUBRIC, grade("induction", full, ["contradiction", "circular"])).total == 3
    assert score(RUBRIC, grade("induction", {"base": 1, "step": 1}, ["contradiction"])).total == 2  # below the cap
    # penalties come first, then the cap: min(7 - 1, 5) = 5
    assert score(RUBRIC, grade("induction", full, ["gap", "contradiction"])).total == 5


def test_total_is_clamped_at_zero():
    result = score(RUBRIC, grade("induction", {"base": 1}, ["invalid", "gap"]))
    assert result.chain_total == 1
    assert result.total == 0


def test_unknown_choices_are_errors():
    with pytest.raises(GradingError, match="unknown chain"):
        score(RUBRIC, grade("nope", {}))
    with pytest.raises(GradingError, match="not part of chain 'bound'"):
        score(RUBRIC, grade("bound", {"base": 1}))
    with pytest.raises(GradingError, match="unknown deduction"):
        score(RUBRIC, grade("bound", {}, ["nope"]))
    with pytest.raises(GradingError, match="applied twice"):
        score(RUBRIC, grade("bound", {}, ["gap", "gap"]))
    with pytest.raises(GradingError) as caught:
        score(RUBRIC, grade("bound", {"estimate": 9, "equality": 1}))
    assert len(caught.value.errors) == 2  # every problem is reported at once


def test_chains_take_the_best_never_the_sum():
    chain_key, points = best_chain_score(RUBRIC, {"induction": {"base": 1, "step": 2}, "bound": {"estimate": 4}})
    assert (chain_key, points) == ("bound", 4)  # not 3 + 4 = 7
    assert best_chain_score(RUBRIC, {"induction": {"base": 1}, "bound": {"estimate": 1}}) == ("induction", 1)
    with pytest.raises(GradingError):
        best_chain_score(RUBRIC, {})
    with pytest.raises(GradingError, match="partial"):
        best_chain_score(RUBRIC, {"bound": {"equality": 1}})


def test_validate_grade_requires_justifications():
    choices = grade("induction", {"base": 1, "step": 3}, ["gap"])
    errors = validate_grade(RUBRIC, choices)
    assert any("'step'" in error for error in errors)
    assert any("'gap'" in error for error in errors)
    justified = grade(
        "induction", {"base": 1, "step": 3}, ["gap"], {"step": "Misses the n=2 case.", "gap": "Skips a lemma."}
    )
    assert validate_grade(RUBRIC, justified) == []

    zero = grade("bound", {})
    assert validate_grade(RUBRIC, zero) == ["a score of zero needs a written justification"]
    assert (
        validate_grade(RUBRIC, grade("bound", {}, justifications={OVERALL_JUSTIFICATION: "Only a conjecture."})) == []
    )
    assert validate_grade(RUBRIC, grade("bound", {}, justifications={OVERALL_JUSTIFICATION: "   "})) != []
    # invalid points are reported by validate_grade too, without raising
    assert any("partial" in error for error in validate_grade(RUBRIC, grade("bound", {"equality": 1})))


def test_full_marks_need_no_justification():
    assert validate_grade(RUBRIC, grade("bound", {"estimate": 5, "equality": 2})) == []


def rubric_with(**changes):
    values = {"max_points": 7, "chains": RUBRIC.chains, "deductions": RUBRIC.deductions, "zero_credit": ()}
    values.update(changes)
    return RubricSpec(**values)


@pytest.mark.parametrize(
    ("rubric", "expected"),
    [
        (rubric_with(chains=()), "at least one chain"),
        (rubric_with(chains=(Chain("a", "A", (Checkpoint("x", "X", 6),)),)), "must reach exactly 7"),
        (
            rubric_with(chains=(Chain("a", "A", (Checkpoint("x", "X", 5), Checkpoint("y", "Y", 3))),)),
            "more than the maximum",
        ),
        (
            rubric_with(chains=(Chain("a", "A", (Checkpoint("x", "X", 8), Checkpoint("y", "Y", -1))),)),
            "non-negative integer",
        ),
        (
            rubric_with(chains=(Chain("a", "A", (Checkpoint("x", "X", 3.5), Checkpoint("y", "Y", 3.5))),)),
            "non-negative integer",
        ),
        (
            rubric_with(chains=(Chain("a", "A", (Checkpoint("x", "X", 3), Checkpoint("x", "X again", 4))),)),
            "used more than once",
        ),
        (rubric_with(chains=(RUBRIC.chains[0], RUBRIC.chains[0])), "chain key 'induction' is used more than once"),
        (rubric_with(chains=(Chain("a", "A", ()),)), "has no checkpoints"),
        (rubric_with(deductions=(Deduction("base", "Clash", "penalty", 1),)), "used more than once"),
        (rubric_with(deductions=(Deduction("d", "Zero", "penalty", 0),)), "positive number"),
        (rubric_with(deductions=(Deduction("d", "Too high", "cap", 8),)), "within [0, 7]"),
        (rubric_with(deductions=(Deduction("d", "Odd", "bonus", 1),)), "kind must be"),
        (rubric_with(deductions=(Deduction(OVERALL_JUSTIFICATION, "Reserved", "penalty", 1),)), "reserved key"),
        (rubric_with(max_points=0), "max_points"),
    ],
)
def test_rubric_validation_errors(rubric, expected):
    errors = validate_rubric(rubric)
    assert any(expected in error for error in errors), errors


@st.composite
def graded_choices(draw):
    chain = draw(st.sampled_from(RUBRIC.chains))
    awarded = {}
    for checkpoint in chain.checkpoints:
        if checkpoint.allow_partial:
            awarded[checkpoint.key] = draw(st.integers(0, checkpoint.points))
        else:
            awarded[checkpoint.key] = draw(st.sampled_from([0, checkpoint.points]))
    deductions = draw(st.lists(st.sampled_from([d.key for d in RUBRIC.deductions]), unique=True))
    return chain, awarded, deductions


@settings(max_examples=300, deadline=None)
@given(graded_choices())
def test_score_properties(case):
    chain, awarded, deductions = case
    result = score(RUBRIC, grade(chain.key, awarded, deductions))
    assert 0 <= result.total <= RUBRIC.max_points
    assert result.total <= result.chain_total
    caps = [d.amount for d in RUBRIC.deductions if d.key in deductions and d.kind == "cap"]
    if caps:
        assert result.total <= min(caps)
    # reaching one more checkpoint in full never lowers the score
    for checkpoint in chain.checkpoints:
        more = {**awarded, checkpoint.key: checkpoint.points}
        assert score(RUBRIC, grade(chain.key, more, deductions)).total >= result.total


def test_aggregation_two_agreeing_scores_take_the_mean():
    assert aggregate_proof_scores([5, 6]) == (5.5, "mean_of_two")
    assert aggregate_proof_scores([7, 7]).final == 7.0
    assert aggregate_proof_scores([3, 4.5], threshold=2).final == 3.75


def test_aggregation_disagreement_needs_a_third_grader():
    result = aggregate_proof_scores([2, 6])
    assert result.needs_more and result.final is None and result.method == "needs_more"
    assert aggregate_proof_scores([5]).needs_more
    assert aggregate_proof_scores([]).needs_more


def test_aggregation_three_scores_take_the_median():
    assert aggregate_proof_scores([2, 6, 5]) == (5.0, "median")
    assert aggregate_proof_scores([0, 7, 1]).final == 1.0


def test_aggregation_rejects_bad_input():
    with pytest.raises(ValueError):
        aggregate_proof_scores([1, -2])
    with pytest.raises(ValueError):
        aggregate_proof_scores([1, float("nan")])
    with pytest.raises(ValueError):
        aggregate_proof_scores([1, 2], threshold=-1)


def test_rubric_round_trips_through_a_dict():
    assert rubric_from_dict(rubric_to_dict(RUBRIC)) == RUBRIC
    with pytest.raises(ValueError, match="malformed rubric"):
        rubric_from_dict({"chains": [{"key": "a", "checkpoints": [{"title": "no key or points"}]}]})


def test_rubric_from_a_matharena_grading_scheme():
    rubric = rubric_from_grading_scheme(
        [
            {"title": "Reduction", "points": 2, "desc": "Reduces to the case n odd."},
            {"title": "Construction", "points": 5, "desc": "Builds the example."},
        ]
    )
    assert validate_rubric(rubric) == []
    assert [c.key for c in rubric.chains[0].checkpoints] == ["c1", "c2"]
    assert score(rubric, grade("main", {"c1": 2, "c2": 3})).total == 5
    broken = rubric_from_grading_scheme([{"title": "Only part", "points": 3, "desc": ""}])
    assert any("must reach exactly 7" in error for error in validate_rubric(broken))
