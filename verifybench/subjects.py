"""The benchmark data's subject kinds: the correctness of a completion and the answer type of a question.

Registered with `core.subjects` from VerifybenchConfig.ready(). What an annotator is shown is built here from the
subject alone: the question, the reference answer, and the completion (with its model's name only when the project
shows it). An imported prior label never appears, and in an answer-type project the imported answer type is left out,
since it is the very label being asked for. Items are found by model (completions) and by a text search in the
question and completion text (`filter_subject_ids`).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection
from django.db.models import Prefetch

from core import subjects
from core.rows import fetch_one
from core.search import document_matches, text_matches
from core.subjects import SubjectKind, ViewContext

from .label_rules import ANSWER_TYPE, CORRECTNESS, AnswerTypeRules, CorrectnessRules
from .models import Completion, CompletionSearch, Question, QuestionSearch, ReferenceAnswer

_PRIMARY_FIRST = Prefetch("references", queryset=ReferenceAnswer.objects.order_by("-is_primary", "id"))


def _reference(question: Question | None) -> dict:
    reference = question.primary_reference if question is not None else None
    if reference is None:
        return {"final_answer": "", "solution": ""}
    return {"final_answer": reference.final_answer, "solution": reference.solution}


def _completion(completion_id: int) -> Completion:
    return (
        Completion.objects.select_related("question")
        .prefetch_related(Prefetch("question__references", queryset=ReferenceAnswer.objects.order_by("-is_primary")))
        .get(pk=completion_id)
    )


def _question(question_id: int) -> Question:
    return Question.objects.prefetch_related(_PRIMARY_FIRST).get(pk=question_id)


def _verdicts(context: ViewContext, subject_id: int) -> list[dict]:
    return subjects.verdicts_for(context.kind, subject_id) if context.show_verdicts else []


# -- correctness of a completion --------------------------------------------------------------------------------------


def completion_ids_of(dataset_id: int, chosen: Sequence[int] | None) -> list[int]:
    completions = Completion.objects.filter(question__dataset_id=dataset_id)
    if chosen is not None:
        completions = completions.filter(pk__in=list(chosen))
    return list(completions.order_by("pk").values_list("pk", flat=True))


def completion_answer_types(ids: Sequence[int]) -> dict[int, str]:
    rows = Completion.objects.filter(pk__in=list(ids)).values_list("pk", "question__answer_type")
    return {pk: answer_type or "" for pk, answer_type in rows.iterator(chunk_size=5000)}


_TASK_VIEW_SQL = f"""
    SELECT c.text, c.model_name, q.text, q.answer_type, q.subject, r.final_answer, r.solution
    FROM {Completion._meta.db_table} c
    JOIN {Question._meta.db_table} q ON q.id = c.question_id
    LEFT JOIN {ReferenceAnswer._meta.db_table} r ON r.question_id = q.id AND r.is_primary
    WHERE c.id = %s
"""


def completion_task_view(completion_id: int, context: ViewContext) -> dict:
    # one fixed statement: this runs on every claim, and building it with the ORM (model instances and a
    # prefetch) cost more CPU than the look-up itself
    row = fetch_one(_TASK_VIEW_SQL, [completion_id])
    if row is None:
        raise Completion.DoesNotExist(f"no completion {completion_id}")
    text, model_name, question_text, answer_type, subject, final_answer, solution = row
    shown = {"text": text}
    if context.show_model_names:
        shown["model_name"] = model_name
    return {
        "question": {"text": question_text, "answer_type": answer_type, "subject": subject},
        "reference": {"final_answer": final_answer or "", "solution": solution or ""},
        "completion": shown,
        "my_label": context.my_label,
        "verdicts": _verdicts(context, completion_id),
    }


def completion_review_view(completion_id: int, context: ViewContext) -> dict:
    completion = _completion(completion_id)
    question = completion.question
    return {
        "question": {
            "id": question.pk,
            "external_id": question.external_id,
            "text": question.text,
            "answer_type": question.answer_type,
        },
        "reference": _reference(question),
        "completion": {
            "id": completion.pk,
            "external_id": completion.external_id,
            "text": completion.text,
            "model_name": completion.model_name,
        },
        "verdicts": _verdicts(context, completion_id),
    }


def completion_summaries(ids: Sequence[int]) -> dict[int, dict]:
    rows = Completion.objects.filter(pk__in=list(ids)).values_list(
        "pk", "external_id", "question__external_id", "question__text"
    )
    return {
        pk: {
            "name": f"{question_external_id} / {external_id}",
            "question_external_id": question_external_id,
            "title": question_text,
            "detail": external_id,
        }
        for pk, external_id, question_external_id, question_text in rows
    }


def filter_completion_ids(dataset_id: int, *, model: str = "", text: str = ""):
    """Completions of the dataset by model name and by a search in their text or their question's text."""
    completions = Completion.objects.all()
    if model:
        completions = completions.filter(model_name=model)
    if not text:
        return completions
    # Separate queries, each served by its own index, rather than one OR across a join that no index serves.
    questions = Question.objects.filter(dataset_id=dataset_id)
    return [
        *_searched(completions, CompletionSearch, text),
        *(completions.filter(question__in=found.values("pk")) for found in _searched(questions, QuestionSearch, text)),
    ]


