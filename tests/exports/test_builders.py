import hashlib
import json
import zipfile

import pytest

from annotation.models import Item
from reports import services
from reports.exports import MUMATH_COLUMNS, VERIFYBENCH_COLUMNS, get_export_format, read_rows
from reports.exports.builders import pseudonym_key
from reports.exports.pseudonyms import pseudonym
from reports.models import ExportJob

VERIFYBENCH_FIELDS = [
    "question_id",
    "question",
    "answer",
    "completion_id",
    "completion",
    "completion_model",
    "gold_correct",
    "answer_type",
    "answer_subtype",
    "source",
    "annotator",
]
MUMATH_FIELDS = ["uuid", "problem_statement", "golden_answer", "model", "model_output", "label"]


def run(project, fmt, file_types=("jsonl",), **options) -> ExportJob:
    job = services.create_export(
        project=project, format=fmt, file_types=list(file_types), options=options, enqueue=False
    )
    job = services.run_export_now(job)
    assert job.status == ExportJob.Status.SUCCEEDED, job.error
    return job


def bundle_rows(job, name, columns, tmp_path):
    with zipfile.ZipFile(services.export_bundle(job)) as bundle:
        bundle.extract(name, tmp_path)
    return read_rows(tmp_path / name, columns)


def jsonl_objects(job, name):
    with zipfile.ZipFile(services.export_bundle(job)) as bundle:
        return [json.loads(line) for line in bundle.read(name).decode().splitlines()]


def test_balanced_picks_one_correct_and_one_incorrect_per_question_and_reports_shortfalls(
    verifybench_data, export_root
):
    job = run(verifybench_data.project, "verifybench", per_type=2, seed=7)
    rows = jsonl_objects(job, "verifybench.jsonl")
    by_question = {}
    for row in rows:
        by_question.setdefault(row["question_id"], []).append(row["gold_correct"])
    assert all(sorted(labels) == [False, True] for labels in by_question.values())
    types = {}
    for row in rows:
        types.setdefault(row["answer_subtype"], set()).add(row["question_id"])
    assert {k: len(v) for k, v in types.items()} == {
        "A - Numeric Values": 2,
        "B - Expressions": 1,
        "C - Multiple Choice": 2,
    }
    assert "b1" not in by_question and "u0" not in by_question
    shortfalls = job.manifest["shortfalls"]
    assert shortfalls == {
        "B - Expressions": {"requested": 2, "available": 1, "selected": 1},
        "D - String": {"requested": 2, "available": 0, "selected": 0},
    }
    assert job.manifest["counts"]["by_label"] == {"correct": 5, "incorrect": 5}
    assert job.progress_done == job.progress_total == 10
    assert any("no answer type" in note for note in job.manifest["notes"])


def test_balanced_is_reproducible_with_its_seed(verifybench_data, export_root):
    first = jsonl_objects(run(verifybench_data.project, "verifybench", per_type=2, seed=3), "verifybench.jsonl")
    again = jsonl_objects(run(verifybench_data.project, "verifybench", per_type=2, seed=3), "verifybench.jsonl")
    assert first == again
    seeds = {
        tuple(
            row["completion_id"]
            for row in jsonl_objects(
                run(verifybench_data.project, "verifybench", per_type=2, seed=seed), "verifybench.jsonl"
            )
        )
        for seed in range(6)
    }
    assert len(seeds) > 1


def test_natural_exports_every_resolved_item_with_its_label_balance(verifybench_data, export_root):
    job = run(verifybench_data.project, "verifybench-hard")
    rows = jsonl_objects(job, "verifybench_hard.jsonl")
    assert len(rows) == 12 + 2 + 1 + 4 + 2
    assert job.manifest["counts"]["by_label"] == {"correct": 11, "incorrect": 10}
    assert job.manifest["shortfalls"] == {}
    resolutions = job.manifest["counts"]["final_label_by"]
    assert resolutions == {"agreement": 14, "majority": 3, "adjudication": 3, "override": 1}


