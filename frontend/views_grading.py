"""Proof-grading pages (under /grading/): the grading page of a task, the conflict page for adjudicators,
competition leaderboards.

Proofs, statements, solutions and rubric texts are untrusted Markdown: they reach templates only through
frontend.rendering.render_markdown. Scores are always computed on the server by grading.proof_services.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotation import selectors as annotation_selectors
from annotation import services as annotation_services
from annotation.models import AnnotationProject, Item, Label, ProjectMember
from core import roles, workspaces
from grading.models import Competition, Rubric
from grading.proofs import scoring as proof_scoring
from grading.proofs import selectors as proof_selectors
from grading.proofs import services as proof_services
from grading.proofs.subject import PROOF_GRADE

from . import views_dashboard
from .rendering import readable_time, render_markdown
from .views_workspace import guidelines_panel


def _rubric_view(rubric: Rubric) -> dict:
    """The rubric with its texts rendered, for the template; the raw spec goes to the script as JSON."""
    spec = proof_scoring.rubric_from_dict(rubric.spec)
    return {
        "id": rubric.pk,
        "version": rubric.version,
        "max_points": spec.max_points,
        "chains": [
            {
                "key": chain.key,
                "title": chain.title or chain.key,
                "total": chain.total_points,
                "checkpoints": [
                    {
                        "key": cp.key,
                        "title": cp.title,
                        "points": cp.points,
                        "allow_partial": cp.allow_partial,
                        "description_html": render_markdown(cp.description) if cp.description else "",
                    }
                    for cp in chain.checkpoints
                ],
            }
            for chain in spec.chains
        ],
        "deductions": [
            {
                "key": d.key,
                "title": d.title,
                "kind": d.kind,
                "amount": d.amount,
                "effect": f"cap at {d.amount}/{spec.max_points}" if d.kind == "cap" else f"−{d.amount}",
            }
            for d in spec.deductions
        ],
        "zero_credit": [
            {"title": item.title, "description_html": render_markdown(item.description) if item.description else ""}
            for item in spec.zero_credit
        ],
    }


def _form_choices(post, rubric_view: dict) -> dict:
    chain = post.get("chain", "")
    awarded, errors = {}, []
    for rubric_chain in rubric_view["chains"]:
        if rubric_chain["key"] != chain:
            continue
        for checkpoint in rubric_chain["checkpoints"]:
            raw = post.get(f"points-{checkpoint['key']}", "0").strip() or "0"
            try:
                awarded[checkpoint["key"]] = int(raw)
            except ValueError:
                errors.append(f"checkpoint {checkpoint['key']!r}: points must be a whole number, got {raw!r}")
    justifications = {
        key.removeprefix("justification-"): value
        for key, value in post.items()
        if key.startswith("justification-") and value.strip()
    }
    return {
        "chain": chain,
        "awarded": awarded,
        "deductions": post.getlist("deduction"),
        "justifications": justifications,
        "note": post.get("note", ""),
        "errors": errors,
    }


def _initial_choices(task_label: Label | None, rubric_view: dict) -> dict:
    if task_label is not None and task_label.details:
        details = task_label.details
        return {
            "chain": details.get("chain"),
            "awarded": details.get("awarded", {}),
            "deductions": details.get("deductions", []),
            "justifications": details.get("justifications", {}),
            "note": task_label.note,
        }
    first_chain = rubric_view["chains"][0]["key"] if rubric_view["chains"] else ""
    return {"chain": first_chain, "awarded": {}, "deductions": [], "justifications": {}, "note": ""}


@login_required
def proof_home(request):
    user = request.user
    grading_projects = list(annotation_selectors.projects_for(user).filter(kind=PROOF_GRADE))
    grader_of = set(
        ProjectMember.objects.filter(
            user=user,
            is_active=True,
            role=ProjectMember.Role.ANNOTATOR,
            project__in=grading_projects,
        ).values_list("project_id", flat=True)
    )
    conflicts: list[Item] = []
    for project in grading_projects:
        if annotation_selectors.can_adjudicate(project, user):
            conflicts.extend(proof_selectors.proof_conflicts(project))
    summaries = annotation_selectors.summaries(conflicts)
    return render(
        request,
        "grading/home.html",
        {
            "grading_projects": [
                {"project": project, "can_grade": project.pk in grader_of} for project in grading_projects
            ],
            "is_researcher_view": roles.is_researcher(user),
            "conflicts": [{"item": item, "summary": summaries[item.pk]} for item in conflicts],
            "competitions": proof_selectors.competitions().filter(workspaces.condition(user, "dataset__workspace"))
            if roles.is_researcher(user)
            else [],
        },
    )


@login_required
@require_POST
def next_proof_task(request, project_id: int):
    project = get_object_or_404(AnnotationProject, pk=project_id, kind=PROOF_GRADE)
    if not annotation_services.is_member(project, request.user, ProjectMember.Role.ANNOTATOR):
        raise Http404("No such grading project.")  # its existence is not disclosed to others
    try:
        task = annotation_services.next_task(project, request.user)
    except annotation_services.WorkflowError as exc:
        messages.error(request, str(exc))
        return redirect("proof-home")
    if task is None:
        messages.info(request, f"Nothing left for you to grade in {project.name}.")
        return redirect("proof-home")
    return redirect("proof-grade", task_id=task.pk)


@login_required
@require_POST
def skip_proof_task(request, task_id: int):
    """Put a proof back for other graders and go on to the next one of the project (or home when none is left)."""
    task = proof_selectors.own_proof_task(request.user, task_id)
    if task is None:
        raise Http404("No such grading task.")
    project = task.item.project
    try:
        annotation_services.skip_task(task, request.user)
        following = annotation_services.next_task(project, request.user)
    except annotation_services.WorkflowError as exc:
        messages.error(request, f"This proof cannot be skipped: {exc}.")
        return redirect("proof-grade", task_id=task.pk)
    if following is None:
        messages.info(request, f"Skipped. Nothing else is left for you to grade in {project.name}.")
        return redirect("proof-home")
    messages.info(request, "Skipped; here is the next proof.")
    return redirect("proof-grade", task_id=following.pk)


@login_required
@require_http_methods(["GET", "POST"])
def grade_page(request, task_id: int):
    task = proof_selectors.own_proof_task(request.user, task_id)
    if task is None:
        raise Http404("No such grading task.")
    submission = proof_selectors.submission_of(task.item)
    problem = submission.problem
    label = Label.objects.filter(task=task).first()
    try:
        rubric_id = int(request.POST["rubric"]) if request.method == "POST" and request.POST.get("rubric") else None
        rubric = proof_services.proof_task_rubric(
            task, rubric_id or (label.details.get("rubric_id") if label else None)
        )
    except (ValueError, proof_services.ProofGradingError) as exc:
        messages.error(request, str(exc))
        return redirect("proof-home")
    rubric_view = _rubric_view(rubric)
    errors: list[str] = []
    choices = _initial_choices(label, rubric_view)
    if request.method == "POST":
        choices = _form_choices(request.POST, rubric_view)
        errors = choices.pop("errors")
        if not errors:
            try:
                result = proof_services.grade_task(
                    task,
                    request.user,
                    chain=choices["chain"],
                    awarded=choices["awarded"],
                    deductions=choices["deductions"],
                    justifications=choices["justifications"],
                    note=choices["note"],
                    rubric_id=rubric.pk,
                )
            except proof_services.ProofGradingError as exc:
                errors = exc.errors
            except annotation_services.WorkflowError as exc:
                errors = [str(exc)]
            else:
                messages.success(
                    request,
                    f"Saved: {result.score.total}/{rubric_view['max_points']} for proof {submission.anonymous_id}.",
                )
                return redirect(f"{reverse('proof-home')}?graded={task.pk}")
    return render(
        request,
        "grading/grade.html",
        {
            "task": task,
            "project": task.item.project,
            "submission": submission,
            "problem": problem,
            "statement_html": render_markdown(problem.statement),
            "solutions_html": [render_markdown(solution.text) for solution in problem.solutions.all()],
            "proof_html": render_markdown(submission.text),
            "rubric": rubric_view,
            "rubric_spec": rubric.spec,
            "choices": choices,
            "errors": errors,
            "already_graded": label is not None,
            "guidelines": guidelines_panel(task.item.project, request.user, back_to=request.get_full_path()),
        },
        status=400 if errors else 200,
    )


def _grade_view(label_data: dict, rubrics: dict) -> dict:
    details = label_data.get("details") or {}
    rubric = rubrics.get(details.get("rubric_id"))
    spec = proof_scoring.rubric_from_dict(rubric["spec"]) if rubric else None
    justifications = details.get("justifications", {})
    lines, deductions = [], []
    chain = spec.chain(details.get("chain", "")) if spec else None
    if chain is not None:
        for checkpoint in chain.checkpoints:
            lines.append(
                {
                    "title": checkpoint.title,
                    "points": checkpoint.points,
                    "awarded": details.get("awarded", {}).get(checkpoint.key, 0),
                    "justification": justifications.get(checkpoint.key, ""),
                }
            )
    for key in details.get("deductions", []):
        deduction = spec.deduction(key) if spec else None
        deductions.append(
            {
                "title": deduction.title if deduction else key,
                "effect": (f"cap at {deduction.amount}" if deduction.kind == "cap" else f"−{deduction.amount}")
                if deduction
                else "",
                "justification": justifications.get(key, ""),
            }
        )
    return {
        "grader": label_data.get("grader", {}).get("username", ""),
        "score": label_data.get("value"),
        "unsuitable": label_data.get("unsuitable"),
        "chain_title": (chain.title or chain.key) if chain else details.get("chain", ""),
        "rubric_version": details.get("rubric_version"),
        "lines": lines,
        "deductions": deductions,
        "overall": justifications.get(proof_scoring.OVERALL_JUSTIFICATION, ""),
        "note": label_data.get("note", ""),
        "is_tiebreak": label_data.get("is_tiebreak"),
    }


@login_required
@require_http_methods(["GET", "POST"])
def conflict_page(request, item_id: int):
    item = get_object_or_404(Item.objects.select_related("project"), pk=item_id, project__kind=PROOF_GRADE)
    submission = proof_selectors.submission_of(item)
    if not annotation_selectors.can_review(item.project, request.user):
        raise Http404("No such proof.")
    can_decide = annotation_selectors.can_adjudicate(item.project, request.user)
    errors: list[str] = []
    form = {"score": "", "rationale": ""}
    if request.method == "POST":
        if not can_decide:
            raise PermissionDenied("Only adjudicators of this project can decide.")
        form = {"score": request.POST.get("score", "").strip(), "rationale": request.POST.get("rationale", "")}
        try:
            score = float(form["score"])
        except ValueError:
            errors.append("give the final score as a number")
        else:
            try:
                proof_services.decide_proof(item, request.user, score=score, rationale=form["rationale"])
            except annotation_services.WorkflowError as exc:
                errors.extend(getattr(exc, "errors", None) or [str(exc)])
            else:
                messages.success(request, f"Final score {score:g} recorded for proof {submission.anonymous_id}.")
                return redirect("proof-conflict", item_id=item.pk)
    review = annotation_selectors.item_review(item)
    problem = submission.problem
    return render(
        request,
        "grading/conflict.html",
        {
            "item": item,
            "submission": submission,
            "review": review,
            "problem": problem,
            "statement_html": render_markdown(problem.statement),
            "proof_html": render_markdown(submission.text),
            "grades": [_grade_view(label, review["rubrics"]) for label in review["labels"]],
            "can_decide": can_decide and item.state == "needs_adjudication",
            "form": form,
            "errors": errors,
            "history": [
                {**event, "at_display": readable_time(event["at"])} for event in annotation_selectors.history(item)
            ],
        },
        status=400 if errors else 200,
    )


def _researcher_competition(request, competition_id: int) -> Competition:
    if not roles.is_researcher(request.user):
        raise PermissionDenied("Only researchers see leaderboards.")
    visible = Competition.objects.filter(workspaces.condition(request.user, "dataset__workspace"))
    return get_object_or_404(visible, pk=competition_id)


@login_required
def leaderboard_page(request, competition_id: int):
    competition = _researcher_competition(request, competition_id)
    return render(
        request,
        "grading/leaderboard.html",
        {
            **_leaderboard_context(competition),
            "projects": proof_selectors.proof_projects(competition),
        },
    )


def _leaderboard_context(competition: Competition) -> dict:
    board = proof_selectors.competition_leaderboard(competition)
    entries = [
        {**entry.as_dict(), "cells": [entry.per_problem[problem] for problem in board.problems]}
        for entry in board.entries
    ]
    return {"competition": competition, "board": board, "entries": entries}


def leaderboard_section(project: AnnotationProject) -> dict:
    """The project dashboard's leaderboard, for proof-grading projects (empty for the others)."""
    if project.kind != PROOF_GRADE:
        return {}
    competition = Competition.objects.filter(dataset_id=project.dataset_id).first()
    return _leaderboard_context(competition) if competition is not None else {}


views_dashboard.register_section("grading/dashboard_section.html", leaderboard_section)


@login_required
def leaderboard_csv(request, competition_id: int):
    competition = _researcher_competition(request, competition_id)
    board = proof_selectors.competition_leaderboard(competition)
    response = HttpResponse(proof_selectors.leaderboard_csv_text(board), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="leaderboard-{competition.pk}.csv"'
    return response
