"""The pure reading and validation of import files: no database."""

import json
from pathlib import Path

import pytest

from verifybench.importing import (
    RecordReader,
    completion_content_hash,
    detect_format,
    get_format,
    question_content_hash,
)

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


def read(lines, fmt=None):
    encoded = [
        line if isinstance(line, bytes) else (json.dumps(line) if isinstance(line, dict) else line).encode()
        for line in lines
    ]
    return list(RecordReader([line + b"\n" for line in encoded], fmt))


def only_errors(outcomes):
    return [(e.line, e.field, e.reason) for o in outcomes for e in o.errors]


def test_verifybench_public_fields_and_extras():
    outcomes = list(RecordReader(open(DATA / "verifybench.jsonl", "rb")))
    assert all(o.ok for o in outcomes)
    first, _, third = (o.record for o in outcomes)
    assert first.question.external_id == "101" and first.completion.external_id == "1"
    assert first.question.answer_type == "A1" and first.question.answer_class == "A"
    assert first.question.domain == "math_reasoning" and first.question.source == "math_reasoning/MATH"
    assert first.prior_label.is_correct is True and first.prior_label.annotators == ["ann-1", "ann-2"]
    assert third.question.answer_type == "C3"  # the public C4 is the paper's C3
    assert third.question.solution == "2 is an even prime."
    assert third.completion.sampling == {"temperature": 0.7}
    assert third.completion.sample_index == 3 and third.completion.is_greedy is False
    assert third.completion.metadata == {"judge_votes": [1, 0, 1]}
    assert first.question.content_hash == question_content_hash("Compute $1+1$.", "2")
    assert first.completion.content_hash == completion_content_hash("Qwen2.5-7B-Instruct", first.completion.text)


def test_mumath_public_fields():
    outcomes = list(RecordReader(open(DATA / "mumath.jsonl", "rb")))
    assert all(o.ok for o in outcomes)
    record = outcomes[1].record
    assert record.question.external_id == "7d2b3c1e-0001"
    assert record.question.subject == "Integral Calculus" and record.question.metadata == {"has_image": False}
    assert record.completion.external_id == "Qwen2.5-72B-Instruct" == record.completion.model_name
    assert record.prior_label.is_correct is False


def test_matharena_public_fields():
    outcomes = list(RecordReader(open(DATA / "matharena.jsonl", "rb")))
    assert all(o.ok for o in outcomes)
    second, third = outcomes[1].record, outcomes[2].record
    assert second.completion.external_id == "o3-mini (high)#1" and second.completion.sample_index == 1
    assert second.completion.sampling == "openai/o3-mini-high"
    assert second.completion.metadata == {"parsed_answer": 4}
    assert second.question.final_answer == "2" and second.prior_label.is_correct is False
    assert third.completion.sampling == {"model": "deepseek/r1", "temperature": 0.6}


@pytest.mark.parametrize(
    "name, expected",
    [
        ("verifybench.jsonl", "verifybench"),
        ("mumath.jsonl", "mumath"),
        ("matharena.jsonl", "matharena"),
    ],
)
def test_format_is_detected_from_the_first_valid_line(name, expected):
    reader = RecordReader(open(DATA / name, "rb"))
    list(reader)
    assert reader.format.name == expected


def test_detection_skips_leading_bad_lines():
    reader = RecordReader([b"not json\n", json.dumps(VALID_VB).encode() + b"\n"])
    outcomes = list(reader)
    assert reader.format.name == "verifybench"
    assert not outcomes[0].ok and outcomes[1].ok


def test_unknown_fields_match_no_format():
    outcomes = read([{"foo": 1, "bar": 2}])
    [(line, field, reason)] = only_errors(outcomes)
    assert line == 1 and field == "" and "cannot tell the format" in reason


def test_detect_format_prefers_the_most_specific():
    assert detect_format(VALID_VB).name == "verifybench"
    assert detect_format({"uuid": "u"}) is None


@pytest.mark.parametrize(
    "change, field, reason_part",
    [
        ({"gold_correct": "yes"}, "gold_correct", "must be true or false"),
        ({"annotator": "ann-1"}, "annotator", "must be a list"),
        ({"question": 5}, "question", "must be a string"),
        ({"completion_id": 1.5}, "completion_id", "must be a string or an integer"),
        ({"answer_type": "Z9 - Nonsense"}, "answer_type", "unknown answer type"),
        ({"answer_type": "E1"}, "answer_type", "unknown answer type"),
        ({"answer_subtype": "B - Expressions"}, "answer_subtype", "disagrees"),
        ({"domain": "cooking"}, "domain", "unknown domain"),
        ({"completion": "a\u0000b"}, "completion", "NUL"),
        ({"question": "\ud800"}, "question", "unpaired surrogate"),
    ],
)
def test_bad_field_is_reported_with_line_field_and_reason(change, field, reason_part):
    outcomes = read([VALID_VB, {**VALID_VB, "completion_id": 8, **change}])
    errors = only_errors(outcomes)
    assert len(errors) == 1
    assert errors[0][:2] == (2, field) and reason_part in errors[0][2]


def test_missing_required_fields_are_each_reported():
    line = {k: v for k, v in VALID_VB.items() if k not in ("question", "completion_model")}
    errors = only_errors(read([line], fmt="verifybench"))
    assert {(e[1], e[2]) for e in errors} == {
        ("question", "required field is missing"),
        ("completion_model", "required field is missing"),
    }


@pytest.mark.parametrize(
    "raw, reason_part",
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "expected a JSON object, got a list"),
        (b'"text"', "expected a JSON object, got a string"),
        (b'{"question_id": "caf\xe9"}', "invalid UTF-8"),
    ],
)
def test_unreadable_lines(raw, reason_part):
    errors = only_errors(read([VALID_VB, raw]))
    assert len(errors) == 1 and errors[0][0] == 2 and reason_part in errors[0][2]


def test_duplicate_key_inside_the_file():
    errors = only_errors(read([VALID_VB, {**VALID_VB, "completion_id": 8}, VALID_VB]))
    assert len(errors) == 1 and errors[0][0] == 3 and "duplicate key (1, 7)" in errors[0][2]


@pytest.mark.parametrize(
    "change, field",
    [
        ({"question": "Compute 2+2."}, "question text"),
        ({"answer": "3"}, "reference answer"),
        ({"answer_type": "A3", "answer_subtype": "A"}, "answer type"),
    ],
)
def test_one_question_id_with_two_contents(change, field):
    errors = only_errors(read([VALID_VB, {**VALID_VB, "completion_id": 8, **change}]))
    assert len(errors) == 1
    line, reported_field, reason = errors[0]
    assert line == 2 and reported_field == field and "than on line 1" in reason


def test_blank_lines_and_bom_are_tolerated():
    reader = RecordReader([b"\xef\xbb\xbf" + json.dumps(VALID_VB).encode() + b"\n", b"\n", b"   \r\n"])
    outcomes = list(reader)
    assert [o.ok for o in outcomes] == [True] and reader.line_count == 1


def test_explicit_format_is_enforced():
    errors = only_errors(read([VALID_VB], fmt="mumath"))
    assert {e[1] for e in errors} == {"uuid", "problem_statement", "golden_answer", "model", "model_output"}


def test_content_hash_ignores_invisible_differences():
    assert question_content_hash("Caf\u00e9\r\n", "1") == question_content_hash("Cafe\u0301\n", "1")
    assert question_content_hash("a", "1") != question_content_hash("a", "2")
    assert question_content_hash("a", "b") != question_content_hash("ab", "")


def test_unknown_format_name():
    with pytest.raises(KeyError, match="known formats"):
        get_format("csv")
