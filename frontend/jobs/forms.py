"""The forms that start jobs: a verification run, a selection for annotation, an export."""

from __future__ import annotations

from django import forms

from annotation.models import AnnotationProject
from core import taxonomy
from grading import runs
from grading.models import VerificationRun, VerifierConfig
from grading.selection import recipes as selection
from grading.selection import services as selection_services
from reports import selectors as export_selectors
from reports import services as export_services
from reports.exports import COMMON_OPTIONS, FILE_TYPES, export_format_names, get_export_format
from reports.models import ExportJob
from verifybench.label_rules import CORRECTNESS
from verifybench.models import Dataset, Domain

# Labels of export options whose registry names are terse; the help text says the rest.
OPTION_LABELS = {
    "per_type": "K per answer type",
    "models": "N author models",
    "author_models": "Author models",
    "problems": "Problems",
}


def split_names(text: str) -> list[str]:
    return [part.strip() for part in text.replace("\n", ",").split(",") if part.strip()]


def answer_type_choices() -> list[tuple[str, str]]:
    coarse = [(letter, f"{letter} · {name} (whole class)") for letter, name in taxonomy.COARSE_CLASSES.items()]
    fine = [(answer_type.code, f"{answer_type.code} · {answer_type.name}") for answer_type in taxonomy.ANSWER_TYPES]
    return coarse + fine


def dataset_model_names(dataset: Dataset) -> list[str]:
    """The author models of the dataset's completions, as its last import counted them (verifybench.services)."""
    return list(dataset.model_names)


class ScopeFiltersMixin(forms.Form):
    """Optional filters on the completions a run or a selection covers; empty admits everything."""

    answer_types = forms.MultipleChoiceField(
        required=False,
        widget=forms.SelectMultiple(attrs={"size": 6}),
        help_text="Fine codes or whole coarse classes; none selected means every answer type.",
    )
    domains = forms.MultipleChoiceField(required=False, choices=Domain.choices, widget=forms.CheckboxSelectMultiple)
    models = forms.MultipleChoiceField(
        required=False,
        widget=forms.SelectMultiple(attrs={"size": 4}),
        help_text="Models that wrote the completions; none selected means every model.",
    )

    def set_filter_choices(self, dataset: Dataset) -> None:
        self.fields["answer_types"].choices = answer_type_choices()
        self.fields["models"].choices = [(name, name) for name in dataset_model_names(dataset)]


def _verifier_label(config: VerifierConfig) -> str:
    return f"{config.name} ({config.get_kind_display().lower()})"


def runnable_verifiers(user, dataset: Dataset):
    """The configurations that may run on the dataset: the shared ones and those of its workspace (and only as far as
    the user may see them)."""
    from django.db.models import Q

    from core import workspaces

    configs = VerifierConfig.objects.filter(Q(workspace__isnull=True) | Q(workspace_id=dataset.workspace_id))
    return configs.filter(workspaces.condition(user) | Q(workspace__isnull=True)) if user is not None else configs


class RunForm(ScopeFiltersMixin):
    SCOPE_PROJECT = "project"
    SCOPE_DATASET = "dataset"

    verifier = forms.ModelChoiceField(
        queryset=VerifierConfig.objects.none(),
        empty_label=None,
        help_text="A rule-based verifier, an LLM judge, or a cascade of the two.",
    )
    scope = forms.ChoiceField(widget=forms.RadioSelect)
    chunk_size = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=runs.MAX_CHUNK_SIZE,
        help_text="Completions verified and committed together, and shared out to workers as a unit. Leave empty "
        "for the verifier's default (2,000 for the rules, 200 for a judge, 500 for a cascade).",
    )
    chunk_delay = forms.FloatField(
        required=False,
        min_value=0,
        max_value=runs.MAX_CHUNK_DELAY,
        label="Pause after each chunk (seconds)",
        help_text="Leave empty for none; a pause makes a demonstration run slow enough to watch or cancel.",
    )
    field_order = ["verifier", "scope", "answer_types", "domains", "models", "chunk_size", "chunk_delay"]

    def __init__(self, *args, dataset: Dataset, project: AnnotationProject | None = None, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.dataset, self.project = dataset, project
        # imported verdicts are not computed here: their configurations are for selection and evaluation only
        self.fields["verifier"].queryset = (
            runnable_verifiers(user, dataset).exclude(kind=VerifierConfig.Kind.EXTERNAL).order_by("name")
        )
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
                verifier=data["verifier"],
                answer_types=data["answer_types"],
                domains=data["domains"],
                models=data["models"],
                chunk_size=data.get("chunk_size") or None,
                options=options,
                created_by=user,
                **scope,
            )
        except runs.RunRequestError as exc:
            self.add_error(None, str(exc))
            return None


