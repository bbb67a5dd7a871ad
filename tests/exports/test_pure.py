"""The pure parts of exports: writers, option validation, seeded choices, registry, manifest counts."""

import pyarrow.parquet as pq
import pytest

from reports.exports import (
    MUMATH_COLUMNS,
    VERIFYBENCH_COLUMNS,
    ExportFormat,
    ExportPlan,
    InvalidExportOptions,
    RowFacts,
    clean_file_types,
    export_format_names,
    get_export_format,
    read_rows,
    register_export_format,
    unregister_export_format,
)
from reports.exports.manifest import ManifestCounts
from reports.exports.selection import choose_balanced, choose_models, choose_subset, pick_one
from reports.exports.writers import open_writer, sha256_of

ROWS = [
    {
        "question_id": "q1",
        "question": 'Is $x, y$ "ok"?\nline two',
        "answer": "1,2",
        "completion_id": "c1",
        "completion": "ünïcode, \\boxed{1}",
        "completion_model": "m",
        "gold_correct": True,
        "answer_type": "A8 - Multiple Values",
        "answer_subtype": "A - Numeric Values",
        "source": "s",
        "annotator": ["annotator-0123456789ab", "annotator-ba9876543210"],
        "answer_type_code": "A8",
    },
    {
        "question_id": "q2",
        "question": "",
        "answer": "",
        "completion_id": "c2",
        "completion": "x",
        "completion_model": "m",
        "gold_correct": False,
        "answer_type": "",
        "answer_subtype": "",
        "source": "",
        "annotator": [],
        "answer_type_code": "",
    },
]


@pytest.mark.parametrize("file_type", ["jsonl", "csv", "parquet"])
def test_every_writer_reads_back_the_same_rows(tmp_path, file_type):
    writer = open_writer(file_type, tmp_path / f"data.{file_type}", VERIFYBENCH_COLUMNS)
    for _ in range(3):
        writer.write(ROWS)
    written = writer.close()
    assert written.rows == 6 and written.bytes == (tmp_path / f"data.{file_type}").stat().st_size
    assert written.sha256 == sha256_of(tmp_path / f"data.{file_type}")
    assert read_rows(tmp_path / f"data.{file_type}", VERIFYBENCH_COLUMNS) == ROWS * 3


def test_parquet_is_written_in_row_groups(tmp_path):
    writer = open_writer("parquet", tmp_path / "data.parquet", MUMATH_COLUMNS)
    writer.row_group_rows = 4
    row = {
        "uuid": "u",
        "problem_statement": "p",
        "golden_answer": "1",
        "model": "m",
        "model_output": "o",
        "label": True,
    }
    for _ in range(5):
        writer.write([row, row])
    writer.close()
    metadata = pq.ParquetFile(tmp_path / "data.parquet").metadata
    assert metadata.num_rows == 10 and metadata.num_row_groups == 3


def test_options_are_validated_with_clear_messages():
    balanced = get_export_format("verifybench")
    cleaned = balanced.clean_options({"per_type": 10})
    assert cleaned["per_type"] == 10 and cleaned["seed"] == 0 and cleaned["chunk_delay"] == 0.0
    for bad, message in (
        ({"per_type": 0}, "per_type: must be at least 1"),
        ({"per_type": "ten"}, "per_type: must be a number"),
        ({"per_type": 2.5}, "whole number"),
        ({"seed": True}, "seed: must be a number"),
        ({"question_ids": "q1"}, "question_ids: must be a list"),
        ({"models": 4}, "unknown option"),
    ):
        with pytest.raises(InvalidExportOptions, match=message):
            balanced.clean_options(bad)
    assert clean_file_types(None) == ["jsonl"]
    assert clean_file_types(["parquet", "jsonl", "parquet"]) == ["jsonl", "parquet"]
    with pytest.raises(InvalidExportOptions, match="unknown xlsx"):
        clean_file_types(["xlsx"])


def test_balanced_choice_is_seeded_and_never_pads():
    candidates = {"A": list(range(10)), "B": [100, 101], "C": []}
    chosen, shortfalls = choose_balanced(candidates, ["A", "B", "C", "D"], 3, seed=1)
    assert len(chosen["A"]) == 3 and chosen["A"] == sorted(chosen["A"])
    assert chosen["B"] == [100, 101] and chosen["C"] == chosen["D"] == []
    assert shortfalls == {
        "B": {"requested": 3, "available": 2, "selected": 2},
        "C": {"requested": 3, "available": 0, "selected": 0},
        "D": {"requested": 3, "available": 0, "selected": 0},
    }
    assert choose_balanced(candidates, ["A"], 3, seed=1)[0]["A"] == chosen["A"]
    assert len({tuple(choose_balanced(candidates, ["A"], 3, seed=s)[0]["A"]) for s in range(10)}) > 1


def test_models_problems_and_single_picks():
    assert choose_models({"b": 3, "a": 3, "c": 5, "d": 1}, 3, None) == ["c", "a", "b"]
    assert choose_models({"b": 3}, 3, ["x", "y", "x"]) == ["x", "y"]
    assert choose_subset([1, 2, 3], None, 0, "p") == [1, 2, 3]
    assert len(choose_subset(list(range(20)), 5, 0, "p")) == 5
    assert pick_one([7, 8, 9], 0, "q", 1) == pick_one([7, 8, 9], 0, "q", 1)
    with pytest.raises(ValueError):
        pick_one([], 0, "q")


def test_manifest_counts():
    counts = ManifestCounts()
    counts.add(RowFacts("A1 - Integer", "A - Numeric Values", "math_reasoning", "s1", True, "m1", "agreement"))
    counts.add(RowFacts("", "", "", "", False, "m2", "adjudication"))
    result = counts.as_dict()
    assert result["rows"] == 2
    assert result["by_label"] == {"correct": 1, "incorrect": 1}
    assert result["by_answer_type"] == {"(none)": 1, "A1 - Integer": 1}
    assert result["final_label_by"] == {"agreement": 1, "majority": 0, "adjudication": 1, "override": 0}


def test_the_registry_is_open_to_other_formats():
    custom = ExportFormat(
        name="proofs-test",
        title="Proofs",
        columns=MUMATH_COLUMNS,
        plan=lambda project, options: ExportPlan(total=0, chunks=iter(())),
    )
    register_export_format(custom)
    try:
        assert get_export_format("proofs-test") is custom
        assert {"verifybench", "verifybench-hard", "mumath", "proofs-test"} <= set(export_format_names())
        with pytest.raises(ValueError, match="already registered"):
            register_export_format(ExportFormat(name="proofs-test", title="x", columns=(), plan=custom.plan))
    finally:
        unregister_export_format("proofs-test")
    with pytest.raises(KeyError, match="unknown export format"):
        get_export_format("proofs-test")
