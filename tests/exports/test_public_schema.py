"""An exported file keeps the public schema of the file that went in: the same field names in the same order, the
same JSON types (integer ids stay integers, a numeric answer stays a number) and the same values (the file's own
answer-type spellings), for every format. Columns the app adds come after the public ones."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from annotation import services as annotation_services
from annotation.models import ProjectMember
from reports import services
from verifybench import services as import_services
from verifybench.label_rules import CORRECTNESS
from verifybench.models import Dataset, PriorLabel

pytestmark = pytest.mark.django_db

VERIFYBENCH = [
    {
        "question_id": 101,
        "question": "Compute $\\frac{1}{2}+\\frac{1}{4}$.",
        "answer": "\\frac{3}{4}",
        "completion_id": 1,
        "completion": "So \\boxed{0.75}.",
        "completion_model": "m-a",
        "gold_correct": True,
        "answer_type": "A3 - Fraction",
        "answer_subtype": "A - Numeric Values",
        "source": "math_reasoning/MATH",
        "annotator": [7, 9],
    },
    {
        "question_id": 101,
        "question": "Compute $\\frac{1}{2}+\\frac{1}{4}$.",
        "answer": "\\frac{3}{4}",
        "completion_id": 2,
        "completion": "So \\boxed{0.5}.",
        "completion_model": "m-b",
        "gold_correct": False,
        "answer_type": "A3 - Fraction",
        "answer_subtype": "A - Numeric Values",
        "source": "math_reasoning/MATH",
        "annotator": [7, 9],
    },
    {
        "question_id": 102,
        "question": "Is 7 prime?",
        "answer": "Yes",
        "completion_id": 3,
        "completion": "Yes.",
        "completion_model": "m-a",
        "gold_correct": True,
        "answer_type": "C4 - Finite state selection",
        "answer_subtype": "C - Multiple Choice",
        "source": "logic_reasoning/x",
        "annotator": [7, 9],
    },
]
MUMATH = [
    {
        "uuid": "u-1",
        "problem_statement": "Integrate $2x$.",
        "golden_answer": "x^2 + C",
        "model": "gpt",
        "model_output": "\\boxed{x^2+C}",
        "label": True,
    },
    {
        "uuid": "u-2",
        "problem_statement": "What is 6*7?",
        "golden_answer": 42,
        "model": "gpt",
        "model_output": "\\boxed{41}",
        "label": False,
    },
]
MATHARENA = [
    {
        "problem_idx": 1,
        "problem": "Find n with n^2 = 49, n > 0.",
        "model_name": "o-model",
        "model_config": {"temperature": 0.6},
        "idx_answer": 0,
        "answer": "n = \\boxed{7}",
        "gold_answer": 7,
        "parsed_answer": 7,
        "correct": True,
    },
    {
        "problem_idx": 2,
        "problem": "Find the last digit of 2^10.",
        "model_name": "o-model",
        "model_config": {"temperature": 0.6},
        "idx_answer": 1,
        "answer": "\\boxed{6}",
        "gold_answer": "4",
        "parsed_answer": "6",
        "correct": False,
    },
]
# field -> the label of the row, in each format
LABEL_FIELD = {
    "verifybench": "gold_correct",
    "verifybench-hard": "gold_correct",
    "mumath": "label",
    "matharena": "correct",
}
FILES = {
    "verifybench-hard": ("verifybench", VERIFYBENCH, "verifybench_hard.jsonl"),
    "mumath": ("mumath", MUMATH, "mumath.jsonl"),
    "matharena": ("matharena", MATHARENA, "matharena_answers.jsonl"),
}


def labelled_project(name: str, rows: list[dict], fmt: str, make_user):
    """Import the file, then have two annotators agree with each row's label, so the final labels are the file's."""
    data = b"".join(json.dumps(row).encode() + b"\n" for row in rows)
    report = import_services.import_jsonl(dataset_name=name, source=io.BytesIO(data), fmt=fmt)
    assert report.ok, report.summary()
    dataset = Dataset.objects.get(name=name)
    project = annotation_services.create_project(dataset=dataset, kind=CORRECTNESS, name=name, seed=1)
    users = [make_user("annotator") for _ in range(2)]
    for user in users:
        annotation_services.add_member(project, user, ProjectMember.Role.ANNOTATOR)
        while (task := annotation_services.next_task(project, user)) is not None:
            label = PriorLabel.objects.get(completion_id=task.item.subject_id)
            annotation_services.submit_label(task, user, value=label.is_correct)
    return project


def exported_lines(project, fmt: str, name: str) -> list[dict]:
    job = services.run_export_now(services.create_export(project=project, format=fmt, enqueue=False))
    assert job.status == "succeeded", job.error
    with zipfile.ZipFile(services.export_bundle(job)) as bundle:
        return [json.loads(line) for line in bundle.read(name).decode().splitlines()]


def types_of(row: dict) -> dict:
    return {name: type(value).__name__ for name, value in row.items()}


@pytest.mark.parametrize("export_format", list(FILES))
def test_an_export_keeps_the_schema_of_the_file_that_went_in(export_format, make_user, settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    import_format, rows, name = FILES[export_format]
    project = labelled_project(f"schema-{export_format}", rows, import_format, make_user)
    exported = exported_lines(project, export_format, name)
    assert len(exported) == len(rows)
    public = list(rows[0])
    for row in exported:
        assert list(row)[: len(public)] == public  # names and order
    key = public[:1] + [field for field in ("completion_id", "model", "idx_answer") if field in public]
    by_key = {tuple(row[field] for field in key): row for row in exported}
    for original in rows:
        copy = by_key[tuple(original[field] for field in key)]
        compared = {field: copy[field] for field in public}
        if export_format == "verifybench-hard":  # the annotators are the app's, as pseudonyms
            assert all(name.startswith("annotator-") for name in compared.pop("annotator"))
            original = {field: value for field, value in original.items() if field != "annotator"}
        assert compared == original
        assert types_of(compared) == types_of(original)
        assert copy[LABEL_FIELD[export_format]] is original[LABEL_FIELD[export_format]]


def test_the_app_adds_the_canonical_answer_type_after_the_files_own_spelling(make_user, settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    project = labelled_project("codes", VERIFYBENCH, "verifybench", make_user)
    rows = exported_lines(project, "verifybench-hard", "verifybench_hard.jsonl")
    assert {(row["answer_type"], row["answer_type_code"]) for row in rows} == {
        ("A3 - Fraction", "A3"),
        ("C4 - Finite state selection", "C3"),
    }
    assert list(rows[0])[-1] == "answer_type_code"


def test_parquet_columns_take_the_type_the_ids_had(make_user, settings, tmp_path):
    import pyarrow.parquet as pq

    settings.EXPORT_ROOT = tmp_path / "exports"
    project = labelled_project("parquet-types", VERIFYBENCH, "verifybench", make_user)
    job = services.run_export_now(
        services.create_export(project=project, format="verifybench-hard", file_types=["parquet"], enqueue=False)
    )
    with zipfile.ZipFile(services.export_bundle(job)) as bundle:
        table = pq.read_table(io.BytesIO(bundle.read("verifybench_hard.parquet")))
    assert str(table.schema.field("question_id").type) == "int64"
    assert str(table.schema.field("completion_id").type) == "int64"
    assert sorted(table.column("question_id").to_pylist()) == [101, 101, 102]
