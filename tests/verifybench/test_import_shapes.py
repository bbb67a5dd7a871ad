"""A lab's own files import as they are on disk: without labels in every format, in the app's minimal format (with
a chat `messages` list, generated completion ids), as CSV and Parquet beside JSONL; lines over the limit and JSON
nested too deeply are reported on their line, and nothing is written."""

from __future__ import annotations

import csv
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from verifybench import services
from verifybench.importing.formats import generated_completion_id, question_from_messages
from verifybench.models import Completion, Dataset, PriorLabel, Question

pytestmark = pytest.mark.django_db

MINIMAL_VB = {
    "question_id": 7,
    "question": "Compute 2+2.",
    "answer": "4",
    "completion_id": 70,
    "completion": "It is \\boxed{4}.",
    "completion_model": "m1",
}
NATIVE = {
    "question_id": "q1",
    "question": "What is 3*3?",
    "reference_answer": 9,
    "completion": "\\boxed{9}",
    "model": "lab-model",
}


def jsonl(*rows) -> io.BytesIO:
    return io.BytesIO(b"".join((row if isinstance(row, bytes) else json.dumps(row).encode()) + b"\n" for row in rows))


def test_rows_without_labels_import_as_unlabeled_completions_in_every_format():
    rows = {
        "verifybench": MINIMAL_VB,
        "mumath": {
            "uuid": "u1",
            "problem_statement": "Integrate x.",
            "golden_answer": "x^2/2",
            "model": "m",
            "model_output": "\\boxed{x^2/2}",
        },
        "matharena": {
            "problem_idx": 3,
            "problem": "Find n.",
            "model_name": "m",
            "model_config": {"t": 0.6},
            "idx_answer": 0,
            "answer": "n = 5",
            "gold_answer": 5,
        },
        "mathlabel": NATIVE,
    }
    for fmt, row in rows.items():
        report = services.import_jsonl(dataset_name=f"unlabeled-{fmt}", source=jsonl(row))
        assert report.ok and report.format == fmt and report.completions_created == 1, (fmt, report.summary())
        assert report.prior_labels_created == 0 and report.unlabeled_completions == 1
        assert "came without a label" in report.summary()
    assert not PriorLabel.objects.exists()


def test_rows_with_labels_keep_them_beside_unlabeled_ones():
    report = services.import_jsonl(
        dataset_name="mixed",
        source=jsonl({**MINIMAL_VB, "gold_correct": True, "annotator": ["a"]}, {**MINIMAL_VB, "completion_id": 71}),
    )
    assert report.ok and report.prior_labels_created == 1 and report.unlabeled_completions == 1
    assert PriorLabel.objects.get().annotators == ["a"]


def test_the_minimal_format_imports_a_labs_own_sampling_run():
    rows = [
        {
            **NATIVE,
            "sample_index": 0,
            "answer_type": "A1",
            "subject": "Algebra",
            "source": "lab/run-3",
            "metadata": {"temperature": 0.7, "seed": 11},
        },
        {
            **NATIVE,
            "sample_index": 1,
            "completion": "\\boxed{8}",
            "answer_type": "A1",
            "subject": "Algebra",
            "source": "lab/run-3",
        },
        {
            "question_id": "q2",
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Solve $x+1=3$."}],
            "reference_answer": "2",
            "completion": "x = 2",
            "model": "lab-model",
            "completion_id": "given-id",
        },
    ]
    report = services.import_jsonl(dataset_name="lab", source=jsonl(*rows))
    assert report.ok and report.format == "mathlabel" and report.completions_created == 3
    assert report.completion_ids_generated == 2 and "ids were made from their content" in report.summary()
    first = Completion.objects.get(question__external_id="q1", sample_index=0)
    assert first.external_id == generated_completion_id("q1", "lab-model", 0, "\\boxed{9}")
    assert first.metadata == {"temperature": 0.7, "seed": 11} and first.model_name == "lab-model"
    assert Question.objects.get(external_id="q1").answer_type == "A1"
    chat = Question.objects.get(external_id="q2")
    assert chat.text == "**System:** Be brief.\n\n**User:** Solve $x+1=3$." and chat.metadata["messages"][1]["role"]
    assert Completion.objects.get(question=chat).external_id == "given-id"

    again = services.import_jsonl(dataset_name="lab", source=jsonl(*rows))
    assert again.completions_created == 0 and again.completions_unchanged == 3


def test_chat_questions_read_like_the_question_they_ask():
    assert question_from_messages([{"role": "user", "content": "Only this."}]) == "Only this."
    parts = [{"role": "user", "content": [{"type": "text", "text": "A"}, {"type": "image_url", "image_url": {}}]}]
    assert question_from_messages(parts) == "A"


@pytest.mark.parametrize(
    "row, field, reason",
    [
        ({k: v for k, v in NATIVE.items() if k != "question"}, "question", "question (text) or messages"),
        ({**NATIVE, "question": None, "messages": []}, "messages", "empty"),
        ({**NATIVE, "question": None, "messages": [{"content": "x"}]}, "messages", "role"),
        ({**NATIVE, "metadata": [1]}, "metadata", "must be an object"),
        ({**NATIVE, "sample_index": -1}, "sample_index", "non-negative"),
    ],
)
def test_bad_minimal_rows_are_refused_on_their_line(row, field, reason):
    with pytest.raises(services.ImportRejected) as rejected:
        services.import_jsonl(dataset_name="bad", source=jsonl(NATIVE, row))
    (error,) = rejected.value.report.errors
    assert (error.line, error.field) == (2, field) and reason in error.reason
    assert not Dataset.objects.exists()


