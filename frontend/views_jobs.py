"""Researcher pages for long jobs: verification runs, selections for annotation and export bundles.

Every action is a plain POST form with CSRF that works without JavaScript. `src/jobs.js` only polls the JSON APIs
(`/api/grading/runs/<id>/`, `/api/exports/<id>/`) while a job is queued or running, to move its progress bar.
The project dashboard gets two sections (verification runs, exports); a dataset has its own jobs page with runs and
the selection form; a selection's report has a page of its own.
"""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.models import AnnotationProject
from core import roles, taxonomy
from grading import runs, selection
from grading import selectors as grading_selectors
from grading import services as grading_services
from grading.models import SelectionRecord, VerificationRun, VerifierConfig
from reports import services as export_services
from reports.exports import COMMON_OPTIONS, FILE_TYPES, export_format_names, get_export_format
from reports.models import ExportJob
from verifybench.label_rules import CORRECTNESS
from verifybench.models import Completion, Dataset, Domain

from . import views_dashboard

RUNS_SHOWN = 20
EXPORTS_SHOWN = 20
PICKS_PER_PAGE = 50
ACTIVE = ("queued", "running")
RUN_SECTION_ANCHOR = "verification-runs"
EXPORT_SECTION_ANCHOR = "exports"
# Labels of export options whose registry names are terse; the help text says the rest.
OPTION_LABELS = {"per_type": "K per answer type", "models": "N author models", "author_models": "Author models",
                 "problems": "Problems"}


def _require_researcher(user) -> None:
    if not roles.is_researcher(user):
        raise Http404("No such page.")


def _split_names(text: str) -> list[str]:
    return [part.strip() for part in text.replace("\n", ",").split(",") if part.strip()]


def _redirect_back(request, fallback: str):
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                  require_https=request.is_secure()):
        return redirect(target)
    return redirect(fallback)


# ---------------------------------------------------------------- forms


def answer_type_choices() -> list[tuple[str, str]]:
    coarse = [(letter, f"{letter} · {name} (whole class)") for letter, name in taxonomy.COARSE_CLASSES.items()]
    fine = [(answer_type.code, f"{answer_type.code} · {answer_type.name}") for answer_type in taxonomy.ANSWER_TYPES]
    return coarse + fine


def dataset_model_names(dataset: Dataset) -> list[str]:
    return list(Completion.objects.filter(question__dataset=dataset).order_by("model_name")
                .values_list("model_name", flat=True).distinct())


class ScopeFiltersMixin(forms.Form):
    """Optional filters on the completions a run or a selection covers; empty admits everything."""

    answer_types = forms.MultipleChoiceField(
        required=False, widget=forms.SelectMultiple(attrs={"size": 6}),
        help_text="Fine codes or whole coarse classes; none selected means every answer type.")
    domains = forms.MultipleChoiceField(required=False, choices=Domain.choices, widget=forms.CheckboxSelectMultiple)
    models = forms.MultipleChoiceField(
        required=False, widget=forms.SelectMultiple(attrs={"size": 4}),
        help_text="Models that wrote the completions; none selected means every model.")

    def set_filter_choices(self, dataset: Dataset) -> None:
        self.fields["answer_types"].choices = answer_type_choices()
        self.fields["models"].choices = [(name, name) for name in dataset_model_names(dataset)]


def _verifier_label(config: VerifierConfig) -> str:
    return f"{config.name} ({config.get_kind_display().lower()})"