def test_excluded_unresolved_and_gold_items_never_appear(verifybench_data, export_root):
    left_out = {"a0-unsuitable", "a0-open", "a0-gold"}
    for fmt in ("verifybench", "verifybench-hard"):
        job = run(verifybench_data.project, fmt)
        name = "verifybench.jsonl" if fmt == "verifybench" else "verifybench_hard.jsonl"
        exported = {row["completion_id"] for row in jsonl_objects(job, name)}
        assert exported and not exported & left_out


def test_verifybench_rows_have_exactly_the_public_fields_and_spellings(verifybench_data, export_root, three_annotators):
    rows = jsonl_objects(run(verifybench_data.project, "verifybench-hard"), "verifybench_hard.jsonl")
    # the public fields in their order, then the taxonomy code the app adds
    assert all(list(row) == [*VERIFYBENCH_FIELDS, "answer_type_code"] for row in rows)
    b0 = next(row for row in rows if row["completion_id"] == "b0-w")
    assert b0.pop("answer_type_code") == "B3"
    assert b0 == {
        "question_id": "b0",
        "question": "Question b0: compute $x$.",
        "answer": "(1,2)",
        "completion_id": "b0-w",
        "completion": "Answer of model-a to b0: \\boxed{b0-w}",
        "completion_model": "model-a",
        "gold_correct": False,
        "answer_type": "B3 - Interval",
        "answer_subtype": "B - Expressions",
        "source": "math_reasoning/OlympiadBench",
        "annotator": [pseudonym(pseudonym_key(), u.pk) for u in three_annotators[:2]],
    }
    c0 = next(row for row in rows if row["completion_id"] == "c0-c")
    assert (c0["answer_type"], c0["answer_subtype"]) == ("C4 - Finite state selection", "C - Multiple Choice")
    a0 = next(row for row in rows if row["completion_id"] == "a0-c2")
    assert a0["annotator"] == [pseudonym(pseudonym_key(), u.pk) for u in three_annotators]
    assert a0["answer_type"] == "A1 - Integer"


def test_mumath_takes_the_n_most_common_models_and_one_solution_per_problem_and_model(mumath_data, export_root):
    job = run(mumath_data.project, "mumath", seed=1)
    rows = jsonl_objects(job, "mumath.jsonl")
    assert all(list(row) == MUMATH_FIELDS for row in rows)
    pairs = [(row["uuid"], row["model"]) for row in rows]
    assert len(pairs) == len(set(pairs))
    assert {model for _, model in pairs} == {"m1", "m2", "m3", "m4"}
    assert len(rows) == 3 + 3 + 2 + 2
    assert job.manifest["parameters"]["author_models"] == ["m1", "m2", "m3", "m4"]
    assert job.manifest["shortfalls"] == {
        "model m3": {"requested": 3, "available": 2, "selected": 2},
        "model m4": {"requested": 3, "available": 2, "selected": 2},
    }
    p1 = next(row for row in rows if row["uuid"] == "p1" and row["model"] == "m2")
    assert p1 == {
        "uuid": "p1",
        "problem_statement": "Question p1: compute $x$.",
        "golden_answer": "1/2",
        "model": "m2",
        "model_output": "Answer of m2 to p1: \\boxed{m2-p1}",
        "label": False,
    }


def test_mumath_with_chosen_models_and_a_problem_sample(mumath_data, export_root):
    job = run(mumath_data.project, "mumath", author_models=["m5", "m1"], problems=2, seed=4)
    rows = jsonl_objects(job, "mumath.jsonl")
    assert {row["model"] for row in rows} <= {"m1", "m5"}
    assert len({row["uuid"] for row in rows}) == 2
    assert "m5-p1-unsuitable" not in {row["model_output"] for row in rows}
    assert job.manifest["parameters"]["problems_selected"] == 2


