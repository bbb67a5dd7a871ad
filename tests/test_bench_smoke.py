"""Every script under bench/ runs in its smoke mode (tiny sizes, seconds), as a command on the test database, so a
change that breaks a benchmark fails the suite. No timing is asserted: a smoke run has to finish and report."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import Group

from core import roles
from tests.conftest import database_url_for_current_test_db

BENCH = Path(__file__).resolve().parent.parent / "bench"
HELPERS = {"bench_database"}  # imported by the scripts, not run
# Scripts without a database, and what the smoke run prints last (its last figures).
WITHOUT_DATABASE = {
    "annotator_models_bench": "largest error",
    "mathverify_suite": "end-to-end cases that are disagree",
    "render_bench": "render_with_final_answer",
    "verifier_vs_mathverify": "math-verify",
    "verify_adversarial": "all within the bound",
    "verify_throughput": "math-verify",
}
# Scripts that fill a PostgreSQL database (COPY, generate_series, a gunicorn over it): given the test database.
ON_POSTGRES = {
    "annotate_load": "TARGET",
    "annotation_simulation": "fewer human labels per resolved item",
    "cascade_report_bench": "meta-evaluation:",
    "export_bench": "peak RSS of the export process",
    "import_bench": "peak RSS of the import process",
    "item_browser_bench": "bulk priority change",
    "labeling_render_bench": "task fragment (GET)",
    "project_create_bench": "services.create_project",
    "scale": "peak RSS of the web process",
}
IN_BROWSER = {"labeling_keypress_bench": "requests per label"}
WITH_WORKERS = {"run_throughput"}


def run_smoke(script: str, *arguments: str, env: dict[str, str] | None = None) -> str:
    environment = {key: value for key, value in os.environ.items() if key != "PYTEST_VERSION"}
    environment.update(env or {})
    result = subprocess.run(
        [sys.executable, str(BENCH / f"{script}.py"), "--smoke", *arguments],
        capture_output=True,
        text=True,
        env=environment,
        cwd=BENCH.parent,
        timeout=300,
    )
    assert result.returncode == 0, (
        f"{script} --smoke exited with {result.returncode}:\n{result.stdout}\n{result.stderr}"
    )
    return result.stdout


@pytest.fixture
def test_database(transactional_db) -> str:
    """The test database, committed to and emptied after the test, with the role groups its data migration made."""
    for name in roles.ALL_ROLES:
        Group.objects.get_or_create(name=name)
    return database_url_for_current_test_db()


def test_every_bench_script_has_a_smoke_run_here():
    scripts = {path.stem for path in BENCH.glob("*.py")} - HELPERS
    assert scripts == {*WITHOUT_DATABASE, *ON_POSTGRES, *IN_BROWSER, *WITH_WORKERS}


@pytest.mark.parametrize("script", sorted(WITHOUT_DATABASE))
def test_a_benchmark_without_a_database_runs(script):
    assert WITHOUT_DATABASE[script] in run_smoke(script, env={"DEBUG": "1"})


@pytest.mark.postgres
@pytest.mark.parametrize("script", sorted(ON_POSTGRES))
def test_a_benchmark_on_postgresql_runs(script, test_database, tmp_path):
    if script.startswith("labeling_"):
        arguments, env = ["--in-database"], {"DATABASE_URL": test_database, "DEBUG": "1"}
    else:
        arguments, env = ["--database-url", test_database], {}
    if script == "import_bench":
        arguments += ["--file", str(tmp_path / "import.jsonl")]
    assert ON_POSTGRES[script] in run_smoke(script, *arguments, env=env)


@pytest.mark.browser
def test_the_key_press_benchmark_runs(test_database):
    output = run_smoke("labeling_keypress_bench", "--in-database", env={"DATABASE_URL": test_database, "DEBUG": "1"})
    assert IN_BROWSER["labeling_keypress_bench"] in output


def test_the_run_throughput_benchmark_loads_and_reads_its_options():
    """Its smoke run needs real Celery workers on Redis (what it measures; no path runs its jobs in one process)
    and takes about 20 s even limited to one phase (`--smoke --only judge`), beyond what this module may spend, so
    only its imports (the helpers it shares with other scripts) and its options are checked here."""
    result = subprocess.run(
        [sys.executable, str(BENCH / "run_throughput.py"), "--help"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "--smoke" in result.stdout
