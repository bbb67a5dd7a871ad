"""Competition leaderboards: percent scores averaged over runs then problems, bootstrap intervals, flags, CSV."""

from __future__ import annotations

import datetime as dt

import pytest

from grading.proofs.leaderboard import build_leaderboard, leaderboard_csv_rows


def run(model, problem, run_index, points, max_points=7):
    return {"model": model, "problem": problem, "run": run_index, "score": points, "max_points": max_points}


ROWS = [
    # model-a: problem 1 runs 7 and 0 -> 50 %; problem 2 runs 7 and 7 -> 100 %; mean 75 %
    run("model-a", 1, 0, 7),
    run("model-a", 1, 1, 0),
    run("model-a", 2, 0, 7),
    run("model-a", 2, 1, 7),
    # model-b: problem 1 3.5/7 -> 50 %; problem 2 0 -> 0 %; mean 25 %
    run("model-b", 1, 0, 3.5),
    run("model-b", 2, 0, 0),
    # model-c: 25 % as well, ties with model-b
    run("model-c", 1, 0, 0),
    run("model-c", 2, 0, 1, max_points=2),
]


def test_scores_ranks_and_per_problem_columns():
    board = build_leaderboard(ROWS, bootstrap=200, seed=1)
    assert board.problems == (1, 2)
    by_model = {entry.model: entry for entry in board.entries}
    assert [entry.model for entry in board.entries] == ["model-a", "model-b", "model-c"]
    assert by_model["model-a"].score == pytest.approx(75.0)
    assert by_model["model-a"].per_problem == {1: pytest.approx(50.0), 2: pytest.approx(100.0)}
    assert by_model["model-a"].runs == 4
    assert by_model["model-b"].score == pytest.approx(25.0)
    assert [entry.rank for entry in board.entries] == [1, 2, 2]
    entry = by_model["model-a"]
    assert 50.0 <= entry.ci_low <= entry.score <= entry.ci_high <= 100.0


def test_bootstrap_is_seeded():
    first = build_leaderboard(ROWS, bootstrap=200, seed=4).entries
    second = build_leaderboard(list(reversed(ROWS)), bootstrap=200, seed=4).entries
    assert [(e.model, e.ci_low, e.ci_high) for e in first] == [(e.model, e.ci_low, e.ci_high) for e in second]
    assert build_leaderboard(ROWS, bootstrap=0).entries[0].ci_low is None


def test_released_after_competition_flag():
    board = build_leaderboard(
        ROWS,
        competition_date=dt.date(2025, 2, 15),
        release_dates={"model-a": dt.date(2025, 1, 1), "model-b": dt.date(2025, 3, 1)},
        bootstrap=0,
    )
    flags = {entry.model: entry.released_after_competition for entry in board.entries}
    assert flags == {"model-a": False, "model-b": True, "model-c": None}
    assert all(e.released_after_competition is None for e in build_leaderboard(ROWS, bootstrap=0).entries)


def test_missing_problems_are_reported():
    board = build_leaderboard(ROWS + [run("model-d", 1, 0, 7)], bootstrap=0)
    entry = next(e for e in board.entries if e.model == "model-d")
    assert entry.score == 100.0
    assert entry.problems_graded == 1
    assert entry.per_problem[2] is None
    assert any("model-d: not graded on 1 problem(s) (2)" in warning for warning in board.warnings)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"model": "m", "problem": 1, "run": 0, "score": 8, "max_points": 7}, "score must be a number within"),
        ({"model": "m", "problem": 1, "run": 0, "score": 1, "max_points": 0}, "max_points must be a positive"),
        ({"model": "", "problem": 1, "run": 0, "score": 1, "max_points": 7}, "model must be"),
        ({"model": "m", "problem": 1, "score": 1, "max_points": 7}, "missing field"),
    ],
)
def test_bad_rows(row, message):
    with pytest.raises(ValueError, match=message):
        build_leaderboard([row])


def test_repeated_run_is_rejected():
    with pytest.raises(ValueError, match="row 2: run 0 .* appears twice"):
        build_leaderboard([run("m", 1, 0, 1), run("m", 1, 0, 2)])


def test_csv_rows():
    board = build_leaderboard(
        ROWS, competition_date=dt.date(2025, 2, 15), release_dates={"model-a": dt.date(2025, 1, 1)}, bootstrap=0
    )
    rows = leaderboard_csv_rows(board)
    assert list(rows[0]) == [
        "rank",
        "model",
        "score",
        "ci_low",
        "ci_high",
        "problems_graded",
        "runs",
        "released_after_competition",
        "problem_1",
        "problem_2",
    ]
    assert rows[0]["model"] == "model-a"
    assert rows[0]["problem_1"] == pytest.approx(50.0)
    assert rows[0]["released_after_competition"] is False
    assert rows[1]["released_after_competition"] == ""
    assert rows[1]["ci_low"] == ""
