"""A competition's page for researchers (under /grading/competitions/): its problems with their rubrics and proofs,
its grading projects, and the form that makes a new proof-grading project with its graders."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation import services as annotation_services
from core import roles, workspaces
from grading.models import Competition, ProofProblem
from grading.proofs import selectors as proof_selectors
from grading.proofs import services as proof_services

from .rendering import render_markdown


def _users_with_role(role: str):
    return get_user_model().objects.filter(groups__name=role, is_active=True).order_by("username").distinct()


class ProofProjectForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="Shown to graders and on the dashboard.")
    threshold = forms.FloatField(
        min_value=0,
        max_value=100,
        initial=proof_services.DEFAULT_THRESHOLD,
        label="Agreement threshold (points)",
        help_text="Two grades this close agree (the final score is their mean); further apart, a third grader is asked.",
    )
    problems = forms.ModelMultipleChoiceField(
        queryset=ProofProblem.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        help_text="The problems whose proofs the project grades.",
    )
    graders = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Each proof goes to two of them, and to a third when their scores disagree.",
    )
    adjudicators = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="They decide the proofs whose three grades still disagree.",
    )

    def clean_graders(self):
        graders = self.cleaned_data["graders"]
        if len(graders) == 1:
            raise forms.ValidationError(
                "Each proof is graded by two graders: tick at least two, or none and add them later on the project's "
                "members page."
            )
        return graders

    def __init__(self, *args, competition: Competition, **kwargs):
        super().__init__(*args, **kwargs)
        problems = competition.problems.order_by("position", "problem_idx")
        self.fields["problems"].queryset = problems
        self.fields["problems"].label_from_instance = lambda problem: f"Problem {problem.problem_idx}"
        self.fields["graders"].queryset = _users_with_role(roles.ANNOTATOR)
        self.fields["adjudicators"].queryset = _users_with_role(roles.ADJUDICATOR)
        if not self.is_bound:
            self.initial["problems"] = list(problems.values_list("pk", flat=True))
            self.initial["name"] = f"{competition.name} grading"


def _competition(request, competition_id: int) -> Competition:
    if not roles.is_researcher(request.user):
        raise PermissionDenied("Only researchers see competitions.")
    visible = Competition.objects.filter(workspaces.condition(request.user, "dataset__workspace"))
    return get_object_or_404(visible.select_related("dataset"), pk=competition_id)


@login_required
@require_http_methods(["GET", "POST"])
def competition_page(request, competition_id: int):
    competition = _competition(request, competition_id)
    form = ProofProjectForm(request.POST or None, competition=competition)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            with transaction.atomic():
                project = proof_services.create_proof_project(
                    name=data["name"],
                    competition=competition,
                    problems=list(data["problems"]),
                    threshold=data["threshold"],
                    created_by=request.user,
                    graders=data["graders"],
                    adjudicators=data["adjudicators"],
                )
        except (proof_services.ProofGradingError, annotation_services.WorkflowError) as exc:
            form.add_error(None, str(exc))
        else:
            items = project.items.count()
            messages.success(
                request,
                f"Grading project {project.name} created with {items} proof{'s' if items != 1 else ''} "
                f"and {len(data['graders'])} grader{'s' if len(data['graders']) != 1 else ''}.",
            )
            return redirect(reverse("dashboard-project", args=[project.pk]))
    overview = proof_selectors.competition_overview(competition)
    for row in overview:
        row["statement_html"] = render_markdown(row["problem"].statement)
    return render(
        request,
        "grading/competition.html",
        {
            "competition": competition,
            "problems": overview,
            "proof_count": sum(row["proofs"] for row in overview),
            "projects": proof_selectors.proof_projects(competition),
            "form": form,
        },
        status=400 if form.errors else 200,
    )
