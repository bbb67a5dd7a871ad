"""Researcher pages: the project list, project creation and a project's dashboard.

The dashboard is a list of sections, each a template plus a function building its context from the project.
More sections (verification runs, meta-evaluation) plug in with `register_section`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from annotation import aggregates, aggregation, selectors, services, setup
from annotation.models import AnnotationProject, AnnotatorModelFit, Item, ProjectMember, ProjectSetupJob
from core import roles, subjects
from verifybench.models import Dataset

from . import access, charts
from . import selectors as page_selectors
from .jobs.presenters import register_parts


def _require_researcher(user) -> None:
    if not roles.is_researcher(user):
        raise Http404("No such page.")


# ---------------------------------------------------------------- project list and creation


@login_required
@require_GET
def project_list(request):
    _require_researcher(request.user)
    return render(request, "dashboard/project_list.html", {"projects": page_selectors.all_projects(request.user)})


def _users_with_role(role: str):
    return get_user_model().objects.filter(groups__name=role, is_active=True).order_by("username").distinct()


class ProjectForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="Shown to annotators and on the dashboard.")
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.order_by("name"), empty_label=None)
    kind = forms.ChoiceField()
    labels_per_item = forms.IntegerField(
        min_value=1, max_value=10, initial=2, help_text="Independent labels before an item can resolve by agreement."
    )
    tiebreak_annotators = forms.IntegerField(
        min_value=0,
        max_value=5,
        initial=1,
        help_text="Extra annotators asked when the first labels disagree; 0 sends disagreements to adjudication.",
    )
    show_model_names = forms.BooleanField(required=False, help_text="Annotators see which model wrote a completion.")
    lease_minutes = forms.IntegerField(
        min_value=1,
        max_value=1440,
        initial=30,
        help_text="How long an annotator holds an item before it returns to the pool.",
    )
    annotators = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.none(), required=False, widget=forms.CheckboxSelectMultiple
    )
    adjudicators = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.none(), required=False, widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = access.datasets(user).order_by("name")
        self.fields["kind"].choices = [
            (kind.name, kind.extra.get("form_title", kind.title))
            for kind in subjects.all_kinds()
            if kind.creatable_from_dataset
        ]
        self.fields["annotators"].queryset = _users_with_role(roles.ANNOTATOR)
        self.fields["adjudicators"].queryset = _users_with_role(roles.ADJUDICATOR)


@login_required
@require_http_methods(["GET", "POST"])
def project_new(request):
    _require_researcher(request.user)
    form = ProjectForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            with transaction.atomic():
                project, job = setup.start_project(
                    dataset=data["dataset"],
                    kind=data["kind"],
                    name=data["name"],
                    created_by=request.user,
                    labels_per_item=data["labels_per_item"],
                    tiebreak_annotators=data["tiebreak_annotators"],
                    show_model_names=data["show_model_names"],
                    lease_minutes=data["lease_minutes"],
                )
                for user in data["annotators"]:
                    services.add_member(project, user, ProjectMember.Role.ANNOTATOR)
                for user in data["adjudicators"]:
                    services.add_member(project, user, ProjectMember.Role.ADJUDICATOR)
        except services.WorkflowError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Project {project.name} created; its items are being created.")
            return redirect(reverse("job-detail", args=[setup.SETUP.name, job.pk]))
    return render(request, "dashboard/project_new.html", {"form": form}, status=400 if form.errors else 200)


# ---------------------------------------------------------------- dashboard sections


@dataclass(frozen=True)
class Section:
    template: str
    build: Callable[[AnnotationProject], dict]


SECTIONS: list[Section] = []


def register_section(template: str, build: Callable[[AnnotationProject], dict]) -> None:
    """Add a section to every project dashboard: `build(project)` returns the context its template reads."""
    SECTIONS.append(Section(template, build))


def progress_section(project: AnnotationProject) -> dict:
    counts = selectors.state_counts(project)
    state_names = dict(Item.State.choices)
    resolution_names = dict(Item.Resolution.choices)
    total = counts["items"] or 1
    return {
        "counts": counts,
        "states": [
            {"state": state, "name": state_names[state], "count": count, "share": count / total}
            for state, count in counts["by_state"].items()
        ],
        "resolutions": [
            {"resolution": resolution, "name": resolution_names[resolution], "count": count}
            for resolution, count in counts["by_resolution"].items()
        ],
    }


def agreement_section(project: AnnotationProject) -> dict:
    by_type = selectors.agreement_by_answer_type(project)
    rows = [
        {
            "answer_type": answer_type,
            "raw_agreement": figures["raw_agreement"],
            "cohens_kappa": figures["cohens_kappa"],
            "krippendorff_alpha": figures["krippendorff_alpha"],
            "items_compared": figures["items_compared"],
        }
        for answer_type, figures in by_type.items()
    ]
    return {
        "agreement": selectors.agreement_figures(project),
        "by_type": rows,
        "by_type_chart": charts.horizontal_bars(rows, category="answer_type", value="raw_agreement") if rows else None,
    }


def timeline_section(project: AnnotationProject) -> dict:
    days = selectors.progress_over_time(project, days=30)
    return {
        "days": days,
        "timeline_chart": charts.grouped_bars(days, category="day", series=("labels", "resolved")) if days else None,
    }


def annotators_section(project: AnnotationProject) -> dict:
    """The per-annotator table; with the annotator model, each annotator's estimated accuracy (overall and per answer
    type, from the latest fit) beside the gold accuracy."""
    rows = selectors.annotator_table(project)
    fit = aggregation.latest_fit(project) if not project.judgement.numeric else None
    active = (
        AnnotatorModelFit.objects.filter(project=project, status__in=aggregation.ACTIVE).order_by("-id").first()
        if not project.judgement.numeric
        else None
    )
    estimates = (fit.summary or {}).get("annotators", {}) if fit is not None else {}
    if estimates:
        names = dict(
            get_user_model().objects.filter(pk__in=[int(pk) for pk in estimates]).values_list("username", "pk")
        )
        for row in rows:
            estimate = estimates.get(str(names.get(row["annotator"])))
            if estimate:
                row["model"] = {
                    **estimate,
                    "by_type": [
                        {"answer_type": key, **value} for key, value in sorted(estimate.get("by_type", {}).items())
                    ],
                }
    return {
        "annotators": rows,
        "model_fit": fit,
        "model_fit_active": active,
        "model_offered": not project.judgement.numeric,
        "aggregation": project.get_aggregation_display(),
    }


register_section("dashboard/sections/progress.html", progress_section)
register_section("dashboard/sections/agreement.html", agreement_section)
register_section("dashboard/sections/timeline.html", timeline_section)
register_section("dashboard/sections/annotators.html", annotators_section)


@login_required
@require_http_methods(["POST"])
def refit_model(request, project_id: int):
    """Queue a refit of the project's annotator model (a background job) and go back to the dashboard."""
    project = access.project(request, project_id)
    try:
        fit = aggregation.request_refit(project, actor=request.user)
    except aggregation.RefitRefused as exc:
        messages.error(request, f"No refit: {exc}.")
    else:
        messages.success(request, f"Annotator model fit {fit.pk} is {fit.get_status_display().lower()}.")
    return redirect(reverse("dashboard-project", args=[project.pk]) + "#annotators-heading")


