"""The built-in export formats: VerifyBench (balanced), VerifyBench-Hard (natural), mu-MATH and MathArena final
answers. Public fields come out as the imported file spelled them (`origin`): integer ids stay integers, the file's
answer-type strings stay as written, and the taxonomy code the app uses is added in a column of its own.

Each reads the final human labels of a correctness project. Only items that are resolved, not excluded as
unsuitable and not gold are ever read. The selection passes read ids and labels only; texts are read chunk by chunk
while the files are written, so memory stays bounded by the chunk size.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator

from django.conf import settings
from django.db.models import Case, CharField, Count, F, When
from django.db.models.functions import Substr

from annotation import workflow
from annotation.models import Item, Label
from core import taxonomy
from verifybench.models import Completion, Question

from . import pseudonyms
from .columns import (
    MATHARENA_COLUMNS,
    MUMATH_COLUMNS,
    VERIFYBENCH_COLUMNS,
    confidence_columns,
    matharena_columns,
    mumath_columns,
    verifybench_columns,
)
from .registry import ExportFormat, ExportPlan, ExportPreview, ExportRow, Option, RowFacts, register_export_format
from .selection import choose_balanced, choose_models, choose_subset, pick_one

COARSE_TYPES = tuple(taxonomy.COARSE_CLASSES)

_COMPLETION_FIELDS = (
    "pk",
    "external_id",
    "text",
    "model_name",
    "origin",
    "sampling",
    "sample_index",
    "metadata",
    "question_id",
    "question__external_id",
    "question__text",
    "question__source",
    "question__domain",
    "question__answer_type",
    "question__answer_class",
    "question__origin",
    "reference_final_answer",
    "reference_solution",
)
_PAGE = 5000


def exportable_items(project, options: dict):
    """Items whose final label may be exported: resolved, not unsuitable, not gold, with a boolean final label."""
    items = Item.objects.filter(
        project=project,
        state=workflow.RESOLVED,
        excluded=False,
        is_gold=False,
        final_value__in=[True, False],
    )
    if options.get("question_ids"):
        chosen = Completion.objects.filter(
            question__dataset_id=project.dataset_id, question__external_id__in=options["question_ids"]
        )
        items = items.filter(subject_id__in=chosen.values("pk"))
    return items


def _completions(ids) -> dict[int, dict]:
    """The completions (with their question and primary reference) of these ids, as records keyed by id."""
    rows = Completion.objects.filter(pk__in=list(ids)).with_primary_reference().values_list(*_COMPLETION_FIELDS)
    found = {}
    for values in rows:
        record = dict(zip(_COMPLETION_FIELDS, values, strict=True))
        found[record.pop("pk")] = {
            f"completion__{key}" if not key.startswith("reference_") else key: value for key, value in record.items()
        }
    return found


def _records(item_rows: list[tuple]) -> list[dict]:
    """Export records of (item_id, subject_id, final_value, resolution, confidence) rows, in the order given."""
    completions = _completions(row[1] for row in item_rows)
    return [
        {
            "id": item_id,
            "is_correct": final is True,
            "resolution": resolution,
            "confidence": confidence,
            **completions[subject_id],
        }
        for item_id, subject_id, final, resolution, confidence in item_rows
        if subject_id in completions
    ]


def _completion_facts(items, *fields: str):
    """(final_value, *completion fields) of every exportable item, read in pages: no join, flat memory per page."""
    last_id = 0
    while True:
        page = list(items.filter(pk__gt=last_id).order_by("id").values_list("id", "subject_id", "final_value")[:_PAGE])
        if not page:
            return
        last_id = page[-1][0]
        values = {
            row[0]: row[1:]
            for row in Completion.objects.filter(pk__in=[row[1] for row in page]).values_list("pk", *fields)
        }
        for _, subject_id, final in page:
            if subject_id in values:
                yield (final, *values[subject_id])


def pseudonym_key() -> bytes:
    """The key of the annotator pseudonyms: EXPORT_PSEUDONYM_KEY, else one derived from SECRET_KEY."""
    configured = getattr(settings, "EXPORT_PSEUDONYM_KEY", "")
    return configured.encode() if configured else pseudonyms.derived_key(settings.SECRET_KEY)


def _annotators(item_ids: list[int]) -> dict[int, list[str]]:
    """Who labelled each item, first labeller first, as pseudonyms. Read as one range of the label index: a chunk's
    item ids are mostly consecutive, and a range scan is much cheaper than a long IN list (labels of other items are
    dropped)."""
    wanted = set(item_ids)
    by_item: dict[int, list[str]] = defaultdict(list)
    if not wanted:
        return by_item
    labels = Label.objects.filter(item_id__gte=min(wanted), item_id__lte=max(wanted))
    if len(wanted) * 4 < max(wanted) - min(wanted):
        labels = Label.objects.filter(item_id__in=item_ids)  # scattered ids (a sample): the range would be wasteful
    key = pseudonym_key()
    named: dict[int, str] = {}
    for item_id, annotator_id in labels.order_by("item_id", "created_at", "id").values_list("item_id", "annotator_id"):
        if item_id in wanted:
            if annotator_id not in named:
                named[annotator_id] = pseudonyms.pseudonym(key, annotator_id)
            by_item[item_id].append(named[annotator_id])
    return by_item


def _public_types(code: str, letter: str) -> tuple[str, str]:
    answer_type = taxonomy.BY_CODE[code].public_label if code in taxonomy.BY_CODE else ""
    letter = letter or (code[0] if code else "")
    return answer_type, taxonomy.coarse_label(letter) if letter in taxonomy.COARSE_CLASSES else ""


def _facts(values: dict) -> RowFacts:
    answer_type, answer_subtype = _public_types(
        values["completion__question__answer_type"], values["completion__question__answer_class"]
    )
    return RowFacts(
        answer_type=answer_type,
        answer_subtype=answer_subtype,
        domain=values["completion__question__domain"],
        source=values["completion__question__source"],
        label=bool(values["is_correct"]),
        model=values["completion__model_name"],
        resolution=values["resolution"],
    )


def with_confidence(project, columns: tuple) -> tuple:
    """A project that aggregates with its annotator model adds the final label's posterior confidence as a last
    column; a majority project's files keep the public layout exactly."""
    return confidence_columns(columns, project.aggregation == "model")


