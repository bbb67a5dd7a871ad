from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models.functions import Coalesce

from core import taxonomy, workspaces
from core.jobs.models import BackgroundJob


class Domain(models.TextChoices):
    GENERAL = "general_reasoning", "General reasoning"
    LOGIC = "logic_reasoning", "Logic reasoning"
    MATH = "math_reasoning", "Math reasoning"


AnswerTypeCode = models.TextChoices(
    "AnswerTypeCode", [(t.code, (t.code, f"{t.code} - {t.name}")) for t in taxonomy.ANSWER_TYPES]
)
AnswerClass = models.TextChoices(
    "AnswerClass", [(letter, (letter, f"{letter} - {name}")) for letter, name in taxonomy.COARSE_CLASSES.items()]
)


class Dataset(models.Model):
    name = models.CharField(max_length=200, unique=True)
    workspace = models.ForeignKey(
        "core.Workspace",
        on_delete=models.PROTECT,
        related_name="datasets",
        default=workspaces.default_workspace_id,
        help_text="The team it belongs to: its projects, runs, selections and exports belong there too.",
    )
    description = models.TextField(blank=True)
    field_types = models.JSONField(
        default=dict,
        blank=True,
        help_text='JSON types the imported files gave each public id field, e.g. {"question_id": ["int"]}; exports '
        "keep them.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Kept by verifybench.services.recount after every import, so lists of datasets count no rows.
    question_count = models.PositiveIntegerField(default=0, editable=False)
    completion_count = models.PositiveIntegerField(default=0, editable=False)
    prior_label_count = models.PositiveIntegerField(default=0, editable=False)
    model_count = models.PositiveIntegerField(default=0, editable=False, help_text="Distinct author model names.")
    model_names = models.JSONField(default=list, editable=False, help_text="The author model names, in order.")

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Question(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="questions")
    external_id = models.CharField(max_length=255)
    text = models.TextField()
    domain = models.CharField(max_length=32, choices=Domain.choices, blank=True)
    source = models.CharField(max_length=255, blank=True)
    subject = models.CharField(max_length=100, blank=True)
    answer_type = models.CharField(max_length=2, choices=AnswerTypeCode.choices, blank=True)
    answer_class = models.CharField(max_length=1, choices=AnswerClass.choices, blank=True)
    image = models.FileField(upload_to="question_images/", blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    origin = models.JSONField(
        default=dict, blank=True, help_text="Public fields as the imported file spelled them (ids, answer types)."
    )
    content_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dataset_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "external_id"], name="question_external_id_unique_per_dataset"),
        ]
        indexes = [models.Index(fields=["dataset", "answer_type"]), models.Index(fields=["dataset", "domain"])]

    def __str__(self):
        return f"{self.dataset_id}:{self.external_id}"

    @property
    def primary_reference(self):
        for reference in self.references.all():
            if reference.is_primary:
                return reference
        return None


class ReferenceAnswer(models.Model):
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="references")
    final_answer = models.TextField(blank=True)
    solution = models.TextField(blank=True)
    is_primary = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["question_id", "-is_primary", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["question"], condition=models.Q(is_primary=True), name="one_primary_reference_per_question"
            ),
            models.CheckConstraint(
                condition=~(models.Q(final_answer="") & models.Q(solution="")), name="reference_has_answer_or_solution"
            ),
        ]

    def __str__(self):
        return f"reference for {self.question_id}"


class CompletionQuerySet(models.QuerySet):
    def with_primary_reference(self):
        """Each completion with its question's primary reference as `reference_final_answer` and
        `reference_solution` (empty when the question has none), joined in the same query."""
        return self.annotate(
            primary_reference=models.FilteredRelation(
                "question__references", condition=models.Q(question__references__is_primary=True)
            ),
            reference_final_answer=Coalesce(
                "primary_reference__final_answer", models.Value(""), output_field=models.TextField()
            ),
            reference_solution=Coalesce(
                "primary_reference__solution", models.Value(""), output_field=models.TextField()
            ),
        )


