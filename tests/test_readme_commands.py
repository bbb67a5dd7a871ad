"""README.md's commands work as written: `make run` and `make test` exist, every `make <target>` it mentions is in
the Makefile, and every other command line in its code blocks runs, in order, on a fresh database."""

import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def makefile_targets() -> set[str]:
    text = (REPO_ROOT / "Makefile").read_text()
    targets = set()
    for line in text.splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+(?:\s+[A-Za-z0-9_.-]+)*)\s*:(?!=)", line)
        if match and not line.startswith((".", "\t")):
            targets.update(match.group(1).split())
    return targets


def readme_make_targets() -> set[str]:
    """Targets of `make` commands in the README's code (fenced blocks and inline code), not in its prose."""
    text = (REPO_ROOT / "README.md").read_text()
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
    code = fenced + re.findall(r"`([^`\n]+)`", prose)
    return {target for snippet in code for target in re.findall(r"(?<![\w-])make\s+([A-Za-z][\w-]*)", snippet)}


def test_readme_mentions_make_run_and_make_test():
    targets = readme_make_targets()
    assert "run" in targets
    assert "test" in targets


def test_every_make_target_in_the_readme_exists():
    missing = readme_make_targets() - makefile_targets()
    assert not missing, f"README.md mentions make targets the Makefile lacks: {sorted(missing)}"


# -- every command line of the README, run as written --------------------------------------------------------------

MANAGE = ".venv/bin/python manage.py"


def readme_shell_blocks() -> list[str]:
    text = (REPO_ROOT / "README.md").read_text()
    return re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M)


def command_lines(block: str) -> list[str]:
    """The block's commands: continuation lines joined, trailing comments and blank lines dropped."""
    joined = re.sub(r"\\\n\s*", "", block)
    lines = []
    for line in joined.splitlines():
        line = re.sub(r"\s+#\s.*$", "", line).strip()
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def readme_manage_lines() -> list[str]:
    return [line for block in readme_shell_blocks() for line in command_lines(block) if line.startswith(MANAGE)]


def readme_api_block() -> str:
    blocks = [block for block in readme_shell_blocks() if "curl " in block]
    assert len(blocks) == 1, "the README has one block of API calls"
    return blocks[0]


def make_run_preparation() -> list[str]:
    """What `make run` does before it serves: the database and the demo, as the Makefile says."""
    text = (REPO_ROOT / "Makefile").read_text()
    recipe = re.search(r"^run:[^\n]*\n((?:\t[^\n]*\n)+)", text, flags=re.M).group(1)
    commands = [line.strip().replace("$(PY)", ".venv/bin/python") for line in recipe.splitlines()]
    assert commands[-1].startswith(f"{MANAGE} serve"), commands
    return commands[:-1]


def test_every_readme_line_is_covered_by_a_check():
    """A line is run (manage.py, curl), or its make target is checked (make), or it sets the environment."""
    for block in readme_shell_blocks():
        for line in command_lines(block):
            assert re.match(
                r"^(\.venv/bin/python manage\.py |make |export [A-Z_]+=|[A-Z_]+=\S+ make |"
                r"TOKEN=\$\(curl |TASK=\$\(curl |curl )",
                line,
            ), f"a README line no test covers: {line}"


# The files the README's commands name, with content of their kind (kept small).
def _native_rows() -> list[dict]:
    rows = []
    for question in range(12):
        answer = str(question + 2)
        for model in ("lab-model-a", "lab-model-b"):
            for sample in range(4):
                right = (question + sample + (model == "lab-model-b")) % 3 != 0
                rows.append(
                    {
                        "question_id": question,
                        "question": f"What is {question} + 2?",
                        "reference_answer": answer,
                        "model": model,
                        "sample_index": sample,
                        "completion": f"Adding gives $\\boxed{{{answer if right else question + 3}}}$.",
                    }
                )
    return rows


