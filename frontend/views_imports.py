"""The import page: upload a file (drag and drop or a file picker), which a worker imports as a background job; the
job's page shows its progress and then its line-numbered report."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from core import workspaces
from core.models import Workspace
from verifybench import imports, services
from verifybench.importing.sources import FILE_TYPES
from verifybench.models import Dataset, ImportJob

from . import access
from .jobs.presenters import job_row, register_parts
from .jobs.views import require_researcher

RECENT_IMPORTS = 10


class ImportForm(forms.Form):
    file = forms.FileField(help_text="JSON Lines, CSV with a header row, or Parquet: one completion per row.")
    dataset = forms.CharField(max_length=200, help_text="An existing dataset, or the name of a new one.")
    workspace = forms.ModelChoiceField(
        queryset=Workspace.objects.none(),
        required=False,
        help_text="The team a new dataset belongs to (yours, when you have only one; an existing dataset stays in its "
        "own).",
    )
    format = forms.ChoiceField(required=False, help_text="Detected from the fields of the first row when left open.")
    file_type = forms.ChoiceField(
        required=False, choices=[("", "Detect from the file"), *((name, name) for name in FILE_TYPES)]
    )
    skip_invalid = forms.BooleanField(
        required=False,
        label="Skip invalid rows",
        help_text="Import the valid rows and keep the others, with their reasons, in a file to download. Without "
        "it, one invalid row rejects the whole file and nothing is written.",
    )

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["workspace"].queryset = workspaces.workspaces_for(user)
        self.fields["format"].choices = [
            ("", "Detect from the file"),
            *((name, name) for name in services.import_format_names()),
        ]
        self.fields["dataset"].widget.attrs["list"] = "dataset-names"
        self._user = user

    def clean(self):
        cleaned = super().clean()
        # a file for an existing dataset (more completions, its verdicts, more proofs) goes where the dataset is
        existing = Dataset.objects.filter(name=(cleaned.get("dataset") or "").strip()).only("workspace_id").first()
        if existing is not None and workspaces.can_research(self._user, existing.workspace_id):
            cleaned["workspace"] = existing.workspace
        elif not cleaned.get("workspace"):
            cleaned["workspace"] = workspaces.default_for(self._user)
            if cleaned["workspace"] is None:
                self.add_error("workspace", "Choose the workspace a new dataset belongs to.")
        return cleaned


@login_required
@require_http_methods(["GET", "POST"])
def import_page(request):
    require_researcher(request.user)
    chosen = workspaces.default_for(request.user)
    form = ImportForm(
        request.POST or None,
        request.FILES or None,
        user=request.user,
        initial={"dataset": request.GET.get("dataset", ""), "workspace": chosen.pk if chosen else None},
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            job = imports.create_import(
                uploaded=data["file"],
                dataset_name=data["dataset"],
                workspace=data["workspace"],
                fmt=data["format"],
                file_type=data["file_type"],
                skip_invalid=data["skip_invalid"],
                created_by=request.user,
            )
        except (imports.UploadTooLarge, services.ImportRequestError) as exc:
            form.add_error("file", str(exc))
        else:
            messages.success(
                request, f"Import {job.pk} of {job.source_name} is queued; its progress and report are below."
            )
            return redirect(reverse("job-detail", args=["import", job.pk]))
    recent = (
        ImportJob.objects.filter(workspaces.condition(request.user))
        .select_related("created_by", "dataset")
        .order_by("-created_at", "-id")
    )
    return render(
        request,
        "imports/import.html",
        {
            "form": form,
            "dataset_names": access.datasets(request.user).order_by("name").values_list("name", flat=True),
            "rows": [job_row(job) for job in recent[:RECENT_IMPORTS]],
            "back_url": reverse("dataset-import"),
            "formats": services.import_format_names(),
        },
        status=400 if form.errors else 200,
    )


def _import_parts(job: ImportJob) -> dict:
    report = job.report or {}
    return {
        "what_template": "jobs/kinds/import_what.html",
        "result_template": "jobs/kinds/import_result.html",
        "report": report,
        "errors": (report.get("errors") or [])[:200],
        "conflicts": (report.get("conflicts") or [])[:200],
        "api_url": reverse("import-detail", args=[job.pk]),
        "home_url": reverse("dataset-import"),
        "links": [{"label": "Skipped rows", "url": reverse("import-rejects", args=[job.pk]), "download": True}]
        if job.rejects_path
        else [],
        "unit": "bytes",
    }


register_parts("import", _import_parts)