def _fit_parts(fit: AnnotatorModelFit) -> dict:
    summary = fit.summary or {}
    return {
        "what_template": "jobs/kinds/model_fit_what.html",
        "result_template": "jobs/kinds/model_fit_result.html",
        "project": fit.project,
        "summary": summary,
        "annotator_count": len(summary.get("annotators", {})),
        "api_url": f"/api/jobs/annotator-model-{fit.pk}/",
        "home_url": reverse("dashboard-project", args=[fit.project_id]) + "#annotators-heading",
        "links": [],
        "unit": "steps",
    }


register_parts("annotator-model", _fit_parts)


def _setup_parts(job: ProjectSetupJob) -> dict:
    project_url = reverse("dashboard-project", args=[job.project_id])
    succeeded = job.status == job.Status.SUCCEEDED
    return {
        "what_template": "jobs/kinds/project_setup_what.html",
        "result_template": "jobs/kinds/project_setup_result.html",
        "project": job.project,
        "succeeded": succeeded,
        "api_url": f"/api/jobs/project-setup-{job.pk}/",
        "home_url": project_url,
        # the job's page moves on to the project once its items are all there
        "done_url": project_url,
        "links": [{"label": "Open project", "url": project_url, "download": False}] if succeeded else [],
        "unit": "items",
    }


register_parts("project-setup", _setup_parts)


@login_required
@require_GET
def dashboard(request, project_id: int):
    project = AnnotationProject.objects.select_related("dataset").filter(pk=project_id).first()
    if project is None or not selectors.can_review(project, request.user):
        raise Http404("No such project.")
    members = selectors.active_members(project)
    aggregates.read_once(project)  # every section's figures from one read of the tallies
    sections = [{"template": section.template, **section.build(project)} for section in SECTIONS]
    return render(
        request,
        "dashboard/dashboard.html",
        {
            "project": project,
            "members": members,
            "sections": sections,
            "setup_job": setup.active_setup(project),
            "can_adjudicate": selectors.can_adjudicate(project, request.user),
        },
    )
