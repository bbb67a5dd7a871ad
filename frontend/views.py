"""Server-rendered pages. Untrusted text (questions, references, completions) only reaches a template
through frontend.rendering, which returns sanitized HTML."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import render

from core import roles, workspaces
from grading.models import Competition

from . import access, selectors
from .rendering import final_answer_span, render_answer, render_completion, render_markdown


def _require_researcher(request) -> None:
    if not roles.is_researcher(request.user):
        raise PermissionDenied("Only researchers can browse benchmark data.")


@login_required
def home(request):
    user = request.user
    context = {"annotator_projects": selectors.annotator_projects(user)}
    if roles.is_adjudicator(user):
        projects = selectors.adjudicator_projects(user)
        context["adjudicator_projects"] = projects
        context["awaiting_adjudication"] = selectors.items_awaiting_adjudication(projects)
    if roles.is_researcher(user):
        context["workspaces"] = selectors.researcher_workspaces(user)
        context["datasets"] = selectors.datasets_with_counts(user)
        context["totals"] = selectors.dataset_totals(user)
        context["projects"] = selectors.all_projects(user)
    return render(request, "frontend/home.html", context)


@login_required
def dataset_detail(request, dataset_id: int):
    dataset = access.dataset(request, dataset_id)
    page = Paginator(selectors.dataset_questions(dataset), 25).get_page(request.GET.get("page"))
    competition = Competition.objects.filter(dataset=dataset).first()
    return render(
        request, "frontend/dataset_detail.html", {"dataset": dataset, "page": page, "competition": competition}
    )


@login_required
def completion_detail(request, completion_id: int):
    _require_researcher(request)
    completion = selectors.completion_for_display(completion_id)
    if completion is None or not workspaces.can_research(request.user, completion.question.dataset.workspace_id):
        raise Http404("No such completion.")
    question = completion.question
    span = final_answer_span(completion.text)
    references = [
        {
            "reference": reference,
            "final_answer_html": render_answer(reference.final_answer) if reference.final_answer else "",
            "solution_html": render_markdown(reference.solution) if reference.solution else "",
        }
        for reference in question.references.all()
    ]
    return render(
        request,
        "frontend/completion_detail.html",
        {
            "completion": completion,
            "question": question,
            "question_html": render_markdown(question.text),
            "references": references,
            "completion_html": render_completion(completion.text, span),
            "has_final_answer": span is not None,
            "prior_labels": list(completion.prior_labels.all()),
        },
    )