def test_csv_and_parquet_hold_the_same_rows_as_jsonl(verifybench_data, mumath_data, export_root, tmp_path):
    job = run(verifybench_data.project, "verifybench-hard", file_types=("jsonl", "csv", "parquet"), chunk_size=4)
    jsonl = bundle_rows(job, "verifybench_hard.jsonl", VERIFYBENCH_COLUMNS, tmp_path)
    assert bundle_rows(job, "verifybench_hard.csv", VERIFYBENCH_COLUMNS, tmp_path) == jsonl
    assert bundle_rows(job, "verifybench_hard.parquet", VERIFYBENCH_COLUMNS, tmp_path) == jsonl
    job = run(mumath_data.project, "mumath", file_types=("csv", "parquet", "jsonl"))
    jsonl = bundle_rows(job, "mumath.jsonl", MUMATH_COLUMNS, tmp_path)
    assert bundle_rows(job, "mumath.csv", MUMATH_COLUMNS, tmp_path) == jsonl
    assert bundle_rows(job, "mumath.parquet", MUMATH_COLUMNS, tmp_path) == jsonl


def test_manifest_and_card_describe_the_bundle(verifybench_data, export_root):
    job = run(verifybench_data.project, "verifybench", file_types=("jsonl", "parquet"), per_type=2, seed=11)
    path = services.export_bundle(job)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == job.bundle_sha256
    assert path.stat().st_size == job.bundle_size
    with zipfile.ZipFile(path) as bundle:
        assert sorted(bundle.namelist()) == ["README.md", "manifest.json", "verifybench.jsonl", "verifybench.parquet"]
        manifest = json.loads(bundle.read("manifest.json"))
        for name, info in manifest["files"].items():
            data = bundle.read(name)
            assert info["sha256"] == hashlib.sha256(data).hexdigest()
            assert info["bytes"] == len(data)
            assert info["rows"] == 10
        card = bundle.read("README.md").decode()
    assert manifest == job.manifest
    assert manifest["seed"] == 11 and manifest["app_version"] == "0.1.0"
    assert manifest["parameters"]["per_type"] == 2 and manifest["parameters"]["builder"] == "balanced"
    counts = manifest["counts"]
    assert counts["rows"] == 10
    assert sum(counts["by_answer_type"].values()) == 10
    assert set(counts["by_answer_subtype"]) == {"A - Numeric Values", "B - Expressions", "C - Multiple Choice"}
    assert counts["by_domain"]["logic_reasoning"] == 4
    assert counts["by_source"]["logic_reasoning/BBH"] == 4
    assert set(counts["by_model"]) <= {"model-a", "model-b"}
    assert sum(counts["final_label_by"].values()) == 10
    assert manifest["agreement"]["items_compared"] > 0 and "krippendorff_alpha" in manifest["agreement"]
    assert "2 annotators" in card and "adjudicator decided and wrote a rationale" in card
    assert "Balanced builder" in card and "D - String: 2 requested, 0 available" in card


def test_projects_of_another_kind_and_bad_options_are_refused(verifybench_data, export_root):
    with pytest.raises(services.ExportRequestError, match="unknown option"):
        services.create_export(project=verifybench_data.project, format="verifybench", options={"per_typ": 3})
    with pytest.raises(services.ExportRequestError, match="unknown export format"):
        services.create_export(project=verifybench_data.project, format="verifybench-easy")
    with pytest.raises(services.ExportRequestError, match="file_types"):
        services.create_export(project=verifybench_data.project, format="mumath", file_types=["xlsx"])
    verifybench_data.project.kind = "answer_type"
    verifybench_data.project.save()
    with pytest.raises(services.ExportRequestError, match="correctness project"):
        services.create_export(project=verifybench_data.project, format="mumath")
    assert not ExportJob.objects.exists()


