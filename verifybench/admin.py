"""Admin for the benchmark data. Imported content (question, reference and completion texts) is read-only here;
classification fields stay editable so a researcher can correct an answer type. New content arrives through the
JSONL import page, which calls the same import service as the API and the command line."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.text import Truncator

from . import imports, services
from .models import Completion, Dataset, PriorLabel, Question, ReferenceAnswer


def _excerpt(text: str, words: int = 16) -> str:
    return Truncator(" ".join(text.split())).words(words)


class ImportUploadForm(forms.Form):
    file = forms.FileField(help_text="JSON Lines, CSV with a header row, or Parquet: one record per row.")
    dataset = forms.CharField(max_length=200, help_text="Name of the dataset to import into; created if new.")
    format = forms.ChoiceField(
        choices=lambda: [("", "Detect from the file"), *((name, name) for name in services.import_format_names())],
        required=False,
    )
    skip_invalid = forms.BooleanField(
        required=False,
        help_text="Import the valid lines and skip the invalid ones instead of rejecting the file.",
    )


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "question_count", "completion_count", "created_by", "created_at"]
    list_select_related = ["created_by"]
    search_fields = ["name", "description"]
    readonly_fields = ["created_by", "created_at"]
    fields = ["name", "description", "created_by", "created_at"]

    def save_model(self, request, obj, form, change):
        if not change and obj.created_by_id is None:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)

    def get_urls(self):
        return [
            path("import/", self.admin_site.admin_view(self.import_view), name="verifybench_dataset_import"),
            *super().get_urls(),
        ]

    def import_view(self, request):
        """Uploads go to the same background import as the import page; the job's page shows progress and report."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = ImportUploadForm(
            request.POST or None, request.FILES or None, initial={"dataset": request.GET.get("dataset", "")}
        )
        if request.method == "POST" and form.is_valid():
            uploaded = form.cleaned_data["file"]
            try:
                job = imports.create_import(
                    uploaded=uploaded,
                    dataset_name=form.cleaned_data["dataset"],
                    fmt=form.cleaned_data["format"] or "",
                    skip_invalid=form.cleaned_data["skip_invalid"],
                    created_by=request.user,
                )
            except (imports.UploadTooLarge, services.ImportRequestError) as exc:
                form.add_error("file", str(exc))
            else:
                self.message_user(request, f"Import {job.pk} of {uploaded.name} is queued.", messages.SUCCESS)
                return redirect(reverse("job-detail", args=["import", job.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Import a file",
            "form": form,
            "report": None,
            "changelist_url": reverse("admin:verifybench_dataset_changelist"),
        }
        return TemplateResponse(request, "admin/verifybench/dataset/import_jsonl.html", context)


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def get_readonly_fields(self, request, obj=None):
        return self.fields


class ReferenceAnswerInline(ReadOnlyInline):
    model = ReferenceAnswer
    fields = ["final_answer", "solution", "is_primary"]


class CompletionInline(ReadOnlyInline):
    model = Completion
    fields = ["external_id", "model_name", "sample_index", "is_greedy"]


class PriorLabelInline(ReadOnlyInline):
    model = PriorLabel
    fields = ["is_correct", "source_format", "annotators", "source_file", "imported_at"]
    show_change_link = False


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["external_id", "dataset", "answer_type", "answer_class", "domain", "source", "excerpt"]
    list_filter = ["dataset", "answer_class", "answer_type", "domain"]
    list_select_related = ["dataset"]
    search_fields = ["external_id", "text", "source", "subject"]
    readonly_fields = ["dataset", "external_id", "text", "source", "image", "metadata", "content_hash", "created_at"]
    fields = [
        "dataset",
        "external_id",
        "text",
        "image",
        "domain",
        "source",
        "subject",
        "answer_type",
        "answer_class",
        "metadata",
        "content_hash",
        "created_at",
    ]
    inlines = [ReferenceAnswerInline, CompletionInline]

    @admin.display(description="question")
    def excerpt(self, obj):
        return _excerpt(obj.text)

    def has_add_permission(self, request):
        return False


@admin.register(ReferenceAnswer)
class ReferenceAnswerAdmin(admin.ModelAdmin):
    list_display = ["question", "dataset", "final_answer_excerpt", "is_primary"]
    list_filter = ["question__dataset", "is_primary", "question__answer_class"]
    list_select_related = ["question__dataset"]
    search_fields = ["final_answer", "solution", "question__external_id"]
    readonly_fields = ["question", "final_answer", "solution", "is_primary", "created_at"]

    @admin.display(ordering="question__dataset__name")
    def dataset(self, obj):
        return obj.question.dataset

    @admin.display(description="final answer")
    def final_answer_excerpt(self, obj):
        return _excerpt(obj.final_answer or obj.solution)

    def has_add_permission(self, request):
        return False


@admin.register(Completion)
class CompletionAdmin(admin.ModelAdmin):
    list_display = ["external_id", "question", "dataset", "model_name", "sample_index", "is_greedy"]
    list_filter = ["question__dataset", "model_name", "question__answer_class", "question__answer_type", "is_greedy"]
    list_select_related = ["question__dataset"]
    search_fields = ["external_id", "model_name", "question__external_id", "text"]
    readonly_fields = [
        "question",
        "external_id",
        "model_name",
        "sampling",
        "sample_index",
        "is_greedy",
        "text",
        "content_hash",
        "metadata",
        "created_at",
    ]
    inlines = [PriorLabelInline]

    @admin.display(ordering="question__dataset__name")
    def dataset(self, obj):
        return obj.question.dataset

    def has_add_permission(self, request):
        return False


@admin.register(PriorLabel)
class PriorLabelAdmin(admin.ModelAdmin):
    list_display = ["completion", "model_name", "is_correct", "source_format", "source_file", "imported_at"]
    list_filter = ["source_format", "is_correct", "completion__question__dataset", "completion__model_name"]
    list_select_related = ["completion"]
    search_fields = ["completion__external_id", "completion__question__external_id", "source_file"]

    @admin.display(ordering="completion__model_name", description="model")
    def model_name(self, obj):
        return obj.completion.model_name

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