class RunForm(ScopeFiltersMixin):
    SCOPE_PROJECT = "project"
    SCOPE_DATASET = "dataset"

    verifier = forms.ModelChoiceField(queryset=VerifierConfig.objects.none(), empty_label=None,
                                      help_text="A rule-based verifier or an LLM judge configuration.")
    scope = forms.ChoiceField(widget=forms.RadioSelect)
    chunk_size = forms.IntegerField(min_value=1, max_value=runs.MAX_CHUNK_SIZE, initial=100,
                                    help_text="Completions verified and committed together.")
    chunk_delay = forms.FloatField(
        required=False, min_value=0, max_value=runs.MAX_CHUNK_DELAY, label="Pause after each chunk (seconds)",
        help_text="Leave empty for none; a pause makes a demonstration run slow enough to watch or cancel.")
    field_order = ["verifier", "scope", "answer_types", "domains", "models", "chunk_size", "chunk_delay"]

    def __init__(self, *args, dataset: Dataset, project: AnnotationProject | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.dataset, self.project = dataset, project
        self.fields["verifier"].queryset = VerifierConfig.objects.order_by("name")
        self.fields["verifier"].label_from_instance = _verifier_label
        choices = [(self.SCOPE_DATASET, f"Every completion of the dataset {dataset.name}")]
        if project is not None and project.kind == CORRECTNESS:
            choices.insert(0, (self.SCOPE_PROJECT, f"The completions of this project ({project.name})"))
        self.fields["scope"].choices = choices
        self.fields["scope"].initial = choices[0][0]
        self.set_filter_choices(dataset)

    def start(self, user) -> VerificationRun | None:
        """Create and queue the run; on a refusal the form gets the message as a non-field error."""
        data = self.cleaned_data
        scope = {"project": self.project} if data["scope"] == self.SCOPE_PROJECT else {"dataset": self.dataset}
        options = {"chunk_delay": data["chunk_delay"]} if data.get("chunk_delay") else {}
        try:
            return runs.create_run(
                verifier=data["verifier"], answer_types=data["answer_types"], domains=data["domains"],
                models=data["models"], chunk_size=data["chunk_size"], options=options, created_by=user, **scope,
            )
        except runs.RunRequestError as exc:
            self.add_error(None, str(exc))
            return None


class SelectionForm(ScopeFiltersMixin):
    strategy = forms.ChoiceField(widget=forms.RadioSelect, initial=selection.VERIFYBENCH, choices=[
        (selection.VERIFYBENCH, "VerifyBench: per question, completions one verifier judged correct and ones it "
                                "judged incorrect, at random"),
        (selection.VERIFYBENCH_HARD, "VerifyBench-Hard: completions several verifiers disagree on, sampled by "
                                     "domain, source and answer type"),
    ])
    verifiers = forms.ModelMultipleChoiceField(
        queryset=VerifierConfig.objects.none(), widget=forms.CheckboxSelectMultiple,
        help_text="VerifyBench uses exactly one; VerifyBench-Hard at least two (their verdicts are the votes).")
    per_side = forms.IntegerField(min_value=1, max_value=100, initial=2, label="Per side (VerifyBench)",
                                  help_text="Completions judged correct, and as many judged incorrect, per question.")
    target = forms.IntegerField(min_value=1, max_value=10_000_000, initial=2000, label="Target count (VerifyBench-Hard)",
                                help_text="How many contested completions to pick.")
    min_minority = forms.IntegerField(min_value=1, max_value=50, initial=2, label="Minority at least M (VerifyBench-Hard)",
                                      help_text="A completion is contested when the smaller side has at least M votes.")
    seed = forms.IntegerField(required=False, initial=0, help_text="Seed of the random choices; same seed, same picks.")
    name = forms.CharField(max_length=200, required=False, label="Project name",
                           help_text="Name of the annotation project made of the picks.")
    labels_per_item = forms.IntegerField(min_value=1, max_value=10, initial=2,
                                         help_text="Independent labels before an item can resolve by agreement.")
    field_order = ["strategy", "verifiers", "per_side", "target", "min_minority", "seed", "answer_types", "domains",
                   "models", "name", "labels_per_item"]

    def __init__(self, *args, dataset: Dataset, **kwargs):
        super().__init__(*args, **kwargs)
        self.dataset = dataset
        self.fields["verifiers"].queryset = VerifierConfig.objects.order_by("name")
        self.fields["verifiers"].label_from_instance = _verifier_label
        self.set_filter_choices(dataset)

    def clean(self):
        cleaned = super().clean()
        chosen = list(cleaned.get("verifiers") or [])
        strategy = cleaned.get("strategy")
        if strategy == selection.VERIFYBENCH and len(chosen) > 1:
            self.add_error("verifiers", "The VerifyBench recipe uses exactly one verifier; choose one.")
        if strategy == selection.VERIFYBENCH_HARD and chosen:
            if len(chosen) < 2:
                self.add_error("verifiers", "The VerifyBench-Hard recipe needs at least two verifiers to vote.")
            elif cleaned.get("min_minority") and cleaned["min_minority"] > len(chosen) // 2:
                self.add_error("min_minority", f"With {len(chosen)} verifiers the minority side has at most "
                                               f"{len(chosen) // 2} votes.")
        return cleaned

    def select(self, user):
        """Make the selection and its project; returns (project, record) or None with the refusal as an error."""
        data = self.cleaned_data
        try:
            return grading_services.select_for_annotation(
                dataset=self.dataset, strategy=data["strategy"], verifiers=list(data["verifiers"]),
                seed=data["seed"], target=data["target"], per_side=data["per_side"],
                min_minority=data["min_minority"], answer_types=data["answer_types"], domains=data["domains"],
                models=data["models"], name=data["name"], created_by=user,
                project_settings={"labels_per_item": data["labels_per_item"]},
            )
        except grading_services.SelectionRequestError as exc:
            self.add_error(None, str(exc))
            return None


def export_formats_for(project: AnnotationProject) -> list:
    """The registered export formats that read this kind of project."""
    return [export_format for export_format in map(get_export_format, export_format_names())
            if export_format.project_kind == project.kind]


class ExportForm(forms.Form):
    """Format, file types, seed, and every option of the formats that fit the project (each used by its own)."""

    format = forms.ChoiceField(help_text="The registered formats that read this kind of project.")
    file_types = forms.MultipleChoiceField(choices=[(name, name) for name in FILE_TYPES], initial=["jsonl"],
                                           widget=forms.CheckboxSelectMultiple)
    seed = forms.IntegerField(initial=0, min_value=-(2 ** 63), max_value=2 ** 63 - 1,
                              help_text="Seed of every random choice the builder makes.")

    def __init__(self, *args, project: AnnotationProject, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        self.formats = {export_format.name: export_format for export_format in export_formats_for(project)}
        self.fields["format"].choices = [(name, f"{fmt.title} ({name})") for name, fmt in self.formats.items()]
        common = {option.name for option in COMMON_OPTIONS}
        self.option_fields: dict[str, object] = {}
        users: dict[str, list[str]] = {}
        for export_format in self.formats.values():
            for option in export_format.options:
                if option.name in common:
                    continue
                users.setdefault(option.name, []).append(export_format.name)
                self.option_fields.setdefault(option.name, option)
        for name, option in self.option_fields.items():
            label = f"{OPTION_LABELS.get(name, name.replace('_', ' ').capitalize())} ({', '.join(users[name])})"
            help_text = option.help + ("" if option.default is None else f" Default {option.default}.")
            if option.kind is list:
                field = forms.CharField(required=False, label=label,
                                        help_text=f"{option.help} Separate names with commas.")
            elif option.kind is int:
                field = forms.IntegerField(required=False, label=label, help_text=help_text,
                                           min_value=option.minimum, max_value=option.maximum)
            else:
                field = forms.FloatField(required=False, label=label, help_text=help_text,
                                         min_value=option.minimum, max_value=option.maximum)
            field.widget.attrs["placeholder"] = "" if option.default is None else str(option.default)
            self.fields[f"option_{name}"] = field

    def options_for(self, format_name: str) -> dict:
        options = {"seed": self.cleaned_data["seed"]}
        accepted = {option.name for option in self.formats[format_name].options}
        for name, option in self.option_fields.items():
            value = self.cleaned_data.get(f"option_{name}")
            if name not in accepted or value in (None, ""):
                continue
            options[name] = _split_names(value) if option.kind is list else value
        return options

    def start(self, user) -> ExportJob | None:
        data = self.cleaned_data
        try:
            return export_services.create_export(
                project=self.project, format=data["format"], file_types=data["file_types"],
                options=self.options_for(data["format"]), created_by=user,
            )
        except export_services.ExportRequestError as exc:
            self.add_error(None, str(exc))
            return None


# ---------------------------------------------------------------- rows the templates and jobs.js read


def run_row(run: VerificationRun) -> dict:
    payload = grading_selectors.run_payload(run)
    if run.project_id is not None:
        scope = f"project {run.project.name}" if run.project else f"project {run.project_id}"
    else:
        scope = "whole dataset"
    filters = [", ".join(values) for values in (run.answer_types, run.domains, run.model_names) if values]
    return {
        **payload,
        "run": run,
        "scope_label": scope,
        "filters_label": "; ".join(filters),
        "verifier_kind": run.verifier.get_kind_display(),
        "status_label": run.get_status_display(),
        "active": run.status in ACTIVE,
        "can_cancel": run.status in ACTIVE,
        "can_resume": run.status in (VerificationRun.Status.FAILED, VerificationRun.Status.CANCELLED),
        "api_url": reverse("verification-run-detail", args=[run.pk]),
    }


def export_row(job: ExportJob) -> dict:
    manifest = job.manifest or {}
    counts = manifest.get("counts") or {}
    by_label = counts.get("by_label") or {}
    try:
        title = get_export_format(job.format).title
    except KeyError:
        title = job.format
    return {
        "job": job,
        "id": job.pk,
        "format": job.format,
        "title": title,
        "file_types": job.file_types,
        "status": job.status,
        "status_label": job.get_status_display(),
        "done": job.progress_done,
        "total": job.progress_total,
        "active": job.status in ACTIVE,
        "can_cancel": job.status in ACTIVE,
        "succeeded": job.status == ExportJob.Status.SUCCEEDED,
        "rows": counts.get("rows"),
        "correct": by_label.get("correct"),
        "incorrect": by_label.get("incorrect"),
        "by_answer_subtype": counts.get("by_answer_subtype") or {},
        "shortfalls": [{"group": group, **info} for group, info in (manifest.get("shortfalls") or {}).items()],
        "api_url": reverse("export-detail", args=[job.pk]),
        "download_url": reverse("jobs-export-download", args=[job.pk]),
    }


def runs_of_project(project: AnnotationProject):
    return (VerificationRun.objects.filter(Q(project=project) | Q(dataset_id=project.dataset_id))
            .select_related("verifier", "project", "created_by").order_by("-created_at", "-id"))


def runs_of_dataset(dataset: Dataset):
    return (VerificationRun.objects.filter(Q(dataset=dataset) | Q(project__dataset=dataset))
            .select_related("verifier", "project", "created_by").order_by("-created_at", "-id"))


# ---------------------------------------------------------------- dashboard sections


def runs_section(project: AnnotationProject) -> dict:
    rows = [run_row(run) for run in runs_of_project(project)[:RUNS_SHOWN]]
    return {
        "rows": rows,
        "form": RunForm(dataset=project.dataset, project=project, prefix="run"),
        "has_verifiers": VerifierConfig.objects.exists(),
        "start_url": reverse("jobs-project-run-new", args=[project.pk]),
        "back_url": reverse("dashboard-project", args=[project.pk]) + f"#{RUN_SECTION_ANCHOR}",
    }


def exports_section(project: AnnotationProject) -> dict:
    jobs = ExportJob.objects.filter(project=project).select_related("created_by").order_by("-created_at", "-id")
    form = ExportForm(project=project, prefix="export")
    return {
        "rows": [export_row(job) for job in jobs[:EXPORTS_SHOWN]],
        "form": form,
        "has_formats": bool(form.formats),
        "start_url": reverse("jobs-project-export-new", args=[project.pk]),
        "back_url": reverse("dashboard-project", args=[project.pk]) + f"#{EXPORT_SECTION_ANCHOR}",
    }


views_dashboard.register_section("jobs/runs_section.html", runs_section)
views_dashboard.register_section("jobs/exports_section.html", exports_section)


# ---------------------------------------------------------------- starting jobs from a project


def _researcher_project(request, project_id: int) -> AnnotationProject:
    _require_researcher(request.user)
    return get_object_or_404(AnnotationProject.objects.select_related("dataset"), pk=project_id)


@login_required
@require_http_methods(["GET", "POST"])
def project_run_new(request, project_id: int):
    project = _researcher_project(request, project_id)
    form = RunForm(request.POST or None, dataset=project.dataset, project=project, prefix="run")
    if request.method == "POST" and form.is_valid():
        run = form.start(request.user)
        if run is not None:
            messages.success(request, f"Verification run {run.pk} with {run.verifier.name} started.")
            return redirect(reverse("dashboard-project", args=[project.pk]) + f"#{RUN_SECTION_ANCHOR}")
    return render(request, "jobs/run_new.html", {
        "form": form, "project": project, "dataset": project.dataset,
        "action": reverse("jobs-project-run-new", args=[project.pk]),
        "back_url": reverse("dashboard-project", args=[project.pk]),
    }, status=400 if form.errors else 200)


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
    return render(request, "jobs/export_new.html", {"form": form, "project": project},
                  status=400 if form.errors else 200)


# ---------------------------------------------------------------- a dataset's jobs page


def _dataset_page(request, dataset: Dataset, *, run_form=None, selection_form=None, status: int = 200):
    selections = (SelectionRecord.objects.filter(dataset=dataset).select_related("project", "created_by")
                  .prefetch_related("verifiers").order_by("-created_at", "-id"))
    return render(request, "jobs/dataset_jobs.html", {
        "dataset": dataset,
        "rows": [run_row(run) for run in runs_of_dataset(dataset)[:RUNS_SHOWN]],
        "run_form": run_form or RunForm(dataset=dataset, prefix="run"),
        "selection_form": selection_form or SelectionForm(dataset=dataset, prefix="select"),
        "has_verifiers": VerifierConfig.objects.exists(),
        "selections": selections[:RUNS_SHOWN],
        "back_url": reverse("jobs-dataset", args=[dataset.pk]),
    }, status=status)


def _researcher_dataset(request, dataset_id: int) -> Dataset:
    _require_researcher(request.user)
    return get_object_or_404(Dataset, pk=dataset_id)


@login_required
@require_GET
def dataset_jobs(request, dataset_id: int):
    return _dataset_page(request, _researcher_dataset(request, dataset_id))


@login_required
@require_POST
def dataset_run_new(request, dataset_id: int):
    dataset = _researcher_dataset(request, dataset_id)
    form = RunForm(request.POST, dataset=dataset, prefix="run")
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
    form = SelectionForm(request.POST, dataset=dataset, prefix="select")
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
        "parameters": [(key.replace("_", " "), _shown(value)) for key, value in parameters.items()
                       if key not in ("filters", "verifier", "verifiers", "seed")],
        "filters": [(key.replace("_", " "), _shown(values))
                    for key, values in (parameters.get("filters") or {}).items() if values],
        "shortfalls": report.get("shortfalls") or [],
        "strata_fields": [name.replace("_", " ") for name in strata_fields],
        "strata": [{"values": [row.get(name) or "—" for name in strata_fields], "available": row.get("available"),
                    "allocated": row.get("allocated")} for row in report.get("strata") or []],
        "vote_splits": list((report.get("vote_splits") or {}).items()),
    }


@login_required
@require_GET
def selection_report(request, selection_id: int):
    _require_researcher(request.user)
    record = get_object_or_404(
        SelectionRecord.objects.select_related("project", "dataset", "created_by").prefetch_related("verifiers"),
        pk=selection_id,
    )
    picks = (record.report or {}).get("picks") or []
    page = Paginator(picks, PICKS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "jobs/selection_report.html", {
        "record": record,
        "report": record.report or {},
        "verifiers": sorted(config.name for config in record.verifiers.all()),
        "page": page,
        **_report_rows(record),
    })


# ---------------------------------------------------------------- cancel, resume, download


@login_required
@require_POST
def run_cancel(request, run_id: int):
    _require_researcher(request.user)
    run = get_object_or_404(VerificationRun, pk=run_id)
    try:
        run = runs.cancel_run(run)
    except runs.RunRequestError as exc:
        messages.error(request, f"Cannot cancel: {exc}.")
    else:
        if run.status == VerificationRun.Status.CANCELLED:
            messages.success(request, f"Run {run.pk} cancelled.")
        else:
            messages.success(request, f"Run {run.pk} will stop after the chunk it is verifying.")
    return _redirect_back(request, _run_home(run))


@login_required
@require_POST
def run_resume(request, run_id: int):
    _require_researcher(request.user)
    run = get_object_or_404(VerificationRun, pk=run_id)
    try:
        run = runs.resume_run(run)
    except runs.RunRequestError as exc:
        messages.error(request, f"Cannot resume: {exc}.")
    else:
        messages.success(request, f"Run {run.pk} resumed (attempt {run.attempt}).")
    return _redirect_back(request, _run_home(run))


def _run_home(run: VerificationRun) -> str:
    if run.project_id is not None:
        return reverse("dashboard-project", args=[run.project_id]) + f"#{RUN_SECTION_ANCHOR}"
    return reverse("jobs-dataset", args=[run.dataset_id]) + f"#{RUN_SECTION_ANCHOR}"


def _export_home(job: ExportJob) -> str:
    return reverse("dashboard-project", args=[job.project_id]) + f"#{EXPORT_SECTION_ANCHOR}"


@login_required
@require_POST
def export_cancel(request, export_id: int):
    _require_researcher(request.user)
    job = get_object_or_404(ExportJob, pk=export_id)
    try:
        job = export_services.cancel_export(job)
    except export_services.ExportRequestError as exc:
        messages.error(request, f"Cannot cancel: {exc}.")
    else:
        if job.status == ExportJob.Status.CANCELLED:
            messages.success(request, f"Export {job.pk} cancelled.")
        else:
            messages.success(request, f"Export {job.pk} will stop after the chunk it is writing.")
    return _redirect_back(request, _export_home(job))


@login_required
@require_GET
def export_download(request, export_id: int):
    _require_researcher(request.user)
    job = get_object_or_404(ExportJob, pk=export_id)
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
