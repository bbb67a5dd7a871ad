"""The pure selection recipes: VerifyBench 2+2, VerifyBench-Hard disagreements with stratified sampling, filters."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grading.selection.recipes import (
    Candidate,
    SelectionError,
    SelectionFilters,
    is_contested,
    proportional_allocation,
    verifybench_hard_selection,
    verifybench_selection,
    vote_split,
)

C, I, U = "correct", "incorrect", "inconclusive"
JUDGES = ["j1", "j2", "j3", "j4", "j5"]


def candidate(cid, qid, status=None, **fields):
    votes = fields.pop("votes", {"judge": status} if status else {})
    return Candidate(completion_id=cid, question_id=qid, votes=votes, **fields)


def question_pool(qid, correct, incorrect, start, **fields):
    made = [candidate(start + n, qid, C, **fields) for n in range(correct)]
    made += [candidate(start + correct + n, qid, I, **fields) for n in range(incorrect)]
    return made


def test_verifybench_picks_two_correct_and_two_incorrect_per_question():
    pool = question_pool(1, 5, 6, 100) + question_pool(2, 2, 3, 200) + [candidate(300, 2, U)]
    result = verifybench_selection(pool, verifier="judge", seed=7)
    by_question = {}
    statuses = {c.completion_id: c.votes["judge"] for c in pool}
    for pick in result.picks:
        by_question.setdefault(pick.question_id, []).append(statuses[pick.completion_id])
    assert {q: sorted(s) for q, s in by_question.items()} == {1: [C, C, I, I], 2: [C, C, I, I]}
    assert result.report["picked"] == 8 and result.report["picked_correct"] == 4
    assert result.report["questions_short"] == 0 and result.report["shortfalls"] == []
    assert result.report["without_decided_verdict"] == 1
    assert all("judged" in pick.reason and "picked at random" in pick.reason for pick in result.picks)


def test_verifybench_reports_questions_short_of_a_side_and_never_pads_them():
    pool = question_pool(1, 1, 5, 100) + question_pool(2, 0, 1, 200) + question_pool(3, 3, 3, 300)
    result = verifybench_selection(pool, verifier="judge", seed=1)
    picked = {pick.completion_id for pick in result.picks}
    assert len([cid for cid in picked if 100 <= cid < 200]) == 3  # 1 correct + 2 incorrect, no third incorrect
    assert picked >= {100, 200}
    assert result.report["shortfalls"] == [
        {
            "question_id": 1,
            "correct_available": 1,
            "incorrect_available": 5,
            "missing_correct": 1,
            "missing_incorrect": 0,
        },
        {
            "question_id": 2,
            "correct_available": 0,
            "incorrect_available": 1,
            "missing_correct": 2,
            "missing_incorrect": 1,
        },
    ]
    assert result.report["questions_complete"] == 1 and result.report["picked"] == 3 + 1 + 4


def test_verifybench_is_reproducible_with_a_seed_and_varies_without_the_same_one():
    pool = [c for q in range(1, 30) for c in question_pool(q, 6, 6, q * 100)]
    first = verifybench_selection(pool, verifier="judge", seed=11).completion_ids
    assert first == verifybench_selection(list(reversed(pool)), verifier="judge", seed=11).completion_ids
    assert first != verifybench_selection(pool, verifier="judge", seed=12).completion_ids


def test_vote_split_counts_inconclusive_as_incorrect_and_needs_every_vote():
    assert vote_split(candidate(1, 1, votes=dict(zip(JUDGES, [C, C, I, U, I]))), JUDGES) == (2, 3)
    assert vote_split(candidate(1, 1, votes=dict(zip(JUDGES[:4], [C, C, I, I]))), JUDGES) is None
    assert is_contested((2, 3), 2) and is_contested((3, 2), 2)
    assert not is_contested((1, 4), 2) and not is_contested((5, 0), 2) and is_contested((1, 4), 1)


def test_verifybench_hard_keeps_only_two_versus_three_splits():
    splits = {1: [C, C, I, I, I], 2: [C, C, C, I, I], 3: [C, I, I, I, I], 4: [C] * 5, 5: [I] * 5, 6: [C, U, C, U, U]}
    pool = [candidate(cid, cid, votes=dict(zip(JUDGES, votes))) for cid, votes in splits.items()]
    pool.append(candidate(7, 7, votes={"j1": C, "j2": I}))
    result = verifybench_hard_selection(pool, verifiers=JUDGES, target=10, seed=3)
    assert sorted(result.completion_ids) == [1, 2, 6]
    assert result.report["contested"] == 3 and result.report["shortfall"] == 7
    assert result.report["missing_votes"] == 1
    assert result.report["vote_splits"]["2 correct / 3 incorrect"] == 2
    assert "split 2 correct vs 3 incorrect" in next(p.reason for p in result.picks if p.completion_id == 1)


def test_proportional_allocation_sums_to_the_target_and_respects_strata_sizes():
    sizes = {("math", "MATH", "A1"): 50, ("math", "MATH", "B1"): 30, ("logic", "BBH", "C1"): 15, ("gen", "X", "D2"): 5}
    allocation = proportional_allocation(sizes, 20)
    assert allocation == {
        ("math", "MATH", "A1"): 10,
        ("math", "MATH", "B1"): 6,
        ("logic", "BBH", "C1"): 3,
        ("gen", "X", "D2"): 1,
    }
    assert proportional_allocation(sizes, 500) == sizes
    assert sum(proportional_allocation({"a": 1, "b": 1, "c": 1}, 2).values()) == 2


@given(
    st.dictionaries(st.text(min_size=1, max_size=3), st.integers(min_value=0, max_value=400), max_size=12),
    st.integers(min_value=0, max_value=2000),
)
def test_proportional_allocation_properties(sizes, target):
    allocation = proportional_allocation(sizes, target)
    assert sum(allocation.values()) == min(target, sum(sizes.values()))
    assert all(0 <= allocation[key] <= sizes[key] for key in sizes)
    total = sum(sizes.values())
    if total and target < total:
        assert all(abs(allocation[key] - sizes[key] * target / total) < 1 for key in sizes)


def contested_pool():
    pool, cid = [], 0
    layout = [
        ("math_reasoning", "math/MATH", "A1", 60),
        ("math_reasoning", "math/AIME", "B1", 25),
        ("logic_reasoning", "logic/BBH", "C1", 10),
        ("general_reasoning", "gen/GPQA", "D2", 5),
    ]
    for domain, source, answer_type, size in layout:
        for _ in range(size):
            cid += 1
            pool.append(
                candidate(
                    cid,
                    cid,
                    domain=domain,
                    source=source,
                    answer_type=answer_type,
                    model=f"m{cid % 3}",
                    votes=dict(zip(JUDGES, [C, C, I, I, I])),
                )
            )
    for _ in range(40):
        cid += 1
        pool.append(
            candidate(
                cid,
                cid,
                domain="math_reasoning",
                source="math/MATH",
                answer_type="A1",
                votes=dict(zip(JUDGES, [C] * 5)),
            )
        )
    return pool


def test_verifybench_hard_stratified_sample_hits_the_target_in_proportion():
    result = verifybench_hard_selection(contested_pool(), verifiers=JUDGES, target=40, seed=5)
    assert result.report["picked"] == 40 and len(set(result.completion_ids)) == 40
    strata = {
        (s["domain"], s["source"], s["answer_type"]): (s["available"], s["allocated"]) for s in result.report["strata"]
    }
    assert strata == {
        ("math_reasoning", "math/MATH", "A1"): (60, 24),
        ("math_reasoning", "math/AIME", "B1"): (25, 10),
        ("logic_reasoning", "logic/BBH", "C1"): (10, 4),
        ("general_reasoning", "gen/GPQA", "D2"): (5, 2),
    }
    assert (
        result.completion_ids
        == verifybench_hard_selection(contested_pool(), verifiers=JUDGES, target=40, seed=5).completion_ids
    )
    assert (
        result.completion_ids
        != verifybench_hard_selection(contested_pool(), verifiers=JUDGES, target=40, seed=6).completion_ids
    )


def test_filters_narrow_either_recipe_by_answer_type_domain_and_model():
    filters = SelectionFilters.of(
        answer_types=["A", "C1"], domains=["math_reasoning", "logic_reasoning"], models=["m0", "m1"]
    )
    result = verifybench_hard_selection(contested_pool(), verifiers=JUDGES, target=1000, seed=1, filters=filters)
    picked = {c.completion_id: c for c in contested_pool() if c.completion_id in set(result.completion_ids)}
    assert picked and all(c.answer_type in ("A1", "C1") and c.model in ("m0", "m1") for c in picked.values())
    assert result.report["filtered_out"] > 0
    assert result.report["parameters"]["filters"]["answer_types"] == ["A", "C1"]

    pool = question_pool(1, 3, 3, 100, answer_type="A1", model="a") + question_pool(
        2, 3, 3, 200, answer_type="B1", model="a"
    )
    narrowed = verifybench_selection(pool, verifier="judge", seed=1, filters=SelectionFilters.of(answer_types=["B"]))
    assert {pick.question_id for pick in narrowed.picks} == {2}
    assert narrowed.report["filtered_out"] == 6


def test_bad_parameters_are_refused_with_a_reason():
    with pytest.raises(SelectionError, match="min_minority"):
        verifybench_hard_selection([], verifiers=JUDGES, target=10, min_minority=3)
    with pytest.raises(SelectionError, match="at least two"):
        verifybench_hard_selection([], verifiers=["j1"], target=10)
    with pytest.raises(SelectionError, match="target"):
        verifybench_hard_selection([], verifiers=JUDGES, target=0)
    with pytest.raises(SelectionError, match="strata"):
        verifybench_hard_selection([], verifiers=JUDGES, target=5, strata=["colour"])
    with pytest.raises(SelectionError, match="per_side"):
        verifybench_selection([], verifier="judge", per_side=0)
