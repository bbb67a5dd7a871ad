"""The import_jsonl and dataset_stats management commands."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.conftest import REPO_ROOT, database_url_for_current_test_db
from verifybench.models import Completion, Dataset

DATA = Path(__file__).parent / "data"


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_import_then_reimport_reports_counts():
    out, _ = run("import_jsonl", "--dataset", "vb", str(DATA / "verifybench.jsonl"))
    assert "questions: 2 created" in out and "completions: 3 created" in out
    out, _ = run("import_jsonl", "--dataset", "vb", str(DATA / "verifybench.jsonl"))
    assert "Nothing changed" in out and "completions: 0 created, 3 unchanged" in out


@pytest.mark.django_db
def test_rejected_file_exits_with_1_and_prints_the_report(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes((DATA / "mumath.jsonl").read_bytes() + b'{"uuid": 1}\n')
    err = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("import_jsonl", "--dataset", "mu", str(path), stdout=io.StringIO(), stderr=err)
    assert raised.value.returncode == 1
    assert "line 4: problem_statement: required field is missing" in err.getvalue()
    assert not Dataset.objects.exists()


@pytest.mark.django_db
def test_skip_invalid_and_rejects_option(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_bytes((DATA / "matharena.jsonl").read_bytes() + b"nope\n")
    rejects = tmp_path / "r.jsonl"
    out, _ = run(
        "import_jsonl",
        "--dataset",
        "ma",
        "--format",
        "matharena",
        "--skip-invalid",
        "--rejects",
        str(rejects),
        str(path),
    )
    assert "Skipped 1 line(s)" in out and Completion.objects.count() == 3
    assert json.loads(rejects.read_text())["line"] == 4


def test_missing_file_exits_with_2(tmp_path):
    with pytest.raises(CommandError) as raised:
        run("import_jsonl", "--dataset", "x", str(tmp_path / "absent.jsonl"))
    assert raised.value.returncode == 2


def test_unknown_format_is_a_usage_error():
    with pytest.raises(CommandError, match="invalid choice"):
        run("import_jsonl", "--dataset", "x", "--format", "csv", str(DATA / "mumath.jsonl"))


@pytest.mark.django_db
def test_dataset_stats_json():
    run("import_jsonl", "--dataset", "vb", str(DATA / "verifybench.jsonl"))
    out, _ = run("dataset_stats", "--dataset", "vb", "--json")
    assert json.loads(out) == {
        "questions": 2,
        "completions": 3,
        "by_answer_type": {"A1": 1, "C3": 1},
        "by_model": {"Llama-3.1-8B-Instruct": 1, "Qwen2.5-7B-Instruct": 2},
        "prior_labels": 3,
    }


@pytest.mark.django_db
def test_dataset_stats_table_and_unknown_dataset():
    run("import_jsonl", "--dataset", "mu", str(DATA / "mumath.jsonl"))
    out, _ = run("dataset_stats", "--dataset", "mu")
    assert "2 questions, 3 completions, 3 prior labels" in out
    assert "unclassified" in out and "gpt-4o" in out
    with pytest.raises(CommandError, match="no dataset named 'nope'"):
        run("dataset_stats", "--dataset", "nope")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_exit_codes_of_the_real_command(tmp_path):
    env = {**os.environ, "DATABASE_URL": database_url_for_current_test_db(), "SECRET_KEY": "command-test"}
    env.pop("PYTEST_VERSION", None)

    def manage(*args):
        return subprocess.run(
            [sys.executable, "manage.py", *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
        )

    ok = manage("import_jsonl", "--dataset", "cli", str(DATA / "verifybench.jsonl"))
    assert ok.returncode == 0, ok.stderr
    assert "completions: 3 created" in ok.stdout and ok.stderr == ""  # no progress bar without a terminal
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"{}\n")
    rejected = manage("import_jsonl", "--dataset", "cli2", str(bad))
    assert rejected.returncode == 1 and "Nothing was written" in rejected.stderr
    stats = manage("dataset_stats", "--dataset", "cli", "--json")
    assert stats.returncode == 0 and json.loads(stats.stdout)["completions"] == 3
    assert not Dataset.objects.filter(name="cli2").exists()
