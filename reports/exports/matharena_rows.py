"""Rows of graded proofs in MathArena's output format. Pure logic, no Django imports.

One row per proof: `problem_idx, problem, model_name, model_config, idx_answer, answer`, then for each judge
(grader) `points_judge_N, grading_details_judge_N, max_points_judge_N`, then `final_points` and `final_method`.
`grading_details_judge_N` lists `{title, desc, points, max_points, grading_scheme_desc}`: one entry per
checkpoint of the chain the grader followed (desc is the grader's justification), then one per deduction
applied (negative points for a penalty, a cap named in its desc).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grading.proofs.scoring import OVERALL_JUSTIFICATION, RubricSpec

JUDGE_SLOTS = 3
FINAL_METHODS = {
    "agreement": "mean_of_two",
    "majority": "median",
    "adjudication": "adjudication",
    "override": "override",
}
BASE_FIELDS = ("problem_idx", "problem", "model_name", "model_config", "idx_answer", "answer")


def column_names(judge_slots: int = JUDGE_SLOTS) -> tuple[str, ...]:
    judges = tuple(
        name
        for number in range(1, judge_slots + 1)
        for name in (f"points_judge_{number}", f"grading_details_judge_{number}", f"max_points_judge_{number}")
    )
    return (*BASE_FIELDS, *judges, "final_points", "final_method")


@dataclass(frozen=True)
class JudgeGrade:
    """One grader's stored grade: the total and the details the grading service wrote (chain, awarded,
    deductions, justifications), with the rubric version it was given against."""

    total: float
    max_points: int
    rubric: RubricSpec
    details: Mapping[str, Any]


def grading_details(grade: JudgeGrade) -> list[dict[str, Any]]:
    details = grade.details
    justifications = details.get("justifications") or {}
    chain = grade.rubric.chain(details.get("chain", ""))
    awarded = details.get("awarded") or {}
    entries = []
    if chain is not None:
        for checkpoint in chain.checkpoints:
            entries.append(
                {
                    "title": checkpoint.title,
                    "desc": justifications.get(checkpoint.key, ""),
                    "points": awarded.get(checkpoint.key, 0),
                    "max_points": checkpoint.points,
                    "grading_scheme_desc": checkpoint.description,
                }
            )
    for key in details.get("deductions") or ():
        deduction = grade.rubric.deduction(key)
        if deduction is None:
            continue
        is_cap = deduction.kind == "cap"
        entries.append(
            {
                "title": deduction.title,
                "desc": justifications.get(key, ""),
                "points": 0 if is_cap else -deduction.amount,
                "max_points": 0,
                "grading_scheme_desc": (
                    f"deduction: cap at {deduction.amount}/{grade.rubric.max_points}"
                    if is_cap
                    else f"deduction: -{deduction.amount}"
                ),
            }
        )
    if justifications.get(OVERALL_JUSTIFICATION):
        entries.append(
            {
                "title": "Overall",
                "desc": justifications[OVERALL_JUSTIFICATION],
                "points": 0,
                "max_points": 0,
                "grading_scheme_desc": "",
            }
        )
    return entries


def _number(value: float) -> int | float:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def problem_index(problem_idx: str | int) -> int | str:
    """MathArena numbers problems with integers; ids that are not numbers stay strings."""
    return int(problem_idx) if isinstance(problem_idx, str) and problem_idx.isdigit() else problem_idx


def matharena_graded_row(
    *,
    problem_idx: str | int,
    problem: str,
    model_name: str,
    model_config: Any,
    idx_answer: int,
    answer: str,
    judges: Sequence[JudgeGrade],
    final_points: float | None,
    resolution: str,
    judge_slots: int = JUDGE_SLOTS,
) -> dict[str, Any]:
    """One MathArena output row. Judges are in grading order; slots without a judge are None.
    Raises ValueError when there are more judges than slots or the resolution is unknown."""
    if len(judges) > judge_slots:
        raise ValueError(f"{len(judges)} judges do not fit in {judge_slots} judge slots")
    if resolution not in FINAL_METHODS:
        raise ValueError(f"unknown resolution {resolution!r}; expected one of {', '.join(FINAL_METHODS)}")
    row: dict[str, Any] = {
        "problem_idx": problem_index(problem_idx),
        "problem": problem,
        "model_name": model_name,
        "model_config": model_config,
        "idx_answer": idx_answer,
        "answer": answer,
    }
    for number in range(1, judge_slots + 1):
        judge = judges[number - 1] if number <= len(judges) else None
        row[f"points_judge_{number}"] = _number(judge.total) if judge else None
        row[f"grading_details_judge_{number}"] = grading_details(judge) if judge else None
        row[f"max_points_judge_{number}"] = judge.max_points if judge else None
    row["final_points"] = _number(final_points) if final_points is not None else None
    row["final_method"] = FINAL_METHODS[resolution]
    return row