def _answer(values: dict) -> str:
    return values["reference_final_answer"] or values["reference_solution"] or ""


def _as_imported(values: dict, field_name: str, stored, *, of: str = "question") -> object:
    """A public field as the imported file spelled it (an integer id stays an integer, "A3 - Fraction" stays as
    written), or the stored value for rows that did not come from such a file."""
    origin = values["completion__question__origin" if of == "question" else "completion__origin"] or {}
    return origin.get(field_name, stored)


def verifybench_row(values: dict, annotators: list[str]) -> ExportRow:
    facts = _facts(values)
    return ExportRow(
        data={
            "question_id": _as_imported(values, "question_id", values["completion__question__external_id"]),
            "question": values["completion__question__text"],
            "answer": _as_imported(values, "answer", _answer(values)),
            "completion_id": _as_imported(values, "completion_id", values["completion__external_id"], of="completion"),
            "completion": values["completion__text"],
            "completion_model": values["completion__model_name"],
            "gold_correct": facts.label,
            "answer_type": _as_imported(values, "answer_type", facts.answer_type),
            "answer_subtype": _as_imported(values, "answer_subtype", facts.answer_subtype),
            "source": values["completion__question__source"],
            "annotator": annotators,
            "answer_type_code": values["completion__question__answer_type"] or "",
            "confidence": values["confidence"],
        },
        facts=facts,
    )