def _searched(rows, search_model, text: str) -> list:
    """`rows` whose text the search matches: on PostgreSQL those whose stored document matches (a GIN index), and
    those whose document is still to be computed (a small partial index) by their text; elsewhere by their text."""
    if connection.vendor != "postgresql":
        return [rows.filter(text_matches("text", text))]
    key = search_model._meta.pk.attname
    documents = search_model.objects.filter(document__isnull=False).filter(document_matches("document", text))
    pending = search_model.objects.filter(document__isnull=True)
    return [
        rows.filter(pk__in=documents.values(key)),
        rows.filter(pk__in=pending.values(key)).filter(text_matches("text", text)),
    ]


def completion_filter_choices(dataset_id: int) -> dict[str, list[tuple[str, str]]]:
    models = (
        Completion.objects.filter(question__dataset_id=dataset_id)
        .order_by("model_name")
        .values_list("model_name", flat=True)
        .distinct()
    )
    return {"model": [(name, name) for name in models]}


# -- answer type of a question ----------------------------------------------------------------------------------------


def question_ids_of(dataset_id: int, chosen: Sequence[int] | None) -> list[int]:
    questions = Question.objects.filter(dataset_id=dataset_id)
    if chosen is not None:
        questions = questions.filter(pk__in=list(chosen))
    return list(questions.order_by("pk").values_list("pk", flat=True))


def question_answer_types(ids: Sequence[int]) -> dict[int, str]:
    rows = Question.objects.filter(pk__in=list(ids)).values_list("pk", "answer_type")
    return {pk: answer_type or "" for pk, answer_type in rows.iterator(chunk_size=5000)}


def question_task_view(question_id: int, context: ViewContext) -> dict:
    question = _question(question_id)
    return {
        "question": {"text": question.text, "answer_type": "", "subject": question.subject},
        "reference": _reference(question),
        "completion": None,
        "my_label": context.my_label,
        "verdicts": [],
    }


def question_review_view(question_id: int, context: ViewContext) -> dict:
    question = _question(question_id)
    return {
        "question": {
            "id": question.pk,
            "external_id": question.external_id,
            "text": question.text,
            "answer_type": question.answer_type,
        },
        "reference": _reference(question),
        "completion": None,
        "verdicts": [],
    }


def question_summaries(ids: Sequence[int]) -> dict[int, dict]:
    rows = Question.objects.filter(pk__in=list(ids)).values_list("pk", "external_id", "text")
    return {
        pk: {"name": external_id, "question_external_id": external_id, "title": text, "detail": "question only"}
        for pk, external_id, text in rows
    }


def filter_question_ids(dataset_id: int, *, text: str = ""):
    return _searched(Question.objects.all(), QuestionSearch, text)


CORRECTNESS_KIND = SubjectKind(
    name=CORRECTNESS,
    title="Correctness",
    rules=CorrectnessRules(),
    subject_ids=completion_ids_of,
    answer_types=completion_answer_types,
    task_view=completion_task_view,
    review_view=completion_review_view,
    summaries=completion_summaries,
    load=lambda pk: Completion.objects.select_related("question").get(pk=pk),
    extra={"form_title": "Correctness of each completion", "subject": "completion"},
    filter_subject_ids=filter_completion_ids,
    filter_criteria=("model", "text"),
    filter_choices=completion_filter_choices,
)
ANSWER_TYPE_KIND = SubjectKind(
    name=ANSWER_TYPE,
    title="Answer type",
    rules=AnswerTypeRules(),
    subject_ids=question_ids_of,
    answer_types=question_answer_types,
    task_view=question_task_view,
    review_view=question_review_view,
    summaries=question_summaries,
    load=lambda pk: Question.objects.get(pk=pk),
    extra={"form_title": "Answer type of each question", "subject": "question"},
    filter_subject_ids=filter_question_ids,
    filter_criteria=("text",),
)


def register() -> None:
    subjects.register(CORRECTNESS_KIND)
    subjects.register(ANSWER_TYPE_KIND)
