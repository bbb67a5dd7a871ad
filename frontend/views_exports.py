"""Researcher pages of exports: the project dashboard's export section, starting an export, downloading a bundle.
Rows and actions are the shared job ones."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from annotation import aggregates, workflow
from annotation import selectors as annotation_selectors
from annotation.models import AnnotationProject
from core import workspaces
from reports import services as export_services
from reports.models import ExportJob

from . import access, views_dashboard
from .jobs.forms import ExportForm
from .jobs.presenters import job_row
from .jobs.views import require_researcher

EXPORTS_SHOWN = 20
EXPORT_SECTION_ANCHOR = "exports"


# Up to this many resolved items the dashboard's export form counts each format's rows as it is shown (tens of
# milliseconds); above, the export page counts them (about 2 s at 1,000,000 items), so the dashboard stays fast.
DASHBOARD_ROW_COUNT_MAX_RESOLVED = 50_000


def exports_section(project: AnnotationProject) -> dict:
    jobs = ExportJob.objects.filter(project=project).select_related("created_by").order_by("-created_at", "-id")
    states = annotation_selectors.state_counts(project, aggregates.project_tallies(project, ("s|",)))
    resolved = states["by_state"].get(workflow.RESOLVED, 0)
    form = ExportForm(project=project, prefix="export", count_rows=resolved <= DASHBOARD_ROW_COUNT_MAX_RESOLVED)
    form.resolved_items = resolved
    form.count_url = reverse("jobs-project-export-new", args=[project.pk])
    return {
        "rows": [job_row(job) for job in jobs[:EXPORTS_SHOWN]],
        "form": form,
        "has_formats": bool(form.formats),
        "start_url": reverse("jobs-project-export-new", args=[project.pk]),
        "back_url": reverse("dashboard-project", args=[project.pk]) + f"#{EXPORT_SECTION_ANCHOR}",
    }


views_dashboard.register_section("jobs/exports_section.html", exports_section)


def _researcher_project(request, project_id: int) -> AnnotationProject:
    return access.project(request, project_id)


@login_required
@require_http_methods(["GET", "POST"])
def project_export_new(request, project_id: int):
    project = _researcher_project(request, project_id)
    form = ExportForm(request.POST or None, project=project, prefix="export")
    if request.method == "POST" and form.is_valid():
        job = form.start(request.user)
        if job is not None:
            messages.success(request, f"Export {job.pk} ({job.format}) started.")
            return redirect(reverse("dashboard-project", args=[project.pk]) + f"#{EXPORT_SECTION_ANCHOR}")
    return render(
        request, "jobs/export_new.html", {"form": form, "project": project}, status=400 if form.errors else 200
    )


def _export_home(job: ExportJob) -> str:
    return reverse("dashboard-project", args=[job.project_id]) + f"#{EXPORT_SECTION_ANCHOR}"


@login_required
@require_GET
def export_download(request, export_id: int):
    require_researcher(request.user)
    job = get_object_or_404(
        ExportJob.objects.filter(workspaces.condition(request.user, "project__dataset__workspace")), pk=export_id
    )
    path = export_services.export_bundle(job)
    if path is None:
        if job.status == ExportJob.Status.SUCCEEDED:
            reason = "its bundle file is no longer on the server; start the export again"
        elif job.is_finished:
            reason = f"it {job.get_status_display().lower()} without a bundle"
        else:
            reason = f"it is {job.get_status_display().lower()}; download it once it has succeeded"
        messages.error(request, f"Export {job.pk} cannot be downloaded: {reason}.")
        return redirect(_export_home(job))
    return FileResponse(open(path, "rb"), as_attachment=True, filename=path.name, content_type="application/zip")
