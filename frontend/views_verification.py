"""Researcher pages of verification: runs over a dataset or a project, and selections for annotation.

The project dashboard gets a section with the project's runs; a dataset has its own page with its runs and the
selection form; a selection's report has a page of its own. Rows and actions are the shared job ones.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Q
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.models import AnnotationProject
from core import workspaces
from grading.models import SelectionRecord, VerificationRun
from verifybench import selectors as verifybench_selectors
from verifybench.label_rules import CORRECTNESS
from verifybench.models import Dataset

from . import access, views_dashboard
from .jobs.forms import RunForm, SelectionForm, runnable_verifiers
from .jobs.presenters import job_row
from .jobs.views import require_researcher

RUNS_SHOWN = 20
PICKS_PER_PAGE = 50
RUN_SECTION_ANCHOR = "verification-runs"


def runs_of_project(project: AnnotationProject):
    return (
        VerificationRun.objects.filter(Q(project=project) | Q(dataset_id=project.dataset_id))
        .select_related("verifier", "project", "created_by")
        .order_by("-created_at", "-id")
    )


def runs_of_dataset(dataset: Dataset):
    return (
        VerificationRun.objects.filter(Q(dataset=dataset) | Q(project__dataset=dataset))
        .select_related("verifier", "project", "created_by")
        .order_by("-created_at", "-id")
    )


def runs_section(project: AnnotationProject) -> dict:
    """Verification runs of a correctness project (verifiers judge completions: a proof-grading project has none)."""
    if project.kind != CORRECTNESS:
        return {}
    rows = [job_row(run) for run in runs_of_project(project)[:RUNS_SHOWN]]
    return {
        "rows": rows,
        "form": RunForm(dataset=project.dataset, project=project, prefix="run"),
        "has_verifiers": runnable_verifiers(None, project.dataset).exists(),
        "start_url": reverse("jobs-project-run-new", args=[project.pk]),
        "back_url": reverse("dashboard-project", args=[project.pk]) + f"#{RUN_SECTION_ANCHOR}",
    }


views_dashboard.register_section("jobs/runs_section.html", runs_section)


def _researcher_project(request, project_id: int) -> AnnotationProject:
    return access.project(request, project_id)


@login_required
@require_http_methods(["GET", "POST"])
def project_run_new(request, project_id: int):
    project = _researcher_project(request, project_id)
    form = RunForm(request.POST or None, dataset=project.dataset, project=project, prefix="run", user=request.user)
    if request.method == "POST" and form.is_valid():
        run = form.start(request.user)
        if run is not None:
            messages.success(request, f"Verification run {run.pk} with {run.verifier.name} started.")
            return redirect(reverse("dashboard-project", args=[project.pk]) + f"#{RUN_SECTION_ANCHOR}")
    return render(
        request,
        "jobs/run_new.html",
        {
            "form": form,
            "project": project,
            "dataset": project.dataset,
            "action": reverse("jobs-project-run-new", args=[project.pk]),
            "back_url": reverse("dashboard-project", args=[project.pk]),
        },
        status=400 if form.errors else 200,
    )


# ---------------------------------------------------------------- a dataset's jobs page


def _dataset_page(request, dataset: Dataset, *, run_form=None, selection_form=None, status: int = 200):
    selections = (
        SelectionRecord.objects.filter(dataset=dataset)
        .select_related("project", "created_by")
        .prefetch_related("verifiers")
        .order_by("-created_at", "-id")
    )
    return render(
        request,
        "jobs/dataset_jobs.html",
        {
            "dataset": dataset,
            "rows": [job_row(run) for run in runs_of_dataset(dataset)[:RUNS_SHOWN]],
            "run_form": run_form or RunForm(dataset=dataset, prefix="run", user=request.user),
            "selection_form": selection_form or SelectionForm(dataset=dataset, prefix="select", user=request.user),
            "has_verifiers": runnable_verifiers(request.user, dataset).exists(),
            "selections": selections[:RUNS_SHOWN],
            "back_url": reverse("jobs-dataset", args=[dataset.pk]),
        },
        status=status,
    )


def _researcher_dataset(request, dataset_id: int) -> Dataset:
    return access.dataset(request, dataset_id)


@login_required
@require_GET
def dataset_jobs(request, dataset_id: int):
    return _dataset_page(request, _researcher_dataset(request, dataset_id))


@login_required
@require_POST
def dataset_run_new(request, dataset_id: int):
    dataset = _researcher_dataset(request, dataset_id)
    form = RunForm(request.POST, dataset=dataset, prefix="run", user=request.user)
    if form.is_valid():
        run = form.start(request.user)
        if run is not None:
            messages.success(request, f"Verification run {run.pk} with {run.verifier.name} started.")
            return redirect(reverse("jobs-dataset", args=[dataset.pk]) + f"#{RUN_SECTION_ANCHOR}")
    return _dataset_page(request, dataset, run_form=form, status=400)


@login_required
@require_POST
def dataset_select(request, dataset_id: int):
    dataset = _researcher_dataset(request, dataset_id)
    form = SelectionForm(request.POST, dataset=dataset, prefix="select", user=request.user)
    if form.is_valid():
        made = form.select(request.user)
        if made is not None:
            project, record = made
            messages.success(request, f"Project {project.name} created with {record.picked} completions.")
            return redirect(reverse("jobs-selection", args=[record.pk]))
    return _dataset_page(request, dataset, selection_form=form, status=400)


# ---------------------------------------------------------------- a selection's report


def _shown(value) -> str:
    return ", ".join(str(part) for part in value) if isinstance(value, (list, tuple)) else str(value)


def _report_rows(record: SelectionRecord) -> dict:
    report = record.report or {}
    parameters = report.get("parameters") or record.parameters or {}
    strata_fields = parameters.get("strata") or []
    return {
        "parameters": [
            (key.replace("_", " "), _shown(value))
            for key, value in parameters.items()
            if key not in ("filters", "verifier", "verifiers", "seed")
        ],
        "filters": [
            (key.replace("_", " "), _shown(values))
            for key, values in (parameters.get("filters") or {}).items()
            if values
        ],
        "shortfalls": report.get("shortfalls") or [],
        "strata_fields": [name.replace("_", " ") for name in strata_fields],
        "strata": [
            {
                "values": [row.get(name) or "—" for name in strata_fields],
                "available": row.get("available"),
                "allocated": row.get("allocated"),
            }
            for row in report.get("strata") or []
        ],
        "vote_splits": list((report.get("vote_splits") or {}).items()),
    }


@login_required
@require_GET
def selection_report(request, selection_id: int):
    require_researcher(request.user)
    record = get_object_or_404(
        SelectionRecord.objects.filter(workspaces.condition(request.user, "dataset__workspace"))
        .select_related("project", "dataset", "created_by")
        .prefetch_related("verifiers"),
        pk=selection_id,
    )
    picks = (record.report or {}).get("picks") or []
    page = Paginator(picks, PICKS_PER_PAGE).get_page(request.GET.get("page"))
    rows = _report_rows(record)
    question_ids = [pick.get("question_id") for pick in page.object_list]
    question_ids += [row.get("question_id") for row in rows["shortfalls"]]
    questions, completions = verifybench_selectors.external_ids(
        [qid for qid in question_ids if isinstance(qid, int)],
        [pick.get("completion_id") for pick in page.object_list if isinstance(pick.get("completion_id"), int)],
    )
    picked = [
        {
            **pick,
            "question_external_id": questions.get(pick.get("question_id"), pick.get("question_id")),
            "completion_external_id": completions.get(pick.get("completion_id"), pick.get("completion_id")),
        }
        for pick in page.object_list
    ]
    rows["shortfalls"] = [
        {**row, "question_external_id": questions.get(row.get("question_id"), row.get("question_id"))}
        for row in rows["shortfalls"]
    ]
    return render(
        request,
        "jobs/selection_report.html",
        {
            "record": record,
            "report": record.report or {},
            "verifiers": sorted(config.name for config in record.verifiers.all()),
            "page": page,
            "picks": picked,
            **rows,
        },
    )
