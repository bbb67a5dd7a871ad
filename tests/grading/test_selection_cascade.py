"""The pure cascade recipe: only what a cascade left to humans, by route, filtered, capped at a seeded target."""

import pytest

from grading.selection.recipes import Candidate, SelectionError, SelectionFilters, cascade_selection

CASCADE = "cascade"


def pool():
    """Completions 1-12: 1-4 decided, 5-8 undecided, 9-10 disputed, 11-12 without a cascade verdict."""
    made = []
    for cid in range(1, 13):
        votes, routes = {}, {}
        if cid <= 10:
            votes[CASCADE] = "correct" if cid <= 4 else "inconclusive"
        if 5 <= cid <= 8:
            routes[CASCADE] = "undecided"
        elif cid in (9, 10):
            routes[CASCADE] = "disputed"
        made.append(
            Candidate(
                completion_id=cid,
                question_id=cid % 3,
                answer_type="A1" if cid % 2 else "C1",
                votes=votes,
                routes=routes,
            )
        )
    return made


def test_both_routes_by_default_with_a_report_of_what_the_cascade_decided():
    result = cascade_selection(pool(), verifier=CASCADE)
    assert result.completion_ids == [5, 6, 7, 8, 9, 10]
    report = result.report
    assert (report["candidates"], report["without_cascade_verdict"], report["decided_by_cascade"]) == (12, 2, 4)
    assert (report["undecided"], report["disputed"], report["picked_undecided"], report["picked_disputed"]) == (
        4,
        2,
        4,
        2,
    )
    assert result.picks[-1].reason == "the rules and the judge disagreed"


def test_one_route_a_filter_and_a_seeded_target():
    assert cascade_selection(pool(), verifier=CASCADE, routes=["disputed"]).completion_ids == [9, 10]
    odd = cascade_selection(pool(), verifier=CASCADE, filters=SelectionFilters.of(answer_types=["A"]))
    assert odd.completion_ids == [5, 7, 9] and odd.report["filtered_out"] == 6
    first = cascade_selection(pool(), verifier=CASCADE, target=3, seed=5)
    again = cascade_selection(pool(), verifier=CASCADE, target=3, seed=5)
    assert first.completion_ids == again.completion_ids and len(first.completion_ids) == 3
    assert set(first.completion_ids) <= {5, 6, 7, 8, 9, 10}
    assert cascade_selection(pool(), verifier=CASCADE, target=50).report["picked"] == 6


def test_bad_parameters_are_refused():
    with pytest.raises(SelectionError, match="routes"):
        cascade_selection(pool(), verifier=CASCADE, routes=["decided"])
    with pytest.raises(SelectionError, match="routes"):
        cascade_selection(pool(), verifier=CASCADE, routes=[])
    with pytest.raises(SelectionError, match="target"):
        cascade_selection(pool(), verifier=CASCADE, target=0)
