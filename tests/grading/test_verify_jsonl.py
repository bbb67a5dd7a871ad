import json

import pytest
from django.core.management import CommandError, call_command


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def test_command_writes_one_verdict_per_row(tmp_path):
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write(
        source,
        [
            {"completion_id": "c1", "question": "6*7?", "answer": "42", "completion": "so $\\boxed{42}$"},
            {
                "completion_id": "c2",
                "question": "Pick",
                "answer": "B",
                "completion": "The answer is (C).",
                "answer_type": "C1 - Single Choice",
            },
            {
                "completion_id": "c3",
                "question": "Describe",
                "answer": "the sequence diverges",
                "completion": "Final answer: it blows up",
                "answer_type": "D2",
            },
        ],
    )
    call_command("verify_jsonl", str(source), str(target), "--timeout", "5")
    rows = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert [row["completion_id"] for row in rows] == ["c1", "c2", "c3"]
    assert [row["predicted_correct"] for row in rows] == [True, False, None]
    assert rows[0]["extracted_answer"] == "42" and rows[0]["reference_answer"] == "42"
    assert rows[1]["extracted_answer"] == "(C)"
    assert all(row["explanation"] for row in rows)


def test_command_reports_the_bad_line_and_writes_nothing(tmp_path):
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text(
        '{"completion_id": "c1", "answer": "1", "completion": "\\\\boxed{1}"}\n{not json\n', encoding="utf-8"
    )
    with pytest.raises(CommandError, match="line 2"):
        call_command("verify_jsonl", str(source), str(target))
    assert not target.exists()


def test_command_reports_missing_fields(tmp_path):
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write(source, [{"completion_id": "c1", "answer": "1"}])
    with pytest.raises(CommandError, match="line 1: missing field"):
        call_command("verify_jsonl", str(source), str(target))
