"""The `all-labels` export format: every human label of a correctness project, one row per label, beside the item's
final label, for agreement studies (kappa, alpha, annotator models) and audits of the protocol.

Gold items (they check annotators) and excluded items are left out; an item still open has no final label yet. The
annotator is the same pseudonym the other formats write, so rows of several exports can be joined by annotator.
"""

from __future__ import annotations

from collections.abc import Iterator

from annotation.models import Item, Label
from verifybench.models import Completion

from . import pseudonyms
from .builders import pseudonym_key
from .columns import BOOL, FLOAT, Column
from .registry import (
    ExportFormat,
    ExportPlan,
    ExportPreview,
    ExportRow,
    RowFacts,
    register_export_format,
)

COLUMNS = (
    Column("question_id"),
    Column("completion_id"),
    Column("completion_model"),
    Column("annotator"),
    Column("label", BOOL),
    Column("unsuitable", BOOL),
    Column("tiebreak", BOOL),
    Column("labeled_at"),
    Column("seconds_spent", FLOAT),
    Column("note"),
    Column("final_label", BOOL),
    Column("final_label_by"),
    Column("item_state"),
)


def labelled_items(project, options: dict):
    items = Item.objects.filter(project=project, excluded=False, is_gold=False)
    if options.get("question_ids"):
        chosen = Completion.objects.filter(
            question__dataset_id=project.dataset_id, question__external_id__in=options["question_ids"]
        )
        items = items.filter(subject_id__in=chosen.values("pk"))
    return items


def project_labels(project, options: dict):
    return Label.objects.filter(item__in=labelled_items(project, options).values("pk"))


def preview_all_labels(project, options: dict) -> ExportPreview:
    rows = project_labels(project, options).count()
    reason = "" if rows else "no annotator has labelled an item of this project yet (gold items are left out)"
    return ExportPreview(rows=rows, reason=reason)


def _rows(labels: list[tuple], key: bytes, named: dict[int, str]) -> list[ExportRow]:
    item_ids = {row[1] for row in labels}
    items = {
        pk: (subject_id, final, resolution, state)
        for pk, subject_id, final, resolution, state in Item.objects.filter(pk__in=item_ids).values_list(
            "pk", "subject_id", "final_value", "resolution", "state"
        )
    }
    completions = {
        pk: (question_id, completion_id, model)
        for pk, question_id, completion_id, model in Completion.objects.filter(
            pk__in={subject for subject, *_ in items.values()}
        ).values_list("pk", "question__external_id", "external_id", "model_name")
    }
    rows = []
    for _, item_id, annotator_id, value, unsuitable, tiebreak, created_at, seconds, note in labels:
        subject_id, final, resolution, state = items[item_id]
        question_id, completion_id, model = completions.get(subject_id, ("", "", ""))
        if annotator_id not in named:
            named[annotator_id] = pseudonyms.pseudonym(key, annotator_id)
        label = value if isinstance(value, bool) and not unsuitable else None
        data = {
            "question_id": question_id,
            "completion_id": completion_id,
            "completion_model": model,
            "annotator": named[annotator_id],
            "label": label,
            "unsuitable": unsuitable,
            "tiebreak": tiebreak,
            "labeled_at": created_at.isoformat(),
            "seconds_spent": seconds,
            "note": note,
            "final_label": final if isinstance(final, bool) else None,
            "final_label_by": resolution or "",
            "item_state": state,
        }
        rows.append(ExportRow(data=data, facts=RowFacts(label=label, model=model, resolution=resolution or "")))
    return rows


def plan_all_labels(project, options: dict) -> ExportPlan:
    labels = project_labels(project, options)
    total = labels.count()
    size = options["chunk_size"]
    key = pseudonym_key()
    named: dict[int, str] = {}

    def chunks() -> Iterator[list[ExportRow]]:
        last_id = 0
        while True:
            page = list(
                labels.filter(pk__gt=last_id)
                .order_by("id")
                .values_list(
                    "id",
                    "item_id",
                    "annotator_id",
                    "value",
                    "unsuitable",
                    "is_tiebreak",
                    "created_at",
                    "seconds_spent",
                    "note",
                )[:size]
            )
            if not page:
                return
            last_id = page[-1][0]
            yield _rows(page, key, named)

    return ExportPlan(total=total, chunks=chunks(), parameters={"builder": "all-labels"})


def describe_all_labels(options: dict) -> str:
    return (
        "Every human label of the project, one row per label in the order they were given (gold items, which check "
        "the annotators, and excluded items are left out): the annotator as a pseudonym, the label (empty when the "
        "annotator marked the item unsuitable), whether it was a tie-break, when it was given and how long it took, "
        "the annotator's note, and beside it the item's final label and how it was decided (empty while the item is "
        "still open)."
    )


ALL_LABELS = register_export_format(
    ExportFormat(
        name="all-labels",
        title="Every human label (for agreement studies)",
        columns=COLUMNS,
        plan=plan_all_labels,
        file_stem="all_labels",
        describe=describe_all_labels,
        preview=preview_all_labels,
    )
)