def write_readme_inputs(folder: Path) -> None:
    import csv
    import io
    import json

    def jsonl(name: str, rows) -> None:
        (folder / name).write_text("".join(json.dumps(row) + "\n" for row in rows))

    jsonl("outputs.jsonl", _native_rows())
    jsonl(
        "verifybench_hard.jsonl",
        [
            {
                "question_id": f"h{index}",
                "question": f"Simplify {index}/{2 * index}.",
                "answer": "\\frac{1}{2}",
                "completion_id": f"h{index}-{model}",
                "completion": f"It is {'1/2' if correct else '2'}.",
                "completion_model": model,
                "gold_correct": correct,
                "answer_type": "A3 - Fraction",
                "answer_subtype": "A - Numeric Values",
                "source": "readme",
                "annotator": [1, 2],
            }
            for index in range(1, 7)
            for model, correct in (("m1", True), ("m2", False))
        ],
    )
    jsonl(
        "judges.jsonl",
        [
            {"completion_id": f"h{index}-{model}", "verifier": judge, "verdict": (index + len(judge)) % 3 != 0}
            for index in range(1, 7)
            for model in ("m1", "m2")
            for judge in ("harness-judge-a", "harness-judge-bb")
        ],
    )
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["uuid", "problem_statement", "golden_answer", "model", "model_output", "label"])
    for index in range(5):
        writer.writerow([f"u{index}", f"Find the limit {index}.", "0", "judge-x", "The limit is 0.", "true"])
    writer.writerow(["u-bad", "", "0", "judge-x", "no statement", "maybe"])  # skipped by --skip-invalid
    (folder / "mu_math.csv").write_text(buffer.getvalue())
    jsonl(
        "usamo_2025_proofs.jsonl",
        [
            {
                "problem_idx": 1,
                "problem": "Prove that $n^3 - n$ is divisible by 6.",
                "points": 7,
                "grading_scheme": [
                    {"title": "Factor", "points": 3, "desc": "(n-1)n(n+1)"},
                    {"title": "Conclude", "points": 4, "desc": "2 and 3 divide a product of three"},
                ],
            },
            {
                "problem_idx": 1,
                "model_name": "prover-1",
                "model_config": {"temperature": 0.6},
                "idx_answer": 0,
                "answer": "$n^3-n=(n-1)n(n+1)$, three consecutive integers, so 2 and 3 divide it.",
            },
        ],
    )
    jsonl(
        "rows.jsonl",
        [
            {"completion_id": "r1", "question": "What is 2+2?", "answer": "4", "completion": "\\boxed{4}"},
            {"completion_id": "r2", "question": "Half of 1?", "answer": "\\frac12", "completion": "It is 0.5"},
        ],
    )
    jsonl(
        "samples.jsonl",
        [
            {
                "question_id": question,
                "model": model,
                "sample_index": sample,
                "correct": (question + sample + len(model)) % 4 != 0,
            }
            for question in range(6)
            for model in ("m1", "m22")
            for sample in range(8)
        ],
    )


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory):
    """A folder where the README's commands run as on a fresh clone after `make run`: its own empty database (under
    VAR_DIR), the preparation steps of `make run`, the input files the commands name, and no other variables."""
    folder = tmp_path_factory.mktemp("clone")
    (folder / "manage.py").symlink_to(REPO_ROOT / "manage.py")
    (folder / ".venv").symlink_to(REPO_ROOT / ".venv")
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("DATABASE_", "CELERY_", "DJANGO_", "PYTEST", "JUDGE_", "OPENAI_"))
        and name not in ("DEBUG", "SECRET_KEY", "VAR_DIR", "EXPORT_ROOT")
    }
    environment["VAR_DIR"] = str(folder / "var")
    write_readme_inputs(folder)
    for command in make_run_preparation():
        run_shell(command, folder, environment)
    return folder, environment


def run_shell(command: str, folder: Path, environment: dict[str, str]) -> subprocess.CompletedProcess:
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, (
        f"{command}\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}"
    )
    return result


@pytest.mark.skipif(not (REPO_ROOT / ".env").exists(), reason="make install writes .env; run through make test")
def test_every_manage_py_line_of_the_readme_runs_as_written(fresh_clone):
    folder, environment = fresh_clone
    lines = readme_manage_lines()
    assert len(lines) >= 15
    for line in lines:
        run_shell(line, folder, environment)
    assert (folder / "vbh.zip").stat().st_size > 0 and (folder / "meta_eval.csv").exists()
    assert (folder / "verdicts.jsonl").read_text().count("\n") == 2


@pytest.mark.skipif(not (REPO_ROOT / ".env").exists(), reason="make install writes .env; run through make test")
@pytest.mark.skipif(not shutil.which("curl") or not shutil.which("jq"), reason="the README's API calls use curl and jq")
def test_the_readme_api_calls_run_as_written(fresh_clone):
    folder, environment = fresh_clone
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [".venv/bin/python", "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=folder,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "the server did not start"
                time.sleep(0.3)
        # every call must succeed: curl fails on an HTTP error status, and the script stops there
        (folder / ".curlrc").write_text("fail-with-body\n")
        script = readme_api_block().replace("localhost:8000", f"127.0.0.1:{port}")
        result = run_shell(script, folder, {**environment, "HOME": str(folder)})
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert '"label"' in result.stdout or '"value"' in result.stdout, result.stdout
