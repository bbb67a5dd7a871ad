"""The data of proof grading: competitions, their problems and official solutions, versioned rubrics, model proofs
and what is known about the models."""

import hashlib
import hmac

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models

from annotation.models import Label


class RubricInUseError(ValidationError):
    """A rubric version that grades point at cannot change; save the edit as a new version."""


class Competition(models.Model):
    """A contest whose proof problems are graded, e.g. "USAMO 2025"; it owns the dataset its projects use."""

    name = models.CharField(max_length=200, unique=True)
    date = models.DateField(null=True, blank=True, help_text="Day the problems became public.")
    description = models.TextField(blank=True)
    dataset = models.OneToOneField(
        "verifybench.Dataset",
        on_delete=models.PROTECT,
        related_name="competition",
        help_text="The dataset that proof-grading projects of this competition belong to.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-date", "name"]

    def __str__(self):
        return self.name


class ProofProblem(models.Model):
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="problems")
    problem_idx = models.CharField(max_length=50, help_text="The problem's number or id within the competition.")
    position = models.PositiveIntegerField(default=0, help_text="Order of the problem within the competition.")
    statement = models.TextField()
    max_points = models.PositiveSmallIntegerField(default=7, validators=[MinValueValidator(1)])
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["competition_id", "position", "problem_idx"]
        constraints = [
            models.UniqueConstraint(fields=["competition", "problem_idx"], name="one_problem_idx_per_competition"),
            models.CheckConstraint(condition=models.Q(max_points__gte=1), name="proof_problem_max_points_positive"),
        ]

    def __str__(self):
        return f"{self.competition} P{self.problem_idx}"

    def latest_rubric(self):
        return self.rubrics.order_by("-version").first()


class OfficialSolution(models.Model):
    problem = models.ForeignKey(ProofProblem, on_delete=models.CASCADE, related_name="solutions")
    position = models.PositiveSmallIntegerField(default=1)
    title = models.CharField(max_length=200, blank=True)
    text = models.TextField()

    class Meta:
        ordering = ["problem_id", "position", "id"]

    def __str__(self):
        return f"solution {self.position} of {self.problem}"


class Rubric(models.Model):
    """One version of a problem's rubric, stored in `proof_scoring.rubric_to_dict` form.

    A version that any grade points at is immutable: an edit becomes a new version (see
    `grading.proofs.services.save_rubric`) and the grades keep pointing at theirs.
    """

    problem = models.ForeignKey(ProofProblem, on_delete=models.CASCADE, related_name="rubrics")
    version = models.PositiveIntegerField(default=1)
    spec = models.JSONField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["problem_id", "-version"]
        constraints = [models.UniqueConstraint(fields=["problem", "version"], name="rubric_problem_version_unique")]

    def __str__(self):
        return f"rubric v{self.version} of {self.problem}"

    def is_used(self) -> bool:
        return self.pk is not None and Label.objects.filter(details__rubric_id=self.pk).exists()

    def save(self, *args, **kwargs):
        if self.pk is not None and self.is_used():
            stored = Rubric.objects.filter(pk=self.pk).values_list("problem_id", "version", "spec").first()
            if stored is not None and stored != (self.problem_id, self.version, self.spec):
                raise RubricInUseError(f"{self} has grades; save the edit as a new version.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if self.is_used():
            raise RubricInUseError(f"{self} has grades and cannot be deleted.")
        return super().delete(*args, **kwargs)


class ModelInfo(models.Model):
    """What is known about a model whose proofs are graded; the release date flags possible contamination."""

    name = models.CharField(max_length=200, unique=True)
    release_date = models.DateField(null=True, blank=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "model info"
        verbose_name_plural = "model info"

    def __str__(self):
        return self.name


class ProofSubmission(models.Model):
    """One model proof of one problem. Graders only ever see `anonymous_id`, never the model name."""

    problem = models.ForeignKey(ProofProblem, on_delete=models.CASCADE, related_name="submissions")
    model_name = models.CharField(max_length=200)
    model_config = models.JSONField(default=dict, blank=True)
    run_index = models.PositiveIntegerField(default=0)
    text = models.TextField()
    anonymous_id = models.CharField(max_length=16, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["problem_id", "model_name", "run_index"]
        constraints = [
            models.UniqueConstraint(fields=["problem", "model_name", "run_index"], name="one_proof_per_model_run"),
        ]

    def __str__(self):
        return f"proof {self.anonymous_id}"

    def save(self, *args, **kwargs):
        if not self.anonymous_id:
            self.anonymous_id = anonymous_submission_id(self.problem_id, self.model_name, self.run_index)
        super().save(*args, **kwargs)


def anonymous_submission_id(problem_id: int, model_name: str, run_index: int) -> str:
    """A short id that names a submission without revealing its model: a keyed hash under SECRET_KEY."""
    message = f"{problem_id}\x1f{model_name}\x1f{run_index}".encode()
    return "P-" + hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()[:10]