class Completion(models.Model):
    objects = CompletionQuerySet.as_manager()

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="completions")
    external_id = models.CharField(max_length=255)
    model_name = models.CharField(max_length=200, db_index=True)
    sampling = models.JSONField(default=dict, blank=True)
    sample_index = models.PositiveIntegerField(default=0)
    is_greedy = models.BooleanField(default=False)
    text = models.TextField()
    content_hash = models.CharField(max_length=64)
    metadata = models.JSONField(default=dict, blank=True)
    origin = models.JSONField(
        default=dict, blank=True, help_text="Public fields as the imported file spelled them (the completion id)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["question_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["question", "external_id"], name="completion_external_id_unique_per_question"
            ),
        ]

    def __str__(self):
        return f"{self.question_id}:{self.external_id}"


class SearchDocument(models.Model):
    """The full-text document of one question's or completion's text, for the item browser's search on PostgreSQL.

    A database trigger adds a row with no document whenever a text is inserted or changed (COPY included), so an
    import only writes ids; `services.index_search_documents` computes the documents after the rows are committed,
    in the background. Until then a search matches those texts directly (`subjects`), so nothing is ever missed.
    Elsewhere (SQLite) nothing fills these tables and the search reads the texts.
    """

    document = SearchVectorField(null=True)

    class Meta:
        abstract = True


class QuestionSearch(SearchDocument):
    question = models.OneToOneField(Question, on_delete=models.CASCADE, primary_key=True, related_name="search")

    class Meta:
        indexes = [
            GinIndex(fields=["document"], name="question_search_document", condition=models.Q(document__isnull=False)),
            models.Index(
                fields=["question"], name="question_search_pending", condition=models.Q(document__isnull=True)
            ),
        ]


class CompletionSearch(SearchDocument):
    completion = models.OneToOneField(Completion, on_delete=models.CASCADE, primary_key=True, related_name="search")

    class Meta:
        indexes = [
            GinIndex(
                fields=["document"], name="completion_search_document", condition=models.Q(document__isnull=False)
            ),
            models.Index(
                fields=["completion"], name="completion_search_pending", condition=models.Q(document__isnull=True)
            ),
        ]


class PriorLabel(models.Model):
    """A correctness label that arrived inside an imported file; never a label given in this app."""

    class SourceFormat(models.TextChoices):
        VERIFYBENCH = "verifybench", "VerifyBench"
        MUMATH = "mumath", "mu-MATH"
        MATHARENA = "matharena", "MathArena"
        MATHLABEL = "mathlabel", "mathlabel (a lab's own file)"

    completion = models.ForeignKey(Completion, on_delete=models.CASCADE, related_name="prior_labels")
    is_correct = models.BooleanField()
    source_format = models.CharField(max_length=20, choices=SourceFormat.choices)
    annotators = models.JSONField(default=list, blank=True)
    source_file = models.CharField(max_length=500, blank=True)
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["completion_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["completion", "source_format"], name="one_prior_label_per_format"),
        ]

    def __str__(self):
        return f"prior {self.source_format} label for {self.completion_id}: {self.is_correct}"


class ImportJob(BackgroundJob):
    """One uploaded file imported into a dataset, as a background job; its report says what happened, line by line.

    The upload is kept under IMPORT_UPLOAD_DIR until the import succeeds, so a failed or killed import can be
    restarted; an import is all or nothing, so a restart starts over and a killed one has written nothing."""

    dataset_name = models.CharField(max_length=200)
    workspace = models.ForeignKey(
        "core.Workspace",
        on_delete=models.PROTECT,
        related_name="import_jobs",
        default=workspaces.default_workspace_id,
        help_text="Where a dataset the import creates goes; an existing dataset must be in it.",
    )
    dataset = models.ForeignKey(Dataset, null=True, blank=True, on_delete=models.SET_NULL, related_name="import_jobs")
    format = models.CharField(max_length=50, blank=True, help_text="Detected from the file when empty.")
    file_type = models.CharField(max_length=10, blank=True, help_text="jsonl, csv or parquet; detected when empty.")
    skip_invalid = models.BooleanField(default=False)
    source_name = models.CharField(max_length=500, help_text="The uploaded file's name.")
    upload_path = models.CharField(max_length=500, blank=True, help_text="File name under IMPORT_UPLOAD_DIR.")
    size = models.PositiveBigIntegerField(default=0)
    report = models.JSONField(null=True, blank=True)
    rejects_path = models.CharField(max_length=500, blank=True, help_text="File name under IMPORT_UPLOAD_DIR.")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "created_at"], name="importjob_status_created")]

    def __str__(self):
        return f"import {self.pk} of {self.source_name} ({self.status})"