def test_a_model_based_project_exports_the_confidence_as_a_last_column(verifybench_data, export_root, tmp_path):
    project = verifybench_data.project
    plain = jsonl_objects(run(project, "verifybench-hard"), "verifybench_hard.jsonl")
    assert all("confidence" not in row for row in plain)
    project.aggregation = "model"
    project.save(update_fields=["aggregation"])
    item = Item.objects.filter(project=project, state="resolved", excluded=False, is_gold=False).order_by("pk").first()
    Item.objects.filter(pk=item.pk).update(resolution="model", confidence=0.987)
    job = run(project, "verifybench-hard", file_types=("jsonl", "csv", "parquet"))
    columns = [column.name for column in export_format_columns(project)]
    assert columns == [*VERIFYBENCH_FIELDS, "answer_type_code", "confidence"]
    assert job.manifest["columns"] == columns
    assert job.manifest["counts"]["final_label_by"]["model"] == 1
    rows = jsonl_objects(job, "verifybench_hard.jsonl")
    assert all(list(row) == columns for row in rows)
    assert sorted(row["confidence"] for row in rows if row["confidence"] is not None) == [0.987]
    for name in ("verifybench_hard.csv", "verifybench_hard.parquet"):
        typed = bundle_rows(job, name, export_format_columns(project), tmp_path)
        assert [row["confidence"] for row in typed] == [row["confidence"] for row in rows]
    mumath = jsonl_objects(run(project, "mumath", models=2), "mumath.jsonl")
    assert all(list(row) == [*MUMATH_FIELDS, "confidence"] for row in mumath)


def export_format_columns(project):
    return get_export_format("verifybench-hard").columns_of(project)


def test_all_labels_writes_every_human_label_beside_the_final_label(verifybench_data, export_root, tmp_path):
    from annotation.models import Label
    from reports.exports.all_labels import COLUMNS

    project = verifybench_data.project
    job = run(project, "all-labels", file_types=("jsonl", "csv", "parquet"))
    rows = jsonl_objects(job, "all_labels.jsonl")
    labels = Label.objects.filter(item__project=project, item__is_gold=False, item__excluded=False).select_related(
        "item"
    )
    assert len(rows) == labels.count() == job.manifest["counts"]["rows"] > 0
    key = pseudonym_key()

    def key_of(facts: tuple) -> str:
        return repr(facts)  # None and booleans do not sort together

    expected = sorted(
        key_of(
            (
                pseudonym(key, label.annotator_id),
                label.value if not label.unsuitable else None,
                label.item.final_value if isinstance(label.item.final_value, bool) else None,
                label.item.resolution or "",
                label.item.state,
            )
        )
        for label in labels
    )
    shown = sorted(
        key_of((row["annotator"], row["label"], row["final_label"], row["final_label_by"], row["item_state"]))
        for row in rows
    )
    assert shown == expected
    assert {row["question_id"] for row in rows} >= {"a0", "b0", "c1", "u0"}
    open_rows = [row for row in rows if row["item_state"] == "needs_tiebreak"]
    assert open_rows and all(row["final_label"] is None for row in open_rows)
    assert "majority" in {row["final_label_by"] for row in rows}
    for name in ("all_labels.csv", "all_labels.parquet"):
        assert bundle_rows(job, name, COLUMNS, tmp_path / name) == rows


def test_all_labels_of_a_project_without_labels_is_refused_with_the_reason(verifybench_data):
    from annotation.models import AnnotationProject
    from reports.exports import get_export_format

    empty = AnnotationProject.objects.create(name="empty", dataset=verifybench_data.project.dataset, kind="correctness")
    preview = get_export_format("all-labels").preview_of(empty, get_export_format("all-labels").clean_options({}))
    assert preview.rows == 0 and "no annotator has labelled" in preview.reason
    with pytest.raises(services.ExportRequestError, match="Nothing to export"):
        services.create_export(project=empty, format="all-labels", file_types=["jsonl"], options={}, enqueue=False)
