"""The `gpass` management command: JSON keys, the readable table and errors with line numbers."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command


def write_samples(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def samples(tmp_path):
    lines = []
    for model, correct_per_question in (("model-a", (12, 3)), ("model-b", (6, 0))):
        for question, correct in zip(("q1", "q2"), correct_per_question):
            for index in range(12):
                row = {"question_id": question, "model": model, "correct": index < correct, "sample_index": index}
                lines.append(json.dumps(row))
            lines.append(json.dumps({"question_id": question, "model": model, "correct": correct > 6, "greedy": True}))
    return write_samples(tmp_path / "samples.jsonl", lines)


def run_gpass(*args):
    out = StringIO()
    call_command("gpass", *args, stdout=out)
    return out.getvalue()


def test_json_output_has_the_exact_keys(samples):
    output = json.loads(
        run_gpass(str(samples), "--k", "4", "8", "--tau", "0.25", "0.5", "0.75", "1.0", "--json", "--bootstrap", "50")
    )
    assert set(output) == {"models", "warnings"}
    model = output["models"]["model-a"]
    for k in (4, 8):
        for key in (
            f"pass@{k}",
            f"g-pass@{k}_0.25",
            f"g-pass@{k}_0.5",
            f"g-pass@{k}_0.75",
            f"g-pass@{k}_1.0",
            f"mg-pass@{k}",
        ):
            assert key in model
            assert key in model["ci"]
    assert model["n_questions"] == 2
    # q1: 12 of 12 correct gives 1; q2: 3 of 12 correct gives 1 - C(9,4)/C(12,4) = 1 - 126/495
    assert model["pass@4"] == pytest.approx((1 + (1 - 126 / 495)) / 2)
    assert model["g-pass@4_1.0"] == pytest.approx((1 + 0) / 2)  # q2 has only 3 correct samples
    assert model["greedy_accuracy"] == pytest.approx(0.5)
    assert output["models"]["model-b"]["pass@4"] == pytest.approx((1 - 15 / 495) / 2)  # q1: 1 - C(6,4)/C(12,4)
    assert any("fewer than 3k = 24 samples for k=8" in warning for warning in output["warnings"])


def test_tau_keys_keep_the_command_line_spelling(samples):
    output = json.loads(run_gpass(str(samples), "--k", "4", "--tau", "1", ".5", "--json", "--bootstrap", "0"))
    model = output["models"]["model-a"]
    assert "g-pass@4_1" in model and "g-pass@4_.5" in model
    # q2: P(at least 2 of 4 correct) = 1 - (C(9,4) + C(3,1)C(9,3)) / C(12,4) = 1 - (126 + 252) / 495
    assert model["g-pass@4_.5"] == pytest.approx((1 + (1 - 378 / 495)) / 2)
    assert model["g-pass@4_1"] == pytest.approx(0.5)


def test_readable_table(samples):
    text = run_gpass(str(samples), "--k", "4", "--tau", "0.5", "1.0", "--bootstrap", "20")
    for expected in ("model-a", "model-b", "pass@4", "g-pass@4_0.5", "g-pass@4_1.0", "mg-pass@4", "greedy accuracy"):
        assert expected in text


def test_bad_line_reports_its_number(tmp_path):
    path = write_samples(
        tmp_path / "bad.jsonl",
        ['{"question_id": "q1", "model": "m", "correct": true}', "", '{"question_id": "q1", "model": "m"'],
    )
    with pytest.raises(CommandError, match=r"line 3: not valid JSON"):
        run_gpass(str(path), "--k", "1")

    path = write_samples(tmp_path / "bad2.jsonl", ['{"question_id": "q1", "model": "m", "correct": "maybe"}'])
    with pytest.raises(CommandError, match=r"line 1: correct must be true or false"):
        run_gpass(str(path), "--k", "1")


def test_bad_arguments(samples, tmp_path):
    with pytest.raises(CommandError, match="--tau"):
        run_gpass(str(samples), "--k", "4", "--tau", "1.5")
    with pytest.raises(CommandError, match="no such file"):
        run_gpass(str(tmp_path / "missing.jsonl"))
    with pytest.raises(CommandError, match="positive"):
        run_gpass(str(samples), "--k", "0")