def mumath_row(values: dict, annotators: list[str]) -> ExportRow:
    return ExportRow(
        data={
            "uuid": _as_imported(values, "uuid", values["completion__question__external_id"]),
            "problem_statement": values["completion__question__text"],
            "golden_answer": _as_imported(values, "golden_answer", _answer(values)),
            "model": values["completion__model_name"],
            "model_output": values["completion__text"],
            "label": bool(values["is_correct"]),
            "confidence": values["confidence"],
        },
        facts=_facts(values),
    )


def matharena_row(values: dict, annotators: list[str]) -> ExportRow:
    metadata = values["completion__metadata"] or {}
    return ExportRow(
        data={
            "problem_idx": _as_imported(values, "problem_idx", values["completion__question__external_id"]),
            "problem": values["completion__question__text"],
            "model_name": values["completion__model_name"],
            "model_config": values["completion__sampling"],
            "idx_answer": values["completion__sample_index"],
            "answer": values["completion__text"],
            "gold_answer": _as_imported(values, "gold_answer", _answer(values)),
            "parsed_answer": metadata.get("parsed_answer"),
            "correct": bool(values["is_correct"]),
            "confidence": values["confidence"],
        },
        facts=_facts(values),
    )


def _rows_for(item_ids: list[int], make_row) -> list[ExportRow]:
    """The rows of these items, in the order given."""
    rows = Item.objects.filter(pk__in=item_ids).values_list(
        "id", "subject_id", "final_value", "resolution", "confidence"
    )
    found = {record["id"]: record for record in _records(list(rows))}
    annotators = _annotators(item_ids)
    return [make_row(found[item_id], annotators.get(item_id, [])) for item_id in item_ids if item_id in found]


def _chunked(values: Iterable, size: int) -> Iterator[list]:
    chunk: list = []
    for value in values:
        chunk.append(value)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _parameters(options: dict, **resolved) -> dict:
    shown = {k: v for k, v in options.items() if k not in ("chunk_size", "chunk_delay")}
    return {**shown, **resolved}


# -- previews: the rows each format would write, counted by the database ----------------------------------------------


def _labelled_completions(project, options: dict, *finals: bool):
    """The completions with an exportable item (with one of these final labels, when given), as a subquery."""
    items = exportable_items(project, options)
    if finals:
        items = items.filter(final_value__in=list(finals))
    return Completion.objects.filter(pk__in=items.values("subject_id"))


def _no_labels(title: str, options: dict) -> str:
    if options.get("question_ids"):
        return (
            f"{title} reads completions with a final correct or incorrect label; none of the "
            f"{len(options['question_ids'])} chosen question(s) has one."
        )
    return f"{title} reads completions with a final correct or incorrect label; this project has none yet."


def _natural_preview(title: str):
    def preview(project, options: dict) -> ExportPreview:
        rows = exportable_items(project, options).count()
        return ExportPreview(rows=rows, reason="" if rows else _no_labels(title, options))

    return preview


def preview_balanced(project, options: dict) -> ExportPreview:
    """Two rows per drawn question: per coarse type, up to K of the questions with both a correct and an incorrect
    final label (the type is the question's coarse class, else the first letter of its answer-type code)."""
    title = "VerifyBench (balanced)"
    with_correct = _labelled_completions(project, options, True).values("question_id")
    with_incorrect = _labelled_completions(project, options, False).values("question_id")
    letter = Case(
        When(answer_class="", then=Substr("answer_type", 1, 1)), default=F("answer_class"), output_field=CharField()
    )
    by_letter = dict(
        Question.objects.filter(pk__in=with_correct)
        .filter(pk__in=with_incorrect)
        .annotate(letter=letter)
        .values("letter")
        .annotate(questions=Count("pk"))
        .values_list("letter", "questions")
    )
    per_type = options["per_type"]
    rows = 2 * sum(min(per_type, by_letter.get(coarse, 0)) for coarse in COARSE_TYPES)
    if rows:
        return ExportPreview(rows=rows)
    untyped = sum(by_letter.values())
    if untyped:
        reason = (
            f"{title} needs both a correct and an incorrect completion of a question with an answer type (A to D); "
            f"the {untyped} question(s) that have both have no answer type."
        )
    elif not exportable_items(project, options).exists():
        reason = _no_labels(title, options)
    else:
        reason = f"{title} needs both a correct and an incorrect completion of a question; no question has both."
    return ExportPreview(rows=0, reason=reason)


