"""The item browser's text search finds imported texts: on PostgreSQL through search documents computed after the
import commits (and through the texts themselves while their documents are pending), elsewhere through the texts."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection

from annotation import selectors, services
from annotation.selectors import ItemFilter
from config.celery import app as celery_app
from verifybench import imports
from verifybench import services as data_services
from verifybench.models import Completion, CompletionSearch, Dataset, Question, QuestionSearch

on_postgres = pytest.mark.skipif(connection.vendor != "postgresql", reason="search documents exist on PostgreSQL")

LINES = [
    ("q1", "Find the area of the triangle with sides 3, 4 and 5.", "c1", "Heron's formula gives the area: 6."),
    ("q1", "Find the area of the triangle with sides 3, 4 and 5.", "c2", "Half the base times the height is 6."),
    ("q2", "Solve x^2 - 5x + 6 = 0.", "c3", "Factoring gives roots 2 and 3 by the quadratic formula."),
]


def write_file(path) -> str:
    with open(path, "w", encoding="utf-8") as out:
        for question_id, question, completion_id, completion in LINES:
            line = {
                "question_id": question_id,
                "question": question,
                "answer": "6",
                "completion_id": completion_id,
                "completion": completion,
                "completion_model": "model-a",
                "gold_correct": True,
                "answer_type": "A1 - Integer",
                "answer_subtype": "A - Numeric Values",
                "source": "math_reasoning/MATH",
            }
            out.write(json.dumps(line) + "\n")
    return str(path)


def imported_project(tmp_path):
    data_services.import_jsonl(dataset_name="searched", source=write_file(tmp_path / "searched.jsonl"))
    dataset = Dataset.objects.get(name="searched")
    return services.create_project(dataset=dataset, kind="correctness", seed=5), dataset


def found(project, text: str) -> list[str]:
    items = selectors.filtered_items(project, ItemFilter.from_params({"q": text}))
    subjects = Completion.objects.filter(pk__in=items.values("subject_id"))
    return sorted(subjects.values_list("external_id", flat=True))


def pending(search_model) -> int:
    return search_model.objects.filter(document__isnull=True).count()


@pytest.mark.django_db
def test_an_imported_completion_is_found_by_its_words_and_its_questions_words(tmp_path):
    project, _ = imported_project(tmp_path)
    assert found(project, "Heron") == ["c1"]
    assert found(project, "quadratic formula") == ["c3"]
    assert found(project, "triangle") == ["c1", "c2"]
    assert found(project, "pentagon") == []


@on_postgres
@pytest.mark.django_db
def test_the_search_is_the_same_before_and_after_the_documents_are_computed(tmp_path):
    project, dataset = imported_project(tmp_path)
    # Inside a transaction nothing is sent to a worker: every new text waits with no document.
    assert pending(CompletionSearch) == Completion.objects.filter(question__dataset=dataset).count() == 3
    assert pending(QuestionSearch) == Question.objects.filter(dataset=dataset).count() == 2
    queries = ["Heron", "formulas", "triangle", '"base times"', "height -Heron", "pentagon"]
    before = {query: found(project, query) for query in queries}

    assert data_services.index_search_documents() == 5
    assert pending(CompletionSearch) == pending(QuestionSearch) == 0
    assert {query: found(project, query) for query in queries} == before
    assert before["formulas"] == ["c1", "c3"] and before["height -Heron"] == ["c2"]


@on_postgres
@pytest.mark.django_db
def test_a_changed_text_is_searched_by_its_new_words(tmp_path):
    project, _ = imported_project(tmp_path)
    data_services.index_search_documents()
    completion = Completion.objects.get(external_id="c2")
    completion.model_name = "model-b"
    completion.save()
    assert pending(CompletionSearch) == 0  # only a change of the text makes its document stale
    completion.text = "A parallelogram argument."
    completion.save()
    assert pending(CompletionSearch) == 1
    assert found(project, "parallelogram") == ["c2"] and found(project, "base") == []
    data_services.index_search_documents()
    assert found(project, "parallelogram") == ["c2"] and found(project, "base") == []


@on_postgres
@pytest.mark.django_db
def test_the_periodic_task_computes_a_bounded_number_of_texts_a_time(tmp_path, settings):
    imported_project(tmp_path)
    periodic = settings.CELERY_BEAT_SCHEDULE["index-search-documents"]
    task = celery_app.tasks[periodic["task"]]
    assert periodic["kwargs"]["limit"] > 0
    assert task.apply(kwargs={"limit": 4}).get() == 4
    assert pending(QuestionSearch) + pending(CompletionSearch) == 1
    assert task.apply(kwargs={"limit": 4}).get() == 1


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_an_import_job_sends_the_task_that_computes_its_documents(tmp_path):
    # Tasks run in place in the tests: the documents are computed by the time the job has run.
    job = imports.create_import(
        uploaded=SimpleUploadedFile("searched.jsonl", Path(write_file(tmp_path / "in.jsonl")).read_bytes()),
        dataset_name="searched",
    )
    job.refresh_from_db()
    assert job.status == job.Status.SUCCEEDED
    assert CompletionSearch.objects.filter(document__isnull=False).count() == 3
    assert QuestionSearch.objects.filter(document__isnull=False).count() == 2
    project = services.create_project(dataset=Dataset.objects.get(name="searched"), kind="correctness", seed=5)
    assert found(project, "Heron") == ["c1"]


@on_postgres
@pytest.mark.django_db
def test_the_import_command_computes_the_documents_after_its_report(tmp_path):
    out = io.StringIO()
    call_command("import_jsonl", "--dataset", "searched", write_file(tmp_path / "in.jsonl"), stdout=out)
    assert "search documents: 5 computed" in out.getvalue()
    assert pending(CompletionSearch) == pending(QuestionSearch) == 0
