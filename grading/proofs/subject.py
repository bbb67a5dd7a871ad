"""The `proof_grade` subject kind: a model proof graded against its problem's rubric.

Registered with `core.subjects` from GradingConfig.ready(). A grader sees the problem, the rubric version to grade
with and the proof under its anonymous id, never the model's name; reviewers see every grade with its choices and
justifications. A grade is given against the rubric (POST /api/grading/tasks/{id}/grade/), never as a bare total.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core import subjects
from core.labels import ScoreRules
from core.search import text_matches
from core.subjects import SubjectKind, ViewContext

from .models import ProofSubmission, Rubric
from .selectors import PROOF_GRADE, problem_dict, rubric_dict


class ProofGradeRules(ScoreRules):
    name = PROOF_GRADE


def _submission(submission_id: int) -> ProofSubmission:
    return ProofSubmission.objects.select_related("problem__competition").get(pk=submission_id)


def grade_dict(label: Mapping, *, with_grader: bool) -> dict:
    """A grade as graders and reviewers see it, from a label as the workflow gives it."""
    data = {
        "score": label["value"],
        "details": label["details"],
        "note": label["note"],
        "is_tiebreak": label["is_tiebreak"],
        "created_at": label["created_at"],
    }
    if with_grader:
        data["grader"] = dict(label["annotator"])
    return data


def task_view(submission_id: int, context: ViewContext) -> dict:
    submission = _submission(submission_id)
    problem = submission.problem
    label = context.my_label
    rubric = None
    if label is not None and (label.get("details") or {}).get("rubric_id"):
        rubric = Rubric.objects.filter(pk=label["details"]["rubric_id"]).first()
    rubric = rubric or problem.latest_rubric()
    return {
        "problem": problem_dict(problem),
        "rubric": rubric_dict(rubric),
        "submission": {"anonymous_id": submission.anonymous_id, "text": submission.text},
        "my_grade": grade_dict(label, with_grader=False) if label is not None else None,
    }


def review_view(submission_id: int, context: ViewContext) -> dict:
    """Every grade side by side with its justifications; the proof stays anonymous here too."""
    submission = _submission(submission_id)
    rubric_ids = {(label.get("details") or {}).get("rubric_id") for label in context.labels}
    rubrics = {rubric.pk: rubric_dict(rubric) for rubric in Rubric.objects.filter(pk__in=rubric_ids - {None})}
    return {
        "project": {**context.project, "agreement_threshold": context.threshold},
        "problem": problem_dict(submission.problem),
        "submission": {"anonymous_id": submission.anonymous_id, "text": submission.text},
        "rubrics": rubrics,
        "labels": [
            {
                **grade_dict(label, with_grader=True),
                "value": label["value"],
                "unsuitable": label["unsuitable"],
                "unsuitable_reason": label["unsuitable_reason"],
            }
            for label in context.labels
        ],
    }


def summaries(ids: Sequence[int]) -> dict[int, dict]:
    rows = ProofSubmission.objects.filter(pk__in=list(ids)).select_related("problem__competition")
    return {
        submission.pk: {
            "name": submission.anonymous_id,
            "question_external_id": submission.problem.problem_idx,
            "title": str(submission.problem),
            "detail": "proof",
        }
        for submission in rows
    }


def filter_submission_ids(dataset_id: int, *, text: str = ""):
    """Proofs by a search in their text or their problem's statement (never by model: proofs stay anonymous)."""
    proofs = ProofSubmission.objects.all()
    return [proofs.filter(text_matches("text", text)), proofs.filter(text_matches("problem__statement", text))]


PROOF_GRADE_KIND = SubjectKind(
    name=PROOF_GRADE,
    title="Proof grade",
    rules=ProofGradeRules(),
    subject_ids=None,
    answer_types=lambda ids: {},
    task_view=task_view,
    review_view=review_view,
    summaries=summaries,
    load=lambda pk: ProofSubmission.objects.select_related("problem").get(pk=pk),
    submit_elsewhere="a proof is graded against its rubric: post your choices to /api/grading/tasks/{task_id}/grade/; "
    "a bare total is not accepted",
    creatable_from_dataset=False,
    filter_subject_ids=filter_submission_ids,
    filter_criteria=("text",),
    extra={
        "subject": "proof",
        "created_from": "Proof-grading projects are created from a competition's proofs by the grading app: on the "
        "proof-grading pages or through /api/grading/competitions/{id}/projects/.",
    },
)


def verdicts_on(kind_name: str, subject_id: int) -> list[dict]:
    """The automatic verdicts on a completion subject, for the people allowed to see them."""
    from grading.models import Verdict

    if subjects.get(kind_name).extra.get("subject") != "completion":
        return []
    verdicts = Verdict.objects.filter(completion_id=subject_id).select_related("verifier").order_by("verifier__name")
    return [
        {
            "verifier": verdict.verifier.name,
            "kind": verdict.verifier.kind,
            "status": verdict.status,
            "extracted_answer": verdict.extracted_answer,
            "explanation": verdict.explanation or verdict.reason,
        }
        for verdict in verdicts
    ]


def votes_on(kind_name: str, subject_ids: list[int]) -> dict[int, list[tuple[str, str]]]:
    """(verifier, status) of every verdict on these completion subjects, for annotator models' weak votes."""
    from grading.models import Verdict

    if subjects.get(kind_name).extra.get("subject") != "completion" or not subject_ids:
        return {}
    found: dict[int, list[tuple[str, str]]] = {}
    rows = Verdict.objects.filter(completion_id__in=subject_ids).order_by("completion_id", "verifier__name")
    for completion_id, verifier, status in rows.values_list("completion_id", "verifier__name", "status"):
        found.setdefault(completion_id, []).append((verifier, status))
    return found


def register() -> None:
    subjects.register(PROOF_GRADE_KIND)
    subjects.register_verdict_source(verdicts_on)
    subjects.register_vote_source(votes_on)