def preview_mumath(project, options: dict) -> ExportPreview:
    """One row per (problem, author model) with a labelled solution, over the chosen models; with a number of
    problems drawn at random, the count is an upper bound until the draw is made."""
    title = "mu-MATH"
    labelled = _labelled_completions(project, options)
    problems_per_model = dict(
        labelled.values("model_name")
        .annotate(problems=Count("question_id", distinct=True))
        .values_list("model_name", "problems")
    )
    models = choose_models(problems_per_model, options["models"], options.get("author_models"))
    rows = sum(problems_per_model.get(model, 0) for model in models)
    if not rows:
        if not problems_per_model:
            return ExportPreview(rows=0, reason=_no_labels(title, options))
        return ExportPreview(
            rows=0,
            reason=(
                f"{title} reads the solutions of the author models asked for ({', '.join(models)}); none of them has "
                f"a solution with a final label. Models with labelled solutions: {', '.join(sorted(problems_per_model))}."
            ),
        )
    wanted = options.get("problems")
    if wanted:
        candidates = labelled.filter(model_name__in=models).values("question_id").distinct().count()
        if wanted < candidates:
            return ExportPreview(rows=min(rows, wanted * len(models)), exact=False)
    return ExportPreview(rows=rows)


# -- VerifyBench-Hard: every exportable item with its natural label balance ---------------------------------------


def plan_natural(project, options: dict, make_row=verifybench_row) -> ExportPlan:
    items = exportable_items(project, options)
    total = items.count()
    size = options["chunk_size"]

    def chunks() -> Iterator[list[ExportRow]]:
        # Keyset pages on the primary key: each chunk is a short query of its own, so no cursor stays open (or is
        # materialised by the server) across the progress updates committed between chunks.
        last_id = 0
        while True:
            page = list(
                items.filter(pk__gt=last_id)
                .order_by("id")
                .values_list("id", "subject_id", "final_value", "resolution", "confidence")[:size]
            )
            if not page:
                return
            last_id = page[-1][0]
            records = _records(page)
            annotators = _annotators([record["id"] for record in records])
            yield [make_row(record, annotators.get(record["id"], [])) for record in records]

    return ExportPlan(total=total, chunks=chunks(), parameters=_parameters(options, builder="natural"))


def describe_natural(options: dict) -> str:
    text = (
        "Natural builder: every completion of the project with a final human label is included, with the "
        "label balance as it came out of annotation (no balancing, no sampling)."
    )
    if options.get("question_ids"):
        text += f" Restricted to {len(options['question_ids'])} chosen questions."
    return text


# -- VerifyBench: K questions per coarse answer type, one correct and one incorrect completion each ------------------