def test_ids_keep_the_json_type_the_file_gave_them():
    services.import_jsonl(dataset_name="typed", source=jsonl(MINIMAL_VB))
    dataset = Dataset.objects.get(name="typed")
    assert dataset.field_types == {"question_id": ["int"], "completion_id": ["int"]}
    question = Question.objects.get(dataset=dataset)
    assert question.origin == {"question_id": 7, "answer": "4"}
    assert Completion.objects.get(question=question).origin == {"completion_id": 70}
    services.import_jsonl(
        dataset_name="typed", source=jsonl({**MINIMAL_VB, "question_id": "q-8", "completion_id": "c-8"})
    )
    assert Dataset.objects.get(name="typed").field_types == {
        "question_id": ["int", "str"],
        "completion_id": ["int", "str"],
    }


def csv_file(rows: list[dict], columns: list[str]) -> io.BytesIO:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns)
    writer.writeheader()
    writer.writerows(rows)
    return io.BytesIO(text.getvalue().encode("utf-8"))


def test_csv_files_import_with_their_cells_read_as_the_format_expects():
    columns = [
        "question_id",
        "question",
        "answer",
        "completion_id",
        "completion",
        "completion_model",
        "gold_correct",
        "annotator",
        "answer_type",
    ]
    rows = [
        {
            **MINIMAL_VB,
            "gold_correct": "true",
            "annotator": '["a", "b"]',
            "answer_type": "A1 - Integer",
            "question": "Compute 2+2,\nthen stop.",
        },
        {
            **MINIMAL_VB,
            "completion_id": 71,
            "gold_correct": "",
            "annotator": "",
            "answer_type": "A1 - Integer",
            "question": "Compute 2+2,\nthen stop.",
        },
    ]
    report = services.import_jsonl(dataset_name="from-csv", source=csv_file(rows, columns), source_name="vb.csv")
    assert report.ok and report.file_type == "csv" and report.format == "verifybench", report.summary()
    assert report.completions_created == 2 and report.prior_labels_created == 1
    label = PriorLabel.objects.get()
    assert label.is_correct is True and label.annotators == ["a", "b"]
    assert Question.objects.get().text == "Compute 2+2,\nthen stop."


def test_csv_rows_with_bad_cells_are_reported_with_their_line():
    columns = ["question_id", "question", "answer", "completion_id", "completion", "completion_model", "gold_correct"]
    good = {**MINIMAL_VB, "gold_correct": "false"}
    source = csv_file([good, {**good, "completion_id": 72, "gold_correct": "perhaps"}], columns)
    with pytest.raises(services.ImportRejected) as rejected:
        services.import_jsonl(dataset_name="bad-csv", source=source, source_name="labels.csv")
    (error,) = rejected.value.report.errors
    assert (error.line, error.field) == (3, "gold_correct") and "true or false" in error.reason
    ragged = io.BytesIO(b"question_id,question\n1,two,three\n")
    with pytest.raises(services.ImportRejected) as rejected:
        services.import_jsonl(dataset_name="ragged", source=ragged, source_name="ragged.csv")
    assert "has 3 cells; the header has 2" in rejected.value.report.errors[0].reason


def test_parquet_files_import_a_batch_at_a_time(tmp_path):
    table = pa.Table.from_pylist([{**NATIVE, "sample_index": n, "completion": f"\\boxed{{{n}}}"} for n in range(5)])
    path = tmp_path / "samples.parquet"
    pq.write_table(table, path)
    report = services.import_jsonl(dataset_name="from-parquet", source=path)
    assert report.ok and report.file_type == "parquet" and report.completions_created == 5
    with open(path, "rb") as handle:  # an upload is a file object; the type is read from its first bytes
        again = services.import_jsonl(dataset_name="from-parquet", source=handle)
    assert again.completions_unchanged == 5


def test_a_file_that_is_not_parquet_is_a_clear_error(tmp_path):
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"PAR1 and then nothing useful")
    with pytest.raises(services.ImportRejected) as rejected:
        services.import_jsonl(dataset_name="x", source=path)
    assert "not a readable Parquet file" in rejected.value.report.errors[0].reason


def test_lines_over_the_limit_are_refused_without_being_held(settings):
    settings.IMPORT_MAX_LINE_BYTES = 300
    long_row = {**MINIMAL_VB, "completion_id": 99, "completion": "x" * 5_000}
    with pytest.raises(services.ImportRejected) as rejected:
        services.import_jsonl(
            dataset_name="long", source=jsonl(MINIMAL_VB, long_row, {**MINIMAL_VB, "completion_id": 98})
        )
    (error,) = rejected.value.report.errors
    assert error.line == 2 and "bytes long; the limit is 300" in error.reason
    assert not Dataset.objects.exists()


def test_json_nested_too_deeply_is_a_line_error_not_a_crash():
    deep = b"[" * 50_000 + b"]" * 50_000
    with pytest.raises(services.ImportRejected) as rejected:
        services.import_jsonl(dataset_name="deep", source=jsonl(MINIMAL_VB, deep))
    (error,) = rejected.value.report.errors
    assert error.line == 2 and "nested too deeply" in error.reason