class SelectionForm(ScopeFiltersMixin):
    strategy = forms.ChoiceField(
        widget=forms.RadioSelect,
        initial=selection.VERIFYBENCH,
        choices=[
            (
                selection.VERIFYBENCH,
                "VerifyBench: per question, completions one verifier judged correct and ones it "
                "judged incorrect, at random",
            ),
            (
                selection.VERIFYBENCH_HARD,
                "VerifyBench-Hard: completions several verifiers disagree on, sampled by "
                "domain, source and answer type",
            ),
            (
                selection.CASCADE,
                "Cascade: only the completions a cascade left to humans (its judge could not decide, or "
                "its sampled check disagreed with the rules)",
            ),
        ],
    )
    verifiers = forms.ModelMultipleChoiceField(
        queryset=VerifierConfig.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        help_text="VerifyBench and Cascade use exactly one (for Cascade, a cascade configuration); VerifyBench-Hard at "
        "least two (their verdicts are the votes).",
    )
    per_side = forms.IntegerField(
        min_value=1,
        max_value=100,
        initial=2,
        label="Per side (VerifyBench)",
        help_text="Completions judged correct, and as many judged incorrect, per question.",
    )
    target = forms.IntegerField(
        min_value=1,
        max_value=10_000_000,
        initial=2000,
        required=False,
        label="Target count (VerifyBench-Hard, Cascade)",
        help_text="How many contested completions to pick (2000 when empty); for Cascade, "
        "at most this many, at random (all when empty).",
    )
    routes = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Route to annotators (Cascade)",
        choices=[
            (selection.UNDECIDED, "undecided: neither rules nor judge could decide"),
            (selection.DISPUTED, "disputed: the judge's sampled check disagreed with the rules"),
        ],
        help_text="Both when none is ticked.",
    )
    min_minority = forms.IntegerField(
        min_value=1,
        max_value=50,
        initial=2,
        label="Minority at least M (VerifyBench-Hard)",
        help_text="A completion is contested when the smaller side has at least M votes.",
    )
    seed = forms.IntegerField(required=False, initial=0, help_text="Seed of the random choices; same seed, same picks.")
    name = forms.CharField(
        max_length=200,
        required=False,
        label="Project name",
        help_text="Name of the annotation project made of the picks.",
    )
    labels_per_item = forms.IntegerField(
        min_value=1, max_value=10, initial=2, help_text="Independent labels before an item can resolve by agreement."
    )
    field_order = [
        "strategy",
        "verifiers",
        "per_side",
        "target",
        "min_minority",
        "routes",
        "seed",
        "answer_types",
        "domains",
        "models",
        "name",
        "labels_per_item",
    ]

    def __init__(self, *args, dataset: Dataset, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.dataset = dataset
        self.fields["verifiers"].queryset = runnable_verifiers(user, dataset).order_by("name")
        self.fields["verifiers"].label_from_instance = _verifier_label
        self.set_filter_choices(dataset)

    def clean(self):
        cleaned = super().clean()
        chosen = list(cleaned.get("verifiers") or [])
        strategy = cleaned.get("strategy")
        if strategy == selection.VERIFYBENCH and len(chosen) > 1:
            self.add_error("verifiers", "The VerifyBench recipe uses exactly one verifier; choose one.")
        if (
            strategy == selection.CASCADE
            and chosen
            and (len(chosen) > 1 or chosen[0].kind != VerifierConfig.Kind.CASCADE)
        ):
            self.add_error("verifiers", "The Cascade recipe uses exactly one cascade configuration; choose one.")
        if strategy == selection.VERIFYBENCH_HARD and chosen:
            if len(chosen) < 2:
                self.add_error("verifiers", "The VerifyBench-Hard recipe needs at least two verifiers to vote.")
            elif cleaned.get("min_minority") and cleaned["min_minority"] > len(chosen) // 2:
                self.add_error(
                    "min_minority",
                    f"With {len(chosen)} verifiers the minority side has at most {len(chosen) // 2} votes.",
                )
        return cleaned

    def select(self, user):
        """Make the selection and its project; returns (project, record) or None with the refusal as an error."""
        data = self.cleaned_data
        try:
            return selection_services.select_for_annotation(
                dataset=self.dataset,
                strategy=data["strategy"],
                verifiers=list(data["verifiers"]),
                seed=data["seed"],
                target=data["target"],
                per_side=data["per_side"],
                min_minority=data["min_minority"],
                routes=data["routes"] or None,
                answer_types=data["answer_types"],
                domains=data["domains"],
                models=data["models"],
                name=data["name"],
                created_by=user,
                project_settings={"labels_per_item": data["labels_per_item"]},
            )
        except selection_services.SelectionRequestError as exc:
            self.add_error(None, str(exc))
            return None


def _rows_text(preview) -> str:
    if preview is None:
        return "rows counted when it runs"
    if preview.rows == 0:
        return "no rows"
    return f"{'up to ' if not preview.exact else ''}{preview.rows} row{'s' if preview.rows != 1 else ''}"


def export_formats_for(project: AnnotationProject) -> list:
    """The registered export formats that read this kind of project."""
    return [
        export_format
        for export_format in map(get_export_format, export_format_names())
        if export_format.project_kind == project.kind
    ]


class ExportForm(forms.Form):
    """Format, file types, seed, and every option of the formats that fit the project (each used by its own)."""

    format = forms.ChoiceField(help_text="The registered formats that read this kind of project.")
    file_types = forms.MultipleChoiceField(
        choices=[(name, name) for name in FILE_TYPES], initial=["jsonl"], widget=forms.CheckboxSelectMultiple
    )
    seed = forms.IntegerField(
        initial=0, min_value=-(2**63), max_value=2**63 - 1, help_text="Seed of every random choice the builder makes."
    )

    def __init__(self, *args, project: AnnotationProject, count_rows: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        self.formats = {export_format.name: export_format for export_format in export_formats_for(project)}
        self.rows_counted = count_rows
        self._previews: list[dict] | None = None
        labels = {name: f"{fmt.title} ({name})" for name, fmt in self.formats.items()}
        if count_rows and not self.is_bound:  # a submitted form counts only if it is shown again (an error)
            for preview in self.previews:
                labels[preview["name"]] += f": {preview['rows']}"
            giving = [preview["name"] for preview in self.previews if preview["gives_rows"]]
            if giving:
                self.fields["format"].initial = giving[0]
        self.fields["format"].choices = list(labels.items())
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
                field = forms.CharField(
                    required=False, label=label, help_text=f"{option.help} Separate names with commas."
                )
            elif option.kind is int:
                field = forms.IntegerField(
                    required=False, label=label, help_text=help_text, min_value=option.minimum, max_value=option.maximum
                )
            else:
                field = forms.FloatField(
                    required=False, label=label, help_text=help_text, min_value=option.minimum, max_value=option.maximum
                )
            field.widget.attrs["placeholder"] = "" if option.default is None else str(option.default)
            self.fields[f"option_{name}"] = field

    @property
    def previews(self) -> list[dict]:
        """Each format's row count from the project's final labels (default options) and why none, when counted."""
        if not self.rows_counted:
            return []
        if self._previews is None:
            counted = export_selectors.export_previews(self.project, self.formats.values())
            self._previews = [
                {
                    "name": name,
                    "title": fmt.title,
                    "rows": _rows_text(counted[name]),
                    "gives_rows": counted[name] is None or counted[name].rows > 0,
                    "reason": counted[name].reason if counted[name] is not None else "",
                }
                for name, fmt in self.formats.items()
            ]
        return self._previews

    def options_for(self, format_name: str) -> dict:
        options = {"seed": self.cleaned_data["seed"]}
        accepted = {option.name for option in self.formats[format_name].options}
        for name, option in self.option_fields.items():
            value = self.cleaned_data.get(f"option_{name}")
            if name not in accepted or value in (None, ""):
                continue
            options[name] = split_names(value) if option.kind is list else value
        return options

    def start(self, user) -> ExportJob | None:
        data = self.cleaned_data
        try:
            return export_services.create_export(
                project=self.project,
                format=data["format"],
                file_types=data["file_types"],
                options=self.options_for(data["format"]),
                created_by=user,
            )
        except export_services.ExportRequestError as exc:
            self.add_error(None, str(exc))
            return None