def plan_balanced(project, options: dict) -> ExportPlan:
    per_type, seed, size = options["per_type"], options["seed"], options["chunk_size"]
    labels_by_question: dict[int, set[bool]] = defaultdict(set)
    letter_of: dict[int, str] = {}
    facts = _completion_facts(
        exportable_items(project, options), "question_id", "question__answer_class", "question__answer_type"
    )
    for final, question_id, letter, code in facts:
        labels_by_question[question_id].add(bool(final))
        letter_of[question_id] = letter or (code[0] if code else "")
    candidates: dict[str, list[int]] = defaultdict(list)
    untyped = 0
    for question_id in sorted(labels_by_question):
        if labels_by_question[question_id] != {True, False}:
            continue
        if letter_of[question_id] in COARSE_TYPES:
            candidates[letter_of[question_id]].append(question_id)
        else:
            untyped += 1
    chosen, shortfalls = choose_balanced(candidates, COARSE_TYPES, per_type, seed)
    del labels_by_question, letter_of
    notes = []
    if untyped:
        notes.append(
            f"{untyped} question(s) with both a correct and an incorrect completion were left out because "
            "they have no answer type."
        )
    ordered_questions = [question_id for letter in COARSE_TYPES for question_id in chosen[letter]]
    named_shortfalls = {taxonomy.coarse_label(letter): info for letter, info in shortfalls.items()}

    def chunks() -> Iterator[list[ExportRow]]:
        for questions in _chunked(ordered_questions, max(1, size // 2)):
            by_question: dict[int, dict[bool, list[int]]] = defaultdict(lambda: {True: [], False: []})
            question_of = dict(Completion.objects.filter(question_id__in=questions).values_list("pk", "question_id"))
            items = exportable_items(project, options).filter(subject_id__in=list(question_of))
            for item_id, subject_id, final in items.order_by("id").values_list("id", "subject_id", "final_value"):
                question_id = question_of[subject_id]
                by_question[question_id][bool(final)].append(item_id)
            picked = []
            for question_id in questions:
                picked.append(pick_one(by_question[question_id][True], seed, "question", question_id, "correct"))
                picked.append(pick_one(by_question[question_id][False], seed, "question", question_id, "incorrect"))
            yield _rows_for(picked, verifybench_row)

    return ExportPlan(
        total=2 * len(ordered_questions),
        chunks=chunks(),
        parameters=_parameters(
            options, builder="balanced", selected_per_type={taxonomy.coarse_label(k): len(v) for k, v in chosen.items()}
        ),
        shortfalls=named_shortfalls,
        notes=notes,
    )


def describe_balanced(options: dict) -> str:
    return (
        f"Balanced builder: for each coarse answer type (A numeric values, B expressions, C multiple choice, "
        f"D string) up to {options['per_type']} questions were drawn at random (seed {options['seed']}) among "
        "the questions that have at least one completion finally labelled correct and one finally labelled "
        "incorrect; for each drawn question one correct and one incorrect completion were drawn, giving two rows "
        "per question and an even label balance. A type with fewer eligible questions gives all it has and is "
        "listed under Shortfalls."
    )


# -- mu-MATH: chosen problems x up to N author models, one judged solution per row ---------------------------------


def plan_mumath(project, options: dict) -> ExportPlan:
    seed, size, wanted_models = options["seed"], options["chunk_size"], options["models"]
    problems_by_model: dict[str, set[int]] = defaultdict(set)
    for _, question_id, model in _completion_facts(exportable_items(project, options), "question_id", "model_name"):
        problems_by_model[model].add(question_id)
    models = choose_models(
        {m: len(p) for m, p in problems_by_model.items()}, wanted_models, options.get("author_models")
    )
    candidates = sorted(set().union(*(problems_by_model.get(m, set()) for m in models)) if models else set())
    problems = choose_subset(candidates, options.get("problems"), seed, "problems")
    chosen_set = set(problems)
    coverage = {m: len(problems_by_model.get(m, set()) & chosen_set) for m in models}
    shortfalls: dict[str, dict[str, int]] = {}
    if len(models) < wanted_models and not options.get("author_models"):
        shortfalls["author models"] = {"requested": wanted_models, "available": len(models), "selected": len(models)}
    if options.get("problems") and len(candidates) < options["problems"]:
        shortfalls["problems"] = {
            "requested": options["problems"],
            "available": len(candidates),
            "selected": len(problems),
        }
    for model, covered in coverage.items():
        if covered < len(problems):
            shortfalls[f"model {model}"] = {"requested": len(problems), "available": covered, "selected": covered}
    del problems_by_model

    def chunks() -> Iterator[list[ExportRow]]:
        for questions in _chunked(problems, max(1, size // max(1, len(models)))):
            by_pair: dict[tuple[int, str], list[int]] = defaultdict(list)
            pair_of = {
                pk: (question_id, model)
                for pk, question_id, model in Completion.objects.filter(
                    question_id__in=questions, model_name__in=models
                ).values_list("pk", "question_id", "model_name")
            }
            items = exportable_items(project, options).filter(subject_id__in=list(pair_of))
            for item_id, subject_id in items.order_by("id").values_list("id", "subject_id"):
                by_pair[pair_of[subject_id]].append(item_id)
            picked = [
                pick_one(by_pair[(question_id, model)], seed, "solution", question_id, model)
                for question_id in questions
                for model in models
                if by_pair.get((question_id, model))
            ]
            yield _rows_for(picked, mumath_row)

    return ExportPlan(
        total=sum(coverage.values()),
        chunks=chunks(),
        parameters=_parameters(options, builder="mumath", author_models=models, problems_selected=len(problems)),
        shortfalls=shortfalls,
    )


def describe_mumath(options: dict) -> str:
    models = (
        ", ".join(options["author_models"])
        if options.get("author_models")
        else (f"the {options['models']} author models with the most labelled problems")
    )
    problems = (
        f"{options['problems']} problems drawn at random (seed {options['seed']})"
        if options.get("problems")
        else "every problem with a labelled solution by one of them"
    )
    return (
        f"mu-MATH builder: author models {models}; {problems}. For each problem and author model one solution "
        "with a final human label is given (drawn with the seed when the model has several), so a problem has up "
        "to one row per author model. The label is the final human judgement of the solution's correctness."
    )


def _field_types(project) -> dict:
    return project.dataset.field_types or {}


def plan_matharena(project, options: dict) -> ExportPlan:
    return plan_natural(project, options, make_row=matharena_row)


def describe_matharena(options: dict) -> str:
    return (
        "MathArena final answers: every model answer of the project with a final human label, one row per answer, "
        "in MathArena's layout; `correct` is the final human judgement of the answer."
    )


VERIFYBENCH = register_export_format(
    ExportFormat(
        name="verifybench",
        title="VerifyBench (balanced)",
        columns=VERIFYBENCH_COLUMNS,
        plan=plan_balanced,
        options=(Option("per_type", int, 250, 1, 1_000_000, help="Questions per coarse answer type (K)."),),
        describe=describe_balanced,
        columns_for=lambda project: with_confidence(project, verifybench_columns(_field_types(project))),
        preview=preview_balanced,
    )
)
VERIFYBENCH_HARD = register_export_format(
    ExportFormat(
        name="verifybench-hard",
        title="VerifyBench-Hard (natural label balance)",
        columns=VERIFYBENCH_COLUMNS,
        plan=plan_natural,
        file_stem="verifybench_hard",
        describe=describe_natural,
        columns_for=lambda project: with_confidence(project, verifybench_columns(_field_types(project))),
        preview=_natural_preview("VerifyBench-Hard (natural label balance)"),
    )
)
MUMATH = register_export_format(
    ExportFormat(
        name="mumath",
        title="mu-MATH",
        columns=MUMATH_COLUMNS,
        plan=plan_mumath,
        options=(
            Option("models", int, 4, 1, 1000, help="Author models per problem (N)."),
            Option("author_models", list, None, help="Use exactly these author models instead of the N most common."),
            Option("problems", int, None, 1, 10_000_000, help="Number of problems to draw; all when absent."),
        ),
        describe=describe_mumath,
        columns_for=lambda project: with_confidence(project, mumath_columns(_field_types(project))),
        preview=preview_mumath,
    )
)
MATHARENA = register_export_format(
    ExportFormat(
        name="matharena",
        title="MathArena final answers",
        columns=MATHARENA_COLUMNS,
        plan=plan_matharena,
        file_stem="matharena_answers",
        describe=describe_matharena,
        columns_for=lambda project: with_confidence(project, matharena_columns(_field_types(project))),
        preview=_natural_preview("MathArena final answers"),
    )
)
