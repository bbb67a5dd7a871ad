"""Read-side queries of proof grading. What a grader may see goes through `proof_task_payload`: never a model
name, never another grader's label."""
from __future__ import annotations

import csv
import io

from django.db.models import Prefetch

from annotation import workflow
from annotation.models import AnnotationProject, Item, Label, Task

from . import leaderboard, proof_scoring
from .models import Competition, ModelInfo, OfficialSolution, ProofProblem, ProofSubmission, Rubric


def rubric_dict(rubric: Rubric | None) -> dict | None:
    if rubric is None:
        return None
    return {
        "id": rubric.pk, "problem_id": rubric.problem_id, "version": rubric.version, "spec": rubric.spec,
        "in_use": rubric.is_used(), "created_at": rubric.created_at.isoformat(),
    }


def problem_dict(problem: ProofProblem, *, with_solutions: bool = True) -> dict:
    data = {
        "id": problem.pk,
        "competition": {"id": problem.competition_id, "name": problem.competition.name},
        "problem_idx": problem.problem_idx,
        "statement": problem.statement,
        "max_points": problem.max_points,
    }
    if with_solutions:
        data["solutions"] = [{"title": s.title, "text": s.text} for s in problem.solutions.all()]
    return data


def own_proof_task(user, task_id: int) -> Task | None:
    return (
        Task.objects.select_related("item__project", "item__proof_submission__problem__competition")
        .filter(pk=task_id, annotator=user, item__proof_submission__isnull=False)
        .first()
    )


def _grade_dict(label: Label, *, with_annotator: bool) -> dict:
    data = {
        "score": label.value,
        "details": label.details,
        "note": label.note,
        "is_tiebreak": label.is_tiebreak,
        "created_at": label.created_at.isoformat(),
    }
    if with_annotator:
        data["grader"] = {"id": label.annotator_id, "username": label.annotator.username}
    return data


def proof_task_payload(task: Task) -> dict:
    """A proof task as its grader may see it: the problem, the rubric to grade with, the anonymous proof."""
    item = task.item
    submission = item.proof_submission
    problem = submission.problem
    label = Label.objects.filter(task=task).first()
    rubric = None
    if label is not None and label.details.get("rubric_id"):
        rubric = Rubric.objects.filter(pk=label.details["rubric_id"]).first()
    rubric = rubric or problem.latest_rubric()
    return {
        "task_id": task.pk,
        "item_id": item.pk,
        "project": {"id": item.project_id, "name": item.project.name, "kind": item.project.kind},
        "status": task.status,
        "lease_expires_at": task.expires_at.isoformat(),
        "problem": problem_dict(problem),
        "rubric": rubric_dict(rubric),
        "submission": {"anonymous_id": submission.anonymous_id, "text": submission.text},
        "my_grade": _grade_dict(label, with_annotator=False) if label is not None else None,
    }


def proof_item_review(item: Item) -> dict:
    """A proof item for adjudicators and researchers: every grade side by side with its justifications.
    The proof stays anonymous here too."""
    submission = item.proof_submission
    labels = Label.objects.filter(item=item).select_related("annotator").order_by("created_at", "id")
    rubric_ids = {label.details.get("rubric_id") for label in labels if label.details}
    rubrics = {rubric.pk: rubric_dict(rubric) for rubric in Rubric.objects.filter(pk__in=rubric_ids)}
    return {
        "item_id": item.pk,
        "project": {"id": item.project_id, "name": item.project.name, "kind": item.project.kind,
                    "agreement_threshold": item.project.agreement_threshold},
        "state": item.state,
        "resolution": item.resolution,
        "final_value": item.final_value,
        "final_display": f"{item.final_value:g}" if isinstance(item.final_value, (int, float)) else None,
        "excluded": item.excluded,
        "is_gold": item.is_gold,
        "required_labels": item.required_labels,
        "problem": problem_dict(submission.problem),
        "submission": {"anonymous_id": submission.anonymous_id, "text": submission.text},
        "rubrics": rubrics,
        "labels": [
            {**_grade_dict(label, with_annotator=True), "value": label.value, "unsuitable": label.unsuitable,
             "unsuitable_reason": label.unsuitable_reason}
            for label in labels
        ],
    }


def proof_conflicts(project: AnnotationProject):
    return (
        Item.objects.filter(project=project, state=workflow.NEEDS_ADJUDICATION, is_gold=False,
                            proof_submission__isnull=False)
        .select_related("proof_submission__problem")
        .order_by("priority", "id")
    )


def competitions():
    return Competition.objects.order_by("-date", "name")


def competition_problems(competition: Competition):
    return competition.problems.prefetch_related(
        Prefetch("solutions", queryset=OfficialSolution.objects.order_by("position"))
    ).order_by("position", "problem_idx")


def proof_projects(competition: Competition | None = None):
    projects = AnnotationProject.objects.filter(kind="proof_grade")
    if competition is not None:
        projects = projects.filter(dataset_id=competition.dataset_id)
    return projects.order_by("-created_at")


def final_scores(competition: Competition) -> dict[int, dict]:
    """Per submission id of the competition: its final score and how it was reached.

    A submission graded in several projects counts once, with its most recently resolved final score.
    """
    items = (
        Item.objects.filter(
            proof_submission__problem__competition=competition, state=workflow.RESOLVED, excluded=False,
            is_gold=False,
        )
        .order_by("resolved_at", "id")
        .values_list("proof_submission_id", "final_value", "resolution", "id")
    )
    return {
        submission_id: {"final": final, "resolution": resolution, "item_id": item_id}
        for submission_id, final, resolution, item_id in items
        if isinstance(final, (int, float)) and not isinstance(final, bool)
    }


def leaderboard_rows(competition: Competition) -> list[dict]:
    finals = final_scores(competition)
    submissions = ProofSubmission.objects.filter(pk__in=finals).values_list(
        "pk", "model_name", "problem__problem_idx", "run_index", "problem__max_points"
    )
    return [
        {"model": model, "problem": _problem_key(problem_idx), "run": run, "score": finals[pk]["final"],
         "max_points": max_points}
        for pk, model, problem_idx, run, max_points in submissions
    ]


def _problem_key(problem_idx: str):
    return int(problem_idx) if problem_idx.isdigit() else problem_idx


def competition_leaderboard(competition: Competition, *, bootstrap: int = 1000, seed: int = 0) -> leaderboard.Leaderboard:
    rows = leaderboard_rows(competition)
    release_dates = dict(
        ModelInfo.objects.filter(name__in={row["model"] for row in rows}).values_list("name", "release_date")
    )
    return leaderboard.build_leaderboard(
        rows, competition_date=competition.date, release_dates=release_dates, bootstrap=bootstrap, seed=seed,
    )


def rubric_for_display(rubric: Rubric | None) -> proof_scoring.RubricSpec | None:
    return proof_scoring.rubric_from_dict(rubric.spec) if rubric is not None else None


def leaderboard_csv_text(board: leaderboard.Leaderboard) -> str:
    """The leaderboard as CSV: rank, model, score, ci_low, ci_high, problems_graded, runs,
    released_after_competition, then one problem_<id> column per problem."""
    fields = ["rank", "model", "score", "ci_low", "ci_high", "problems_graded", "runs", "released_after_competition",
              *[f"problem_{problem}" for problem in board.problems]]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(leaderboard.leaderboard_csv_rows(board))
    return buffer.getvalue()
