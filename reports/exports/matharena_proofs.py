"""The `matharena-proofs` export format: the graded proofs of a proof-grading project in MathArena's layout.

Registered with the export registry when the registry loads its built-in formats. Only resolved, non-excluded, non-gold proof
items are read; the row itself is built by the pure `reports.exports.matharena_rows.matharena_graded_row`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import cast

from django.db.models import OuterRef, Subquery

from annotation import workflow
from annotation.models import Item, Label
from grading.models import ProofSubmission, Rubric
from grading.proofs import scoring as proof_scoring
from grading.proofs.subject import PROOF_GRADE

from . import matharena_rows
from .columns import INT, JSON, STRING, Column
from .registry import ExportFormat, ExportPlan, ExportPreview, ExportRow, RowFacts, register_export_format

_KINDS = {
    "problem_idx": JSON,
    "problem": STRING,
    "model_name": STRING,
    "model_config": JSON,
    "idx_answer": INT,
    "answer": STRING,
    "final_points": JSON,
    "final_method": STRING,
}
COLUMNS: tuple[Column, ...] = tuple(
    Column(name, _KINDS.get(name, INT if name.startswith("max_points") else JSON))
    for name in matharena_rows.column_names()
)


def exportable_proof_items(project, options: dict):
    items = Item.objects.filter(project=project, state=workflow.RESOLVED, excluded=False, is_gold=False)
    if options.get("question_ids"):
        chosen = ProofSubmission.objects.filter(problem__problem_idx__in=options["question_ids"]).values("pk")
        items = items.filter(subject_id__in=chosen)
    return items


def _rows(item_ids: list[int]) -> list[ExportRow]:
    items = list(Item.objects.filter(pk__in=item_ids).order_by("id"))
    submissions = ProofSubmission.objects.select_related("problem").in_bulk([item.subject_id for item in items])
    labels_by_item: dict[int, list[Label]] = defaultdict(list)
    for label in Label.objects.filter(item_id__in=item_ids, unsuitable=False).order_by("item_id", "created_at", "id"):
        labels_by_item[label.item_id].append(label)
    rubric_ids = {label.details.get("rubric_id") for labels in labels_by_item.values() for label in labels}
    rubrics = {
        rubric.pk: proof_scoring.rubric_from_dict(rubric.spec) for rubric in Rubric.objects.filter(pk__in=rubric_ids)
    }
    rows = []
    for item in items:
        submission = submissions[item.subject_id]
        judges = [
            matharena_rows.JudgeGrade(
                total=cast(float, label.value),
                max_points=label.details.get("max_points", 7),
                rubric=rubrics[label.details["rubric_id"]],
                details=label.details,
            )
            for label in labels_by_item[item.pk]
            if label.details.get("rubric_id") in rubrics
        ][: matharena_rows.JUDGE_SLOTS]
        data = matharena_rows.matharena_graded_row(
            problem_idx=submission.problem.problem_idx,
            problem=submission.problem.statement,
            model_name=submission.model_name,
            model_config=submission.model_config,
            idx_answer=submission.run_index,
            answer=submission.text,
            judges=judges,
            final_points=item.final_value,
            resolution=item.resolution,
        )
        facts = RowFacts(
            model=submission.model_name,
            resolution=item.resolution,
            score=float(item.final_value) if isinstance(item.final_value, int | float) else None,
            max_points=float(submission.problem.max_points),
        )
        rows.append(ExportRow(data=data, facts=facts))
    return rows


def plan_matharena_proofs(project, options: dict) -> ExportPlan:
    position = ProofSubmission.objects.filter(pk=OuterRef("subject_id")).values("problem__position")[:1]
    items = exportable_proof_items(project, options).annotate(position=Subquery(position)).order_by("position", "id")
    item_ids = list(items.values_list("id", flat=True))
    size = options["chunk_size"]

    def chunks() -> Iterator[list[ExportRow]]:
        for start in range(0, len(item_ids), size):
            yield _rows(item_ids[start : start + size])

    shown = {k: v for k, v in options.items() if k not in ("chunk_size", "chunk_delay")}
    return ExportPlan(total=len(item_ids), chunks=chunks(), parameters={**shown, "builder": "matharena-proofs"})


def preview_matharena_proofs(project, options: dict) -> ExportPreview:
    rows = exportable_proof_items(project, options).count()
    if rows:
        return ExportPreview(rows=rows)
    chosen = (
        f"none of the {len(options['question_ids'])} chosen problem(s) has one" if options.get("question_ids") else ""
    )
    return ExportPreview(
        rows=0,
        reason="MathArena proofs (graded) reads proofs with a final score; "
        + (chosen or "this project has none yet")
        + ".",
    )


def describe_matharena_proofs(options: dict) -> str:
    return (
        "MathArena proofs: every proof of the project with a final score, one row per proof. Each grader's points, "
        "per-checkpoint details with their written justifications and the maximum are given as judge 1, 2 and 3 "
        "in grading order; final_points is the mean of two agreeing graders, the median of three, or an "
        "adjudicator's decision, as final_method says. Graders saw the proofs without model names."
    )


MATHARENA_PROOFS = register_export_format(
    ExportFormat(
        name="matharena-proofs",
        title="MathArena proofs (graded)",
        columns=COLUMNS,
        plan=plan_matharena_proofs,
        file_stem="matharena_proofs",
        describe=describe_matharena_proofs,
        project_kind=PROOF_GRADE,
        preview=preview_matharena_proofs,
    ),
    replace=True,
)
