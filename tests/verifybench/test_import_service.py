"""verifybench.services.import_jsonl against the database (runs on SQLite and PostgreSQL)."""

import io
import json
import shutil
from pathlib import Path

import pytest

from verifybench import bulk_writer, services
from verifybench.importing import TEXT, RecordFormat, register_format, unregister_format
from verifybench.importing.records import ParsedRecord, QuestionRecord
from verifybench.models import Completion, Dataset, PriorLabel, Question, ReferenceAnswer

pytestmark = pytest.mark.django_db

DATA = Path(__file__).parent / "data"

VALID_VB = {
    "question_id": 1,
    "question": "Compute 1+1.",
    "answer": "2",
    "completion_id": 7,
    "completion": "\\boxed{2}",
    "completion_model": "m",
    "gold_correct": True,
    "answer_type": "A1 - Integer",
    "answer_subtype": "A - Numeric Values",
    "source": "math_reasoning/MATH",
    "annotator": ["a", "b"],
}


def write_jsonl(path: Path, lines) -> Path:
    with open(path, "wb") as out:
        for line in lines:
            out.write((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n")
    return path


def table_counts():
    return (
        Dataset.objects.count(),
        Question.objects.count(),
        ReferenceAnswer.objects.count(),
        Completion.objects.count(),
        PriorLabel.objects.count(),
    )


def test_verifybench_import_writes_every_row(admin_role_user):
    report = services.import_jsonl(dataset_name="vb", source=DATA / "verifybench.jsonl", created_by=admin_role_user)
    assert report.ok and report.format == "verifybench" and report.lines == 3
    assert (
        report.questions_created,
        report.completions_created,
        report.references_created,
        report.prior_labels_created,
    ) == (2, 3, 2, 3)
    dataset = Dataset.objects.get(name="vb")
    assert dataset.created_by == admin_role_user and report.dataset_id == dataset.pk
    assert (dataset.question_count, dataset.completion_count) == (2, 3)  # kept for the pages that list datasets
    assert (
        dataset.model_count
        == Completion.objects.filter(question__dataset=dataset).values("model_name").distinct().count()
    )
    question = Question.objects.get(dataset=dataset, external_id="102")
    assert (question.answer_type, question.answer_class, question.domain) == ("C3", "C", "logic_reasoning")
    assert question.primary_reference.final_answer == "No"
    assert question.primary_reference.solution == "2 is an even prime."
    completion = Completion.objects.get(question=question, external_id="3")
    assert completion.sampling == {"temperature": 0.7} and completion.sample_index == 3
    assert completion.metadata == {"judge_votes": [1, 0, 1]}
    label = completion.prior_labels.get()
    assert label.source_format == "verifybench" and label.is_correct is True
    assert label.annotators == ["ann-3", "ann-4", "ann-5"]
    assert label.source_file.endswith("verifybench.jsonl")


def test_mumath_import():
    report = services.import_jsonl(dataset_name="mu", source=DATA / "mumath.jsonl")
    assert report.format == "mumath" and (report.questions_created, report.completions_created) == (2, 3)
    question = Question.objects.get(external_id="7d2b3c1e-0001")
    assert question.subject == "Integral Calculus" and question.metadata == {"has_image": False}
    assert sorted(question.completions.values_list("external_id", "model_name")) == [
        ("Qwen2.5-72B-Instruct", "Qwen2.5-72B-Instruct"),
        ("gpt-4o", "gpt-4o"),
    ]
    assert set(PriorLabel.objects.values_list("source_format", flat=True)) == {"mumath"}


def test_matharena_import():
    report = services.import_jsonl(dataset_name="ma", source=DATA / "matharena.jsonl", fmt="matharena")
    assert report.ok and report.completions_created == 3
    completion = Completion.objects.get(external_id="o3-mini (high)#1")
    assert completion.sample_index == 1 and completion.sampling == "openai/o3-mini-high"
    assert completion.metadata == {"parsed_answer": 4}
    assert completion.question.primary_reference.final_answer == "2"
    assert completion.prior_labels.get().source_format == "matharena"
    assert Completion.objects.get(external_id="DeepSeek-R1#0").sampling == {"model": "deepseek/r1", "temperature": 0.6}


def test_binary_file_object_source():
    with open(DATA / "mumath.jsonl", "rb") as handle:
        report = services.import_jsonl(dataset_name="mu", source=io.BytesIO(handle.read()), source_name="mu.jsonl")
    assert report.ok and report.completions_created == 3 and report.source_name == "mu.jsonl"


@pytest.mark.parametrize(
    "bad_line",
    [
        b"{not json",
        b"[1, 2, 3]",
        b'{"question_id": "caf\xe9"}',
        json.dumps({**VALID_VB, "completion_id": 9, "gold_correct": "true"}).encode(),
        json.dumps({**VALID_VB, "completion_id": 9, "annotator": "a"}).encode(),
        json.dumps({k: v for k, v in VALID_VB.items() if k != "source"} | {"completion_id": 9}).encode(),
        json.dumps({**VALID_VB, "completion_id": 9, "answer_type": "E1 - Proof"}).encode(),
        json.dumps(VALID_VB).encode(),  # the same key twice
        json.dumps({**VALID_VB, "completion_id": 9, "question": "Something else"}).encode(),
        json.dumps({**VALID_VB, "completion_id": 9, "answer": "3"}).encode(),
    ],
)
def test_any_bad_line_rejects_the_whole_file(tmp_path, bad_line):
    path = write_jsonl(tmp_path / "in.jsonl", [VALID_VB, {**VALID_VB, "completion_id": 8}, bad_line])
    with pytest.raises(services.ImportRejected) as rejected:
        services.import_jsonl(dataset_name="new", source=path)
    report = rejected.value.report
    assert not report.ok and report.error_count == 1 and report.errors[0].line == 3
    assert report.errors[0].reason
    assert table_counts() == (0, 0, 0, 0, 0)
    assert not (tmp_path / "in.jsonl.rejects.jsonl").exists()
    assert "line 3" in report.summary() and "Nothing was written" in report.summary()


def test_rejection_keeps_validating_after_the_first_error(tmp_path):
    lines = [VALID_VB] + [{**VALID_VB, "completion_id": n, "gold_correct": "maybe"} for n in range(100, 160)]
    path = write_jsonl(tmp_path / "in.jsonl", lines)
    with pytest.raises(services.ImportRejected) as rejected:
        services.import_jsonl(dataset_name="new", source=path)
    report = rejected.value.report
    assert report.error_count == 60 and report.rejected_lines == 60
    assert [e.line for e in report.errors] == list(range(2, 62))
    assert "... and 10 more." in report.summary()
    json.dumps(report.to_dict())


def test_rejection_leaves_an_existing_dataset_untouched(tmp_path):
    services.import_jsonl(dataset_name="vb", source=DATA / "verifybench.jsonl")
    before = table_counts()
    path = write_jsonl(tmp_path / "in.jsonl", [VALID_VB, b"oops"])
    with pytest.raises(services.ImportRejected):
        services.import_jsonl(dataset_name="vb", source=path)
    assert table_counts() == before


@pytest.mark.parametrize("content, reason", [(b"", "is empty"), (b"\n\n", "is empty")])
def test_empty_file_is_rejected(tmp_path, content, reason):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    with pytest.raises(services.ImportRejected) as rejected:
        services.import_jsonl(dataset_name="new", source=path)
    assert reason in rejected.value.report.errors[0].reason and table_counts() == (0, 0, 0, 0, 0)


def test_unknown_format_is_rejected_with_a_report():
    with pytest.raises(services.ImportRejected) as rejected:
        services.import_jsonl(dataset_name="x", source=DATA / "mumath.jsonl", fmt="csv")
    assert rejected.value.report.errors[0].field == "format"


def test_skip_invalid_imports_good_lines_and_writes_rejects(tmp_path):
    path = write_jsonl(
        tmp_path / "in.jsonl",
        [
            VALID_VB,
            b"{broken",
            {**VALID_VB, "completion_id": 8},
            {**VALID_VB, "completion_id": 9, "annotator": 3},
        ],
    )
    report = services.import_jsonl(dataset_name="vb", source=path, skip_invalid=True)
    assert report.ok and report.completions_created == 2 and report.rejected_lines == 2
    assert report.rejects_path == str(tmp_path / "in.jsonl.rejects.jsonl")
    rejects = [json.loads(line) for line in Path(report.rejects_path).read_text().splitlines()]
    assert [r["line"] for r in rejects] == [2, 4]
    assert rejects[0]["original"] == "{broken" and "not valid JSON" in rejects[0]["errors"][0]["reason"]
    assert rejects[1]["errors"] == [{"field": "annotator", "reason": "must be a list, got a number"}]
    assert json.loads(rejects[1]["original"])["completion_id"] == 9
    assert "Skipped 2 line(s)" in report.summary()


def test_skip_invalid_with_an_explicit_rejects_path(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [VALID_VB, b"[]"])
    target = tmp_path / "out" / "bad.jsonl"
    report = services.import_jsonl(dataset_name="vb", source=path, skip_invalid=True, rejects_path=target)
    assert report.rejects_path == str(target) and len(target.read_text().splitlines()) == 1


def test_skip_invalid_with_nothing_valid_is_still_rejected(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [b"[]", b"{"])
    with pytest.raises(services.ImportRejected):
        services.import_jsonl(dataset_name="vb", source=path, skip_invalid=True)
    assert table_counts() == (0, 0, 0, 0, 0) and not (tmp_path / "in.jsonl.rejects.jsonl").exists()


@pytest.mark.parametrize("name", ["verifybench.jsonl", "mumath.jsonl", "matharena.jsonl"])
def test_reimport_changes_nothing_and_says_so(name):
    first = services.import_jsonl(dataset_name="d", source=DATA / name)
    before = table_counts()
    again = services.import_jsonl(dataset_name="d", source=DATA / name)
    assert table_counts() == before
    assert (
        again.questions_created,
        again.completions_created,
        again.references_created,
        again.prior_labels_created,
    ) == (0, 0, 0, 0)
    assert again.questions_unchanged == first.questions_created
    assert again.completions_unchanged == first.completions_created
    assert again.prior_labels_unchanged == first.prior_labels_created
    assert again.ok and not again.to_dict()["changed"] and "Nothing changed" in again.summary()


def test_reimport_with_new_lines_adds_only_those(tmp_path):
    services.import_jsonl(dataset_name="vb", source=write_jsonl(tmp_path / "a.jsonl", [VALID_VB]))
    report = services.import_jsonl(
        dataset_name="vb",
        source=write_jsonl(
            tmp_path / "b.jsonl", [VALID_VB, {**VALID_VB, "completion_id": 8}, {**VALID_VB, "question_id": 2}]
        ),
    )
    assert (report.questions_created, report.questions_unchanged) == (1, 1)
    assert (report.completions_created, report.completions_unchanged) == (2, 1)
    assert Completion.objects.filter(question__external_id="1").count() == 2


@pytest.mark.parametrize(
    "change, field",
    [
        ({"question": "Compute 1+2."}, "question"),
        ({"answer": "3"}, "question"),
        ({"completion": "\\boxed{3}"}, "completion"),
        ({"completion_model": "other-model"}, "completion"),
        ({"gold_correct": False}, "prior_label"),
        ({"answer_type": "A3", "answer_subtype": "A"}, "answer_type"),
    ],
)
def test_changed_content_for_a_stored_id_is_a_conflict(tmp_path, change, field):
    services.import_jsonl(dataset_name="vb", source=write_jsonl(tmp_path / "a.jsonl", [VALID_VB]))
    before = table_counts()
    changed = write_jsonl(tmp_path / "b.jsonl", [{**VALID_VB, "question_id": 5}, {**VALID_VB, **change}])
    with pytest.raises(services.ImportRejected) as rejected:
        services.import_jsonl(dataset_name="vb", source=changed)
    report = rejected.value.report
    assert report.conflict_count == 1 and report.error_count == 0
    conflict = report.conflicts[0]
    assert (conflict.line, conflict.question_id, conflict.field) == (2, "1", field)
    assert "conflict on question '1'" in report.summary()
    assert table_counts() == before
    stored = Completion.objects.get()
    assert stored.text == "\\boxed{2}" and stored.prior_labels.get().is_correct is True


def test_conflicts_go_to_the_rejects_file_with_skip_invalid(tmp_path):
    services.import_jsonl(dataset_name="vb", source=write_jsonl(tmp_path / "a.jsonl", [VALID_VB]))
    changed = write_jsonl(
        tmp_path / "b.jsonl", [{**VALID_VB, "completion": "new text"}, {**VALID_VB, "completion_id": 8}]
    )
    report = services.import_jsonl(dataset_name="vb", source=changed, skip_invalid=True)
    assert report.ok and report.completions_created == 1 and report.conflict_count == 1
    [reject] = [json.loads(line) for line in Path(report.rejects_path).read_text().splitlines()]
    assert reject["line"] == 1 and reject["errors"][0]["field"] == "completion"
    assert Completion.objects.get(external_id="7").text == "\\boxed{2}"


def test_labels_missing_on_stored_completions_are_added(tmp_path):
    services.import_jsonl(dataset_name="vb", source=write_jsonl(tmp_path / "a.jsonl", [VALID_VB]))
    PriorLabel.objects.all().delete()
    report = services.import_jsonl(dataset_name="vb", source=write_jsonl(tmp_path / "b.jsonl", [VALID_VB]))
    assert report.prior_labels_created == 1 and report.completions_unchanged == 1


def test_report_is_json_serialisable():
    report = services.import_jsonl(dataset_name="vb", source=DATA / "verifybench.jsonl")
    data = json.loads(json.dumps(report.to_dict()))
    assert data["ok"] is True and data["completions_created"] == 3 and data["errors"] == []
    assert set(data) >= {
        "format",
        "dataset_id",
        "lines",
        "questions_created",
        "questions_unchanged",
        "completions_created",
        "completions_unchanged",
        "references_created",
        "prior_labels_created",
        "rejected_lines",
        "errors",
        "conflicts",
        "rejects_path",
        "ok",
    }


def test_rejects_default_location_for_file_objects(tmp_path, settings):
    settings.VAR_DIR = tmp_path
    report = services.import_jsonl(
        dataset_name="vb",
        source=io.BytesIO(json.dumps(VALID_VB).encode() + b"\nnope\n"),
        skip_invalid=True,
        source_name="upload.jsonl",
    )
    assert Path(report.rejects_path).parent == tmp_path / "import-rejects"
    assert Path(report.rejects_path).name.startswith("upload.jsonl-")


@pytest.fixture
def problems_format():
    """A question-only format with a writer for its own extra data, as another app would register."""
    written = []

    def parse(obj):
        return ParsedRecord(
            question=QuestionRecord(
                external_id=str(obj["problem_idx"]), text=obj["problem"], solution=obj["sample_solution"]
            ),
            extra={"grading_scheme": obj["grading_scheme"]},
        )

    fmt = register_format(
        RecordFormat(
            name="test-proof-problems",
            required={"problem_idx": TEXT, "problem": TEXT, "sample_solution": TEXT, "grading_scheme": TEXT},
            parse=parse,
            write_extra=written.extend,
        )
    )
    yield written
    unregister_format(fmt.name)


def test_registered_format_uses_the_same_machinery(tmp_path, problems_format):
    line = {"problem_idx": "P1", "problem": "Prove it.", "sample_solution": "Because.", "grading_scheme": "7 pts"}
    path = write_jsonl(tmp_path / "p.jsonl", [line])
    report = services.import_jsonl(dataset_name="proofs", source=path)
    assert report.format == "test-proof-problems" and report.questions_created == 1
    assert report.completions_created == 0 and report.prior_labels_created == 0
    [written] = problems_format
    question = Question.objects.get(external_id="P1")
    assert written.question_id == question.pk and written.question_created and written.completion_id is None
    assert written.record.extra == {"grading_scheme": "7 pts"}
    assert question.primary_reference.solution == "Because."

    again = services.import_jsonl(dataset_name="proofs", source=path)
    assert again.questions_unchanged == 1 and not problems_format[1].question_created

    bad = write_jsonl(
        tmp_path / "bad.jsonl", [line | {"problem_idx": "P2"}, line | {"problem_idx": "P3", "grading_scheme": 7}]
    )
    with pytest.raises(services.ImportRejected) as rejected:
        services.import_jsonl(dataset_name="proofs", source=bad)
    assert rejected.value.report.errors[0].field == "grading_scheme"
    assert Question.objects.count() == 1 and len(problems_format) == 2


def test_copy_of_a_data_file_keeps_its_rejects_next_to_it(tmp_path):
    path = tmp_path / "vb.jsonl"
    shutil.copy(DATA / "verifybench.jsonl", path)
    with open(path, "ab") as out:
        out.write(b"garbage\n")
    report = services.import_jsonl(dataset_name="vb", source=str(path), skip_invalid=True)
    assert Path(report.rejects_path) == tmp_path / "vb.jsonl.rejects.jsonl"


def test_many_batches_keep_questions_and_completions_linked(tmp_path, monkeypatch):
    monkeypatch.setattr(bulk_writer, "BATCH_ROWS", 2)
    lines = [
        {**VALID_VB, "question_id": q, "question": f"Q{q}", "completion_id": c, "completion": f"C{q}-{c}"}
        for q in range(4)
        for c in range(3)
    ]
    path = write_jsonl(tmp_path / "in.jsonl", lines)
    report = services.import_jsonl(dataset_name="vb", source=path)
    assert (report.questions_created, report.completions_created, report.prior_labels_created) == (4, 12, 12)
    for completion in Completion.objects.select_related("question"):
        assert completion.text == f"C{completion.question.external_id}-{completion.external_id}"
        assert completion.question.text == f"Q{completion.question.external_id}"
    assert PriorLabel.objects.filter(completion__question__dataset__name="vb").count() == 12

    more = write_jsonl(tmp_path / "more.jsonl", lines + [{**lines[0], "completion_id": 99, "completion": "new"}])
    again = services.import_jsonl(dataset_name="vb", source=more)
    assert (again.questions_unchanged, again.completions_unchanged, again.completions_created) == (4, 12, 1)
    assert Completion.objects.get(external_id="99").question.external_id == "0"
