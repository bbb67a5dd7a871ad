"""Read-side queries of proof grading: grading tasks and conflicts, competitions, final scores and leaderboards.
What a grader sees of a proof is built by `grading.proofs.subject`: never a model name, never another grader's
label."""

from __future__ import annotations

import csv
import io

from django.db.models import Count, Prefetch

from annotation import workflow
from annotation.models import AnnotationProject, Item, Task
from core import roles, workspaces

from . import leaderboard
from . import scoring as proof_scoring
from .models import Competition, ModelInfo, OfficialSolution, ProofProblem, ProofSubmission, Rubric

PROOF_GRADE = "proof_grade"  # the project kind of proof grading (grading.proof_subject)


def rubric_dict(rubric: Rubric | None) -> dict | None:
    if rubric is None:
        return None
    return {
        "id": rubric.pk,
        "problem_id": rubric.problem_id,
        "version": rubric.version,
        "spec": rubric.spec,
        "in_use": rubric.is_used(),
        "created_at": rubric.created_at.isoformat(),
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


def visible_rubrics(user):
    """Researchers see the rubrics of their workspaces, admins every one; others only those of competitions graded in
    a project they are an active member of."""
    rubrics = Rubric.objects.select_related("problem")
    if roles.is_researcher(user):
        return rubrics.filter(workspaces.condition(user, "problem__competition__dataset__workspace"))
    datasets = AnnotationProject.objects.filter(
        kind=PROOF_GRADE, memberships__user=user, memberships__is_active=True
    ).values("dataset_id")
    return rubrics.filter(problem__competition__dataset_id__in=datasets)


def own_proof_task(user, task_id: int) -> Task | None:
    return (
        Task.objects.select_related("item__project")
        .filter(pk=task_id, annotator=user, item__project__kind=PROOF_GRADE)
        .first()
    )


def submission_of(item: Item) -> ProofSubmission:
    return ProofSubmission.objects.select_related("problem__competition").get(pk=item.subject_id)


def proof_conflicts(project: AnnotationProject):
    return (
        Item.objects.filter(
            project=project, state=workflow.NEEDS_ADJUDICATION, is_gold=False, project__kind=PROOF_GRADE
        )
        .select_related("project")
        .order_by("priority", "id")
    )


def competitions():
    return Competition.objects.order_by("-date", "name")


def competition_problems(competition: Competition):
    return competition.problems.prefetch_related(
        Prefetch("solutions", queryset=OfficialSolution.objects.order_by("position"))
    ).order_by("position", "problem_idx")


def proof_projects(competition: Competition | None = None):
    projects = AnnotationProject.objects.filter(kind=PROOF_GRADE)
    if competition is not None:
        projects = projects.filter(dataset_id=competition.dataset_id)
    return projects.order_by("-created_at")


def final_scores(competition: Competition) -> dict[int, dict]:
    """Per submission id of the competition: its final score and how it was reached.

    A submission graded in several projects counts once, with its most recently resolved final score.
    """
    items = (
        Item.objects.filter(
            project__kind=PROOF_GRADE,
            subject_id__in=ProofSubmission.objects.filter(problem__competition=competition).values("pk"),
            state=workflow.RESOLVED,
            excluded=False,
            is_gold=False,
        )
        .order_by("resolved_at", "id")
        .values_list("subject_id", "final_value", "resolution", "id")
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
        {
            "model": model,
            "problem": _problem_key(problem_idx),
            "run": run,
            "score": finals[pk]["final"],
            "max_points": max_points,
        }
        for pk, model, problem_idx, run, max_points in submissions
    ]


def _problem_key(problem_idx: str):
    return int(problem_idx) if problem_idx.isdigit() else problem_idx


def competition_leaderboard(
    competition: Competition, *, bootstrap: int = 1000, seed: int = 0
) -> leaderboard.Leaderboard:
    rows = leaderboard_rows(competition)
    release_dates = dict(
        ModelInfo.objects.filter(name__in={row["model"] for row in rows}).values_list("name", "release_date")
    )
    return leaderboard.build_leaderboard(
        rows,
        competition_date=competition.date,
        release_dates=release_dates,
        bootstrap=bootstrap,
        seed=seed,
    )


def rubric_for_display(rubric: Rubric | None) -> proof_scoring.RubricSpec | None:
    return proof_scoring.rubric_from_dict(rubric.spec) if rubric is not None else None


def leaderboard_csv_text(board: leaderboard.Leaderboard) -> str:
    """The leaderboard as CSV: rank, model, score, ci_low, ci_high, problems_graded, runs,
    released_after_competition, then one problem_<id> column per problem."""
    fields = [
        "rank",
        "model",
        "score",
        "ci_low",
        "ci_high",
        "problems_graded",
        "runs",
        "released_after_competition",
        *[f"problem_{problem}" for problem in board.problems],
    ]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(leaderboard.leaderboard_csv_rows(board))
    return buffer.getvalue()


def competition_overview(competition: Competition) -> list[dict]:
    """Per problem of the competition, in order: its statement, points, latest rubric (version, chains, checkpoints),
    how many proofs it has and from which models."""
    problems = list(
        competition.problems.prefetch_related(Prefetch("rubrics", queryset=Rubric.objects.order_by("-version")))
        .annotate(proofs=Count("submissions"))
        .order_by("position", "problem_idx")
    )
    models_of: dict[int, list[str]] = {}
    for problem_id, model_name in (
        ProofSubmission.objects.filter(problem__competition=competition)
        .values_list("problem_id", "model_name")
        .distinct()
        .order_by("problem_id", "model_name")
    ):
        models_of.setdefault(problem_id, []).append(model_name)
    overview = []
    for problem in problems:
        rubric = next(iter(problem.rubrics.all()), None)
        chains = (rubric.spec or {}).get("chains", []) if rubric is not None else []
        overview.append(
            {
                "problem": problem,
                "rubric": rubric,
                "chains": [
                    {"title": chain.get("title") or chain.get("key", ""), "checkpoints": chain.get("checkpoints", [])}
                    for chain in chains
                ],
                "proofs": problem.proofs,
                "models": models_of.get(problem.pk, []),
            }
        )
    return overview
