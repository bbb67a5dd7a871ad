"""A cascade's per-stage figures on a large run: what the run page and the run API compute, and the meta-evaluation.

    .venv/bin/python bench/cascade_report_bench.py [--database-url postgres://postgres@127.0.0.1:5432/bench_cascade]
        [--completions 100000] [--runs 10] [--smoke]

Creates (if missing) and migrates the PostgreSQL database, and fills it once with SQL (INSERT ... SELECT
generate_series): --completions completions over one tenth as many questions; a cascade verifier's verdict on every
completion (60% decided by the rules, of which one in ten was also a sampled check of the judge, 25% by the judge,
15% left to humans, half of them disputed), with judge tokens and cost on every verdict the judge saw; a correctness
project with an item per completion, one in nine of them resolved with a human label; and a finished run of the cascade
over the dataset. Then it times `grading.runs.cascade_report` (what the run page and `GET /api/grading/runs/{id}/`
compute) and `reports.evaluation.meta_evaluate` for the cascade on the project (the meta-evaluation page and API).
Prints p50 and max per case.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_cascade"
DATASET = "cascade report bench"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--completions", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--smoke", action="store_true", help="300 completions, one run per case: checks that the benchmark runs"
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.completions, args.runs = 300, 1
    return args


def ensure_database(url: str) -> None:
    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        if not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            connection.execute(f'CREATE DATABASE "{name}"')


# Stage, status, rule status and judge status of a verdict from its completion id modulo 20.
STAGE_SQL = """
    CASE WHEN c.id %% 20 < 12 THEN 'rules' WHEN c.id %% 20 < 17 THEN 'judge' ELSE 'human' END
"""
STATUS_SQL = """
    CASE WHEN c.id %% 20 < 12 THEN (ARRAY['correct','incorrect'])[1 + c.id %% 2]
         WHEN c.id %% 20 < 17 THEN (ARRAY['correct','incorrect'])[1 + (c.id / 20) %% 2]
         ELSE 'inconclusive' END
"""
RULE_SQL = """
    CASE WHEN c.id %% 20 < 12 THEN (ARRAY['correct','incorrect'])[1 + c.id %% 2]
         WHEN c.id %% 20 = 19 THEN 'correct' ELSE 'inconclusive' END
"""
JUDGE_SQL = """
    CASE WHEN c.id %% 20 < 12 THEN CASE WHEN c.id %% 200 < 12 THEN (ARRAY['correct','incorrect'])[1 + c.id %% 2]
                                      ELSE '' END
         WHEN c.id %% 20 < 17 THEN (ARRAY['correct','incorrect'])[1 + (c.id / 20) %% 2]
         WHEN c.id %% 20 = 19 THEN 'incorrect' ELSE 'inconclusive' END
