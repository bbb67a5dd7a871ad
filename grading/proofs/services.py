"""Writes and business rules of proof grading: competitions, rubric versions, grading projects, grades, decisions.

The arithmetic lives in `grading.proofs.scoring` (pure); this module checks and stores. A grade is an annotation
Label of a `proof_grade` project: its value is the score computed here, its details the grader's choices.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from annotation import services as annotation_services
from annotation.models import AnnotationProject, Item, ProjectMember, Task
from verifybench.models import Dataset

from . import scoring as proof_scoring
from .models import Competition, OfficialSolution, ProofProblem, ProofSubmission, Rubric
from .subject import PROOF_GRADE

DEFAULT_THRESHOLD = 1.0


class ProofGradingError(annotation_services.InvalidSubmission):
    """A rubric or a grade that cannot be stored; `errors` lists every problem found."""

    def __init__(self, errors: Sequence[str]):
        self.errors = list(errors)
        super().__init__("; ".join(self.errors))


# ---------------------------------------------------------------- competitions and problems


def get_or_create_competition(
    name: str, *, date: dt.date | None = None, created_by=None, workspace=None
) -> Competition:
    """The competition called `name`, created with a dataset of the same name (in `workspace`, or the default one)
    when missing."""
    name = name.strip()
    if not name:
        raise ProofGradingError(["a competition needs a name"])
    competition = Competition.objects.filter(name=name).first()
    if competition is not None:
        if date is not None and competition.date is None:
            competition.date = date
            competition.save(update_fields=["date"])
        return competition
    defaults = {"created_by": created_by, **({"workspace": workspace} if workspace is not None else {})}
    dataset, _ = Dataset.objects.get_or_create(name=name, defaults=defaults)
    return Competition.objects.create(name=name, date=date, dataset=dataset)


def add_problem(
    competition: Competition,
    *,
    problem_idx,
    statement: str,
    max_points: int = proof_scoring.DEFAULT_MAX_POINTS,
    solutions: Iterable[str] = (),
    rubric: Mapping[str, Any] | None = None,
    position: int | None = None,
    created_by=None,
) -> ProofProblem:
    """Create a problem with its official solutions and, when given, its first rubric version."""
    with transaction.atomic():
        problem = ProofProblem.objects.create(
            competition=competition,
            problem_idx=str(problem_idx),
            statement=statement,
            max_points=max_points,
            position=position if position is not None else competition.problems.count() + 1,
        )
        OfficialSolution.objects.bulk_create(
            OfficialSolution(problem=problem, position=number, text=text)
            for number, text in enumerate(solutions, start=1)
            if text
        )
        if rubric is not None:
            save_rubric(problem, rubric, created_by=created_by)
    return problem


def add_submission(
    problem: ProofProblem, *, model_name: str, text: str, run_index: int = 0, model_config: Any = None
) -> ProofSubmission:
    return ProofSubmission.objects.create(
        problem=problem,
        model_name=model_name,
        text=text,
        run_index=run_index,
        model_config=model_config or {},
    )


# ---------------------------------------------------------------- rubrics


def rubric_errors(problem: ProofProblem, spec: Any) -> tuple[proof_scoring.RubricSpec | None, list[str]]:
    """The parsed rubric and every reason it cannot be used for this problem."""
    if not isinstance(spec, Mapping):
        return None, ["the rubric must be an object with chains, deductions and zero_credit"]
    try:
        parsed = proof_scoring.rubric_from_dict(spec)
    except ValueError as error:
        return None, [str(error)]
    errors = proof_scoring.validate_rubric(parsed)
    if not errors and parsed.max_points != problem.max_points:
        errors.append(f"the rubric is worth {parsed.max_points} points but the problem is worth {problem.max_points}")
    return parsed, errors


def save_rubric(problem: ProofProblem, spec: Mapping[str, Any], *, created_by=None) -> Rubric:
    """Save a rubric for `problem`, never changing a version that grades point at.

    Raises ProofGradingError listing every problem of an invalid rubric. The same rubric again returns the
    latest version unchanged; the latest version is edited in place while no grade uses it; otherwise a new
    version (latest + 1) is created.
    """
    parsed, errors = rubric_errors(problem, spec)
    if errors or parsed is None:
        raise ProofGradingError(errors)
    canonical = json.loads(json.dumps(proof_scoring.rubric_to_dict(parsed)))  # tuples become lists, as stored
    with transaction.atomic():
        ProofProblem.objects.select_for_update().get(pk=problem.pk)
        latest = problem.rubrics.order_by("-version").first()
        if latest is not None and latest.spec == canonical:
            return latest
        if latest is not None and not latest.is_used():
            latest.spec = canonical
            latest.save(update_fields=["spec"])
            return latest
        return Rubric.objects.create(
            problem=problem,
            version=latest.version + 1 if latest else 1,
            spec=canonical,
            created_by=created_by,
        )


def rubric_spec(rubric: Rubric) -> proof_scoring.RubricSpec:
    return proof_scoring.rubric_from_dict(rubric.spec)


# ---------------------------------------------------------------- projects


def create_proof_project(
    *,
    name: str,
    competition: Competition | None = None,
    problems: Sequence[ProofProblem] | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    created_by=None,
    graders: Iterable = (),
    adjudicators: Iterable = (),
    seed: int | None = None,
    **settings,
) -> AnnotationProject:
    """A `proof_grade` project with one item per submission of the competition (or of the given problems).

    Two graders per submission; scores within `threshold` points agree (final = their mean), otherwise a
    third grader is asked (final = median of three when some pair agrees), else an adjudicator decides.
    """
    if competition is None and not problems:
        raise ProofGradingError(["give a competition or a list of problems"])
    if problems:
        competitions = {problem.competition_id for problem in problems}
        if len(competitions) != 1 or (competition is not None and competition.pk not in competitions):
            raise ProofGradingError(["every problem of a project must belong to one competition"])
        competition = competition or problems[0].competition
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or threshold < 0:
        raise ProofGradingError([f"the agreement threshold must be a non-negative number of points, got {threshold!r}"])
    assert competition is not None  # given, or taken from the problems above
    submissions = ProofSubmission.objects.filter(problem__competition=competition)
    if problems:
        submissions = submissions.filter(problem__in=problems)
    with transaction.atomic():
        project = AnnotationProject.objects.create(
            name=name,
            dataset=competition.dataset,
            kind=PROOF_GRADE,
            agreement_threshold=float(threshold),
            created_by=created_by,
            show_model_names=False,
            **settings,
        )
        annotation_services.add_items(
            project,
            subject_ids=list(submissions.order_by("problem__position", "id").values_list("pk", flat=True)),
            seed=seed,
        )
        for user in graders:
            annotation_services.add_member(project, user, ProjectMember.Role.ANNOTATOR)
        for user in adjudicators:
            annotation_services.add_member(project, user, ProjectMember.Role.ADJUDICATOR)
    return project


def add_submissions_to_project(
    project: AnnotationProject, submissions: Iterable[ProofSubmission], *, seed: int | None = None
) -> int:
    """Add items for submissions the project does not have yet; returns how many were added."""
    return annotation_services.add_items(project, subject_ids=[submission.pk for submission in submissions], seed=seed)


# ---------------------------------------------------------------- grades


@dataclass(frozen=True)
class GradeResult:
    label: Any
    created: bool
    item: Item
    score: proof_scoring.ScoreResult
    rubric: Rubric


def _choices_from(chain: Any, awarded: Any, deductions: Any, justifications: Any) -> proof_scoring.GradeChoices:
    errors = []
    if not isinstance(chain, str) or not chain:
        errors.append("chain: name the chain of checkpoints you graded")
    if not isinstance(awarded, Mapping):
        errors.append("awarded: must be an object {checkpoint: points}")
    if not isinstance(deductions, (list, tuple)) or not all(isinstance(key, str) for key in deductions):
        errors.append("deductions: must be a list of deduction keys")
    if not isinstance(justifications, Mapping) or not all(
        isinstance(key, str) and isinstance(text, str) for key, text in justifications.items()
    ):
        errors.append("justifications: must be an object {key: text}")
    if errors:
        raise ProofGradingError(errors)
    return proof_scoring.GradeChoices(
        chain_key=chain,
        awarded=dict(awarded),
        deductions=tuple(deductions),
        justifications={key: text.strip() for key, text in justifications.items()},
    )


def proof_task_rubric(task: Task, rubric_id: int | None = None) -> Rubric:
    """The rubric a grade of this task is given against: the one named (any version of the task's problem) or
    the latest."""
    problem = ProofProblem.objects.get(submissions__pk=task.item.subject_id)
    if rubric_id is not None:
        rubric = problem.rubrics.filter(pk=rubric_id).first()
        if rubric is None:
            raise ProofGradingError([f"rubric {rubric_id} is not a rubric of this problem"])
        return rubric
    rubric = problem.latest_rubric()
    if rubric is None:
        raise ProofGradingError(["this problem has no rubric yet; a researcher must write one first"])
    return rubric


def grade_task(
    task: Task,
    user,
    *,
    chain: Any,
    awarded: Any = None,
    deductions: Any = (),
    justifications: Any = None,
    note: str = "",
    rubric_id: int | None = None,
    seconds_spent: float | None = None,
) -> GradeResult:
    """Score a grader's rubric choices on the server and store them as the task's label.

    Raises ProofGradingError listing every invalid choice and every missing justification (partial credit,
    each deduction, a zero total). The label's value is the computed total; its details keep the choices,
    the breakdown and the rubric version, which from then on cannot change.
    """
    item = task.item
    if item.project.kind != PROOF_GRADE:
        raise ProofGradingError(["this task is not a proof to grade"])
    if task.annotator_id != user.pk:
        raise annotation_services.NotAllowed("this task is not yours")
    rubric = proof_task_rubric(task, rubric_id)
    spec = rubric_spec(rubric)
    choices = _choices_from(
        chain, awarded if awarded is not None else {}, deductions, justifications if justifications is not None else {}
    )
    errors = proof_scoring.validate_grade(spec, choices)
    if errors:
        raise ProofGradingError(errors)
    result = proof_scoring.score(spec, choices)
    details = {
        "rubric_id": rubric.pk,
        "rubric_version": rubric.version,
        "chain": choices.chain_key,
        "awarded": {line.key: line.awarded for line in result.breakdown},
        "deductions": [deduction.key for deduction in result.applied_deductions],
        "justifications": {key: text for key, text in choices.justifications.items() if text},
        "breakdown": [
            {"key": line.key, "title": line.title, "awarded": line.awarded, "points": line.points}
            for line in result.breakdown
        ],
        "chain_total": result.chain_total,
        "total": result.total,
        "max_points": spec.max_points,
    }
    submitted = annotation_services.submit_label(
        task,
        user,
        value=result.total,
        note=note or "",
        details=details,
        seconds_spent=seconds_spent,
    )
    return GradeResult(submitted.label, submitted.created, submitted.item, result, rubric)


def decide_proof(item: Item, user, *, score: Any, rationale: str) -> Item:
    """An adjudicator's final score for a proof whose graders did not agree, with a written rationale."""
    submission = ProofSubmission.objects.select_related("problem").filter(pk=item.subject_id).first()
    if item.project.kind != PROOF_GRADE or submission is None:
        raise ProofGradingError(["this item is not a proof"])
    max_points = submission.problem.max_points
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= max_points:
        raise ProofGradingError([f"the final score must be a number from 0 to {max_points}"])
    return annotation_services.adjudicate(item, user, value=score, rationale=rationale)
