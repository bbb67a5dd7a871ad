"""Competition leaderboards in the MathArena style. Pure logic, no Django imports.

Each model's score on a problem is the mean over its runs of score / max_points, in percent; the model's
score is the mean of those per-problem means, and its 95% interval a percentile bootstrap over problems.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from core.metrics.bootstrap import bootstrap_mean_ci


@dataclass(frozen=True)
class LeaderboardEntry:
    rank: int
    model: str
    score: float  # percent, mean over problems of the mean over runs
    ci_low: float | None
    ci_high: float | None
    problems_graded: int
    runs: int  # graded (problem, run) pairs
    per_problem: dict[Hashable, float | None]  # percent; None for a problem the model was not graded on
    released_after_competition: bool | None  # None when a date is unknown

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Leaderboard:
    problems: tuple[Hashable, ...]
    entries: tuple[LeaderboardEntry, ...]
    warnings: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "problems": list(self.problems),
            "entries": [entry.as_dict() for entry in self.entries],
            "warnings": list(self.warnings),
        }


def _problem_order(problem: Hashable) -> tuple[int, Any]:
    return (0, problem) if isinstance(problem, int) and not isinstance(problem, bool) else (1, str(problem))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def build_leaderboard(
    rows: Iterable[Mapping[str, Any]],
    *,
    competition_date: dt.date | None = None,
    release_dates: Mapping[str, dt.date | None] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> Leaderboard:
    """Rank models of one competition from graded runs `{model, problem, run, score, max_points}`.

    `score` lies in [0, max_points] and may be fractional (a mean of two graders). Models are ordered by
    score, ties share a rank. `released_after_competition` is True when the model's release date (from
    `release_dates`) is after `competition_date`: such a model may have seen the problems and their
    solutions during training. It is None when either date is missing.
    Raises ValueError naming the row for a malformed row or a repeated (model, problem, run).
    """
    percents: dict[str, dict[Hashable, list[float]]] = defaultdict(lambda: defaultdict(list))
    seen: set[tuple[str, Hashable, Hashable]] = set()
    for position, row in enumerate(rows, start=1):
        missing = [name for name in ("model", "problem", "run", "score", "max_points") if name not in row]
        if missing:
            raise ValueError(f"row {position}: missing field(s): {', '.join(missing)}")
        model, problem, run = row["model"], row["problem"], row["run"]
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"row {position}: model must be a non-empty string, got {model!r}")
        max_points, points = row["max_points"], row["score"]
        if not _number(max_points) or max_points <= 0:
            raise ValueError(f"row {position}: max_points must be a positive number, got {max_points!r}")
        if not _number(points) or not 0 <= points <= max_points:
            raise ValueError(f"row {position}: score must be a number within [0, {max_points}], got {points!r}")
        identity = (model, problem, run)
        if identity in seen:
            raise ValueError(f"row {position}: run {run!r} of model {model!r} on problem {problem!r} appears twice")
        seen.add(identity)
        percents[model][problem].append(100.0 * points / max_points)

    problems = tuple(sorted({p for by_problem in percents.values() for p in by_problem}, key=_problem_order))
    warnings: list[str] = []
    unranked: list[LeaderboardEntry] = []
    for model, by_problem in percents.items():
        per_problem = {problem: (sum(v) / len(v) if (v := by_problem.get(problem)) else None) for problem in problems}
        graded = [value for value in per_problem.values() if value is not None]
        missing_problems = [problem for problem in problems if per_problem[problem] is None]
        if missing_problems:
            warnings.append(
                f"{model}: not graded on {len(missing_problems)} problem(s) ({', '.join(map(str, missing_problems))}); "
                "its score averages the problems it was graded on"
            )
        run_counts = {len(v) for v in by_problem.values()}
        if len(run_counts) > 1:
            warnings.append(f"{model}: uneven number of runs per problem ({min(run_counts)} to {max(run_counts)})")
        interval = bootstrap_mean_ci(graded, resamples=bootstrap, seed=seed)
        unranked.append(
            LeaderboardEntry(
                rank=0,
                model=model,
                score=sum(graded) / len(graded),
                ci_low=interval[0] if interval else None,
                ci_high=interval[1] if interval else None,
                problems_graded=len(graded),
                runs=sum(len(v) for v in by_problem.values()),
                per_problem=per_problem,
                released_after_competition=_released_after(model, competition_date, release_dates),
            )
        )

    unranked.sort(key=lambda entry: (-entry.score, entry.model))
    entries: list[LeaderboardEntry] = []
    for position, entry in enumerate(unranked, start=1):
        tied = entries and math.isclose(entries[-1].score, entry.score)
        rank = entries[-1].rank if tied else position
        entries.append(LeaderboardEntry(**{**asdict(entry), "rank": rank}))
    return Leaderboard(problems=problems, entries=tuple(entries), warnings=tuple(warnings))


def _released_after(
    model: str, competition_date: dt.date | None, release_dates: Mapping[str, dt.date | None] | None
) -> bool | None:
    release = (release_dates or {}).get(model)
    if competition_date is None or release is None:
        return None
    return release > competition_date


def leaderboard_csv_rows(board: Leaderboard) -> list[dict[str, Any]]:
    """Flat rows for `csv.DictWriter`: rank, model, score, ci_low, ci_high, problems_graded, runs,
    released_after_competition, then one `problem_<id>` column per problem. Unknown values are empty strings.
    """
    rows = []
    for entry in board.entries:
        row: dict[str, Any] = {
            "rank": entry.rank,
            "model": entry.model,
            "score": entry.score,
            "ci_low": entry.ci_low,
            "ci_high": entry.ci_high,
            "problems_graded": entry.problems_graded,
            "runs": entry.runs,
            "released_after_competition": entry.released_after_competition,
        }
        for problem in board.problems:
            row[f"problem_{problem}"] = entry.per_problem[problem]
        rows.append({key: ("" if value is None else value) for key, value in row.items()})
    return rows