"""


def fill(completions: int):
    from django.db import connection

    from annotation.models import AnnotationProject
    from grading.models import PromptTemplate, VerificationRun, VerifierConfig
    from grading.services import ensure_default_templates
    from verifybench.models import Dataset

    run = VerificationRun.objects.filter(dataset__name=DATASET).first()
    if run is not None and run.progress_total == completions:
        return run, AnnotationProject.objects.get(dataset=run.dataset)
    started = time.perf_counter()
    ensure_default_templates()
    judge, _ = VerifierConfig.objects.get_or_create(
        name="bench judge",
        defaults={
            "kind": "judge",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "bench-model",
            "api_key_env": "OPENAI_API_KEY",
            "template": PromptTemplate.objects.get(name="verifybench-final-judgment", version=1),
            "price_input_per_million": 0.15,
            "price_output_per_million": 0.6,
        },
    )
    cascade, _ = VerifierConfig.objects.get_or_create(
        name="bench cascade",
        defaults={
            "kind": "cascade",
            "cascade_judge": judge,
            "cascade_sample_rate": 0.1,
        },
    )
    questions = max(1, completions // 10)
    dataset, _ = Dataset.objects.get_or_create(name=DATASET)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM grading_verificationrun WHERE dataset_id = %s", [dataset.pk])
        cursor.execute(
            "DELETE FROM annotation_item WHERE project_id IN (SELECT id FROM annotation_annotationproject "
            "WHERE dataset_id = %s)",
            [dataset.pk],
        )
        cursor.execute("DELETE FROM annotation_annotationproject WHERE dataset_id = %s", [dataset.pk])
        cursor.execute(
            "DELETE FROM grading_verdict WHERE completion_id IN (SELECT c.id FROM verifybench_completion c "
            "JOIN verifybench_question q ON q.id = c.question_id WHERE q.dataset_id = %s)",
            [dataset.pk],
        )
        cursor.execute("DELETE FROM verifybench_question WHERE dataset_id = %s", [dataset.pk])
        cursor.execute(
            """
            INSERT INTO verifybench_question (dataset_id, external_id, text, domain, source, subject, answer_type,
                answer_class, image, metadata, origin, content_hash, created_at)
            SELECT %s, 'q' || i, 'Question ' || i, 'math_reasoning', 'bench', '',
                (ARRAY['A1','A3','B1','B3','C1','D2'])[1 + i %% 6], (ARRAY['A','A','B','B','C','D'])[1 + i %% 6], '',
                '{}', '{}', md5(i::text), now()
            FROM generate_series(1, %s) AS i""",
            [dataset.pk, questions],
        )
        cursor.execute(
            """
            INSERT INTO verifybench_completion (question_id, external_id, model_name, sampling, sample_index,
                is_greedy, text, content_hash, metadata, origin, created_at)
            SELECT q.id, 'c' || i, 'model-' || (i %% 12), '{}', 0, false, 'The answer is \\boxed{' || i || '}.',
                md5('c' || i), '{}', '{}', now()
            FROM generate_series(1, %s) AS i
            JOIN verifybench_question q ON q.dataset_id = %s AND q.external_id = 'q' || (1 + i %% %s)""",
            [completions, dataset.pk, questions],
        )
        judge_saw = f"({JUDGE_SQL}) <> ''"
        cursor.execute(
            f"""
            INSERT INTO grading_verdict (completion_id, verifier_id, prompt_template_id, status, extracted_answer,
                explanation, reason, raw_output, extraction_output, prompt_tokens, completion_tokens, cost, attempts,
                cache_hit, failed, stage, rule_status, judge_status, created_at, updated_at)
            SELECT c.id, %s, NULL, {STATUS_SQL}, '', '', '', '', '',
                CASE WHEN {judge_saw} THEN 400 + c.id %% 300 ELSE 0 END,
                CASE WHEN {judge_saw} THEN 20 + c.id %% 30 ELSE 0 END,
                CASE WHEN {judge_saw} THEN ((400 + c.id %% 300) * 0.15 + (20 + c.id %% 30) * 0.6) / 1000000 ELSE 0 END,
                CASE WHEN {judge_saw} THEN 1 ELSE 0 END, false, false,
                {STAGE_SQL}, {RULE_SQL}, {JUDGE_SQL}, now(), now()
            FROM verifybench_completion c JOIN verifybench_question q ON q.id = c.question_id
            WHERE q.dataset_id = %s""",
            [cascade.pk, dataset.pk],
        )
    project = AnnotationProject.objects.create(name="cascade report bench", dataset=dataset, kind="correctness")
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO annotation_item (project_id, subject_id, answer_type, state, resolution, required_labels,
                label_count, started, final_value, excluded, priority, random_key, is_gold, resolved_at, created_at)
            SELECT %s, c.id, q.answer_type,
                CASE WHEN c.id %% 9 = 3 THEN 'resolved' ELSE 'pending' END,
                CASE WHEN c.id %% 9 = 3 THEN 'agreement' ELSE '' END, 2,
                CASE WHEN c.id %% 9 = 3 THEN 2 ELSE 0 END, c.id %% 9 = 3,
                CASE WHEN c.id %% 9 = 3 THEN (CASE WHEN c.id %% 7 = 0 THEN 'false' ELSE 'true' END)::jsonb END,
                false, 0, random(), false, CASE WHEN c.id %% 9 = 3 THEN now() END, now()
            FROM verifybench_completion c JOIN verifybench_question q ON q.id = c.question_id
            WHERE q.dataset_id = %s""",
            [project.pk, dataset.pk],
        )
        cursor.execute("ANALYZE")
    run = VerificationRun.objects.create(
        verifier=cascade, dataset=dataset, status="succeeded", progress_total=completions, progress_done=completions
    )
    print(
        f"filled {completions:,} completions with cascade verdicts and one in nine labeled in "
        f"{time.perf_counter() - started:.1f} s"
    )
    return run, project


def timed(function, runs: int) -> tuple[list[float], object]:
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = function()
        times.append((time.perf_counter() - started) * 1000)
    return times, result


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    ensure_database(args.database_url)
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECRET_KEY", "cascade-report-benchmark")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from grading import runs
    from reports import evaluation

    run, project = fill(args.completions)
    print(f"run {run.pk}: {run.progress_total:,} cascade verdicts; {args.runs} runs per case; times in ms")
    print(f"{'case':<48}{'p50':>10}{'max':>10}")
    report_times, report = timed(lambda: runs.cascade_report(run), args.runs)
    print(f"{'run report (run page, run API)':<48}{statistics.median(report_times):>10.1f}{max(report_times):>10.1f}")
    meta_times, meta = timed(lambda: evaluation.meta_evaluate(project, [run.verifier.name]), args.runs)
    print(f"{'meta-evaluation of the cascade':<48}{statistics.median(meta_times):>10.1f}{max(meta_times):>10.1f}")
    stages = {stage["stage"]: stage for stage in report["stages"]}
    print(
        "run report: "
        + ", ".join(
            f"{name} decided {figures['decided']:,} (precision "
            f"{three_places(figures['precision'])}, "
            f"{figures['labeled']:,} labeled)"
            for name, figures in stages.items()
        )
        + f"; judge tokens {report['tokens']:,}, cost ${report['cost']:.2f}"
    )
    overall = meta.reports[0].evaluation.overall
    print(
        f"meta-evaluation: {meta.labeled_items:,} labeled items, macro-F1 {three_places(overall.macro_f1)}, "
        f"decided coverage {three_places(overall.decided_coverage)}"
    )


def three_places(figure: float | None) -> str:
    """A figure the meta-evaluation leaves undefined (no labeled item of a class) is n/a."""
    return "n/a" if figure is None else f"{figure:.3f}"


if __name__ == "__main__":
    main()
