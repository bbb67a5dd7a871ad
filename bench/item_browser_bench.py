"""The item browser on a large project: one keyset page under each filter, deep pages, and a bulk action.

    .venv/bin/python bench/item_browser_bench.py [--database-url postgres://postgres@127.0.0.1:5432/bench_items]
        [--completions 300000] [--runs 20] [--explain] [--only q=] [--no-bulk] [--smoke]

Creates (if missing) and migrates the PostgreSQL database, and fills it once (every dataset it held removed first)
with SQL (INSERT ... SELECT generate_series): --completions completions over one tenth as many questions, 12 model
names, texts of 12 (questions) and 40 (completions) words drawn from 43 common maths words, so that a common word
occurs in most rows, and a rare word ("hypergeometric") in one question in 300 and one completion in 500; one verifier's verdict on every completion;
a correctness project with an item per completion, a tenth of them resolved after a disagreement. Then it times
what one request of the browser does (browse_items + browse_rows) for each filter, on the first page and on a page
50 pages deep reached by keys, and a bulk priority change of 2,000 items. Prints p50 and max per case; --explain
prints the plan of each first page.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from functools import partial
from pathlib import Path
from urllib.parse import urlparse

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_items"
WORDS = (
    "let suppose therefore hence integer real function derivative integral limit sequence series bound prove "
    "equation solve substitute factor polynomial root square triangle angle circle radius probability expected "
    "value matrix vector determinant eigenvalue sum product converges diverges monotone continuous"
).split()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--completions", type=int, default=300_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--only", default="", help="run only the cases whose name contains this")
    parser.add_argument("--no-bulk", action="store_true", help="leave out the bulk action")
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


def words_sql(count: int, seed: str) -> str:
    """An SQL expression of `count` words picked from WORDS by a hash of the row number i."""
    array = "ARRAY[" + ", ".join(f"'{word}'" for word in WORDS) + "]"
    picks = [f"({array})[1 + abs(hashtext(i::text || '{seed}{k}')) %% {len(WORDS)}]" for k in range(count)]
    return " || ' ' || ".join(picks)


def fill(completions: int) -> int:
    from django.contrib.auth.models import User
    from django.db import connection

    from annotation.models import AnnotationProject, ProjectMember
    from verifybench.models import Dataset
    from verifybench.services import index_search_documents

    project = AnnotationProject.objects.filter(name="item browser bench").first()
    if project is not None and project.items.count() == completions:
        index_search_documents()  # texts filled before search documents existed
        return project.pk
    started = time.perf_counter()
    questions = max(1, completions // 10)
    with connection.cursor() as cursor:  # the benchmark's database holds its data only: every dataset goes
        cursor.execute(f"TRUNCATE {Dataset._meta.db_table} RESTART IDENTITY CASCADE")
    dataset = Dataset.objects.create(name="item browser bench")
    annotators = [User.objects.get_or_create(username=f"bench-annotator-{n}")[0] for n in range(20)]
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM annotation_itemevent WHERE item_id IN (SELECT id FROM annotation_item "
            "WHERE project_id IN (SELECT id FROM annotation_annotationproject WHERE dataset_id = %s))",
            [dataset.pk],
        )
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
        cursor.execute(
            "DELETE FROM verifybench_completionsearch WHERE completion_id IN (SELECT c.id FROM verifybench_completion c "
            "JOIN verifybench_question q ON q.id = c.question_id WHERE q.dataset_id = %s)",
            [dataset.pk],
        )
        cursor.execute(
            "DELETE FROM verifybench_questionsearch WHERE question_id IN "
            "(SELECT id FROM verifybench_question WHERE dataset_id = %s)",
            [dataset.pk],
        )
        cursor.execute("DELETE FROM verifybench_question WHERE dataset_id = %s", [dataset.pk])
        cursor.execute(
            f"""
            INSERT INTO verifybench_question (dataset_id, external_id, text, domain, source, subject, answer_type,
                answer_class, image, metadata, content_hash, created_at, origin)
            SELECT %s, 'q' || i, 'Question ' || i || ': ' || {words_sql(12, "q")}
                    || CASE WHEN i %% 300 = 0 THEN ' hypergeometric' ELSE '' END, 'math_reasoning', 'bench', '',
                (ARRAY['A1','A3','B1','B3','C1','D2'])[1 + i %% 6], (ARRAY['A','A','B','B','C','D'])[1 + i %% 6], '',
                '{{}}', md5(i::text), now(), '{{}}'
            FROM generate_series(1, %s) AS i""",
            [dataset.pk, questions],
        )
        cursor.execute(
            f"""
            INSERT INTO verifybench_completion (question_id, external_id, model_name, sampling, sample_index,
                is_greedy, text, content_hash, metadata, created_at, origin)
            SELECT q.id, 'c' || i, 'model-' || (i %% 12), '{{}}', 0, false,
                {words_sql(40, "c")} || CASE WHEN i %% 500 = 0 THEN ' hypergeometric' ELSE '' END, md5('c' || i),
                '{{}}', now(), '{{}}'
            FROM generate_series(1, %s) AS i
            JOIN verifybench_question q ON q.dataset_id = %s AND q.external_id = 'q' || (1 + i %% %s)""",
            [completions, dataset.pk, questions],
        )
    from grading.models import VerifierConfig

    verifier, _ = VerifierConfig.objects.get_or_create(name="bench rules", defaults={"kind": "rule"})
    project = AnnotationProject.objects.create(name="item browser bench", dataset=dataset, kind="correctness")
    for user in annotators:
        ProjectMember.objects.get_or_create(project=project, user=user, role="annotator")
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO grading_verdict (completion_id, verifier_id, status, extracted_answer, explanation, reason,
                raw_output, extraction_output, prompt_tokens, completion_tokens, cost, attempts, cache_hit, failed,
                created_at, updated_at, judge_status, rule_status, stage)
            SELECT c.id, %s, (ARRAY['correct','incorrect','inconclusive'])[1 + c.id %% 3], '', '', '', '', '', 0, 0,
                0, 1, false, false, now(), now(), '', '', ''
            FROM verifybench_completion c JOIN verifybench_question q ON q.id = c.question_id
            WHERE q.dataset_id = %s""",
            [verifier.pk, dataset.pk],
        )
        cursor.execute(
            """
            INSERT INTO annotation_item (project_id, subject_id, answer_type, state, resolution, required_labels,
                label_count, started, final_value, excluded, priority, random_key, is_gold, resolved_at, created_at)
            SELECT %s, c.id, q.answer_type,
                CASE WHEN c.id %% 10 = 0 THEN 'resolved' WHEN c.id %% 10 < 3 THEN 'in_progress' ELSE 'pending' END,
                CASE WHEN c.id %% 10 = 0 THEN 'majority' ELSE '' END,
                CASE WHEN c.id %% 10 = 0 THEN 3 ELSE 2 END,
                CASE WHEN c.id %% 10 = 0 THEN 3 WHEN c.id %% 10 < 3 THEN 1 ELSE 0 END,
                c.id %% 10 < 3, CASE WHEN c.id %% 10 = 0 THEN 'true'::jsonb END, false, (c.id / 10) %% 5, random(),
                false,
                CASE WHEN c.id %% 10 = 0 THEN now() END, now()
            FROM verifybench_completion c JOIN verifybench_question q ON q.id = c.question_id
            WHERE q.dataset_id = %s""",
            [project.pk, dataset.pk],
        )
        cursor.execute(
            """
            INSERT INTO annotation_itemevent (item_id, actor_id, kind, from_state, to_state, rationale, created_at)
            SELECT id, NULL, 'tiebreak_requested', 'in_progress', 'needs_tiebreak', '', now()
            FROM annotation_item WHERE project_id = %s AND state = 'resolved'""",
            [project.pk],
        )
    index_search_documents()  # as the task sent after an import does
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(
        f"filled {completions:,} completions, {questions:,} questions and items in "
        f"{time.perf_counter() - started:.1f} s"
    )
    return project.pk


def one_request(project, item_filter, sort: str, key: str) -> None:
    """What one page of the item browser reads: the page and its rows' summaries."""
    from annotation import selectors

    page = selectors.browse_items(project, item_filter, sort=sort, after=key)
    selectors.browse_rows(page.items)


def timed(function, runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), max(times)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    ensure_database(args.database_url)
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECRET_KEY", "item-browser-benchmark")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    from django.contrib.auth.models import Group, User

    from annotation import selectors, services
    from annotation.models import AnnotationProject, ProjectMember
    from grading.models import VerifierConfig

    project = AnnotationProject.objects.get(pk=fill(args.completions))
    annotator = ProjectMember.objects.filter(project=project).order_by("user_id").first().user_id
    verifier = str(VerifierConfig.objects.get(name="bench rules").pk)
    cases = {
        "no filter": {},
        "state=resolved": {"state": "resolved"},
        "disagreement=yes": {"disagreement": "yes"},
        "model=model-3": {"model": "model-3"},
        "verifier + verdict=incorrect": {"verifier": verifier, "verdict": "incorrect"},
        "annotator (none labeled)": {"annotator": str(annotator)},
        "answer_type=B3": {"answer_type": "B3"},
        "q=hypergeometric (rare)": {"q": "hypergeometric"},
        "q=triangle (in most rows)": {"q": "triangle"},
        'q="triangle angle" + model': {"q": '"triangle angle"', "model": "model-3"},
    }
    print(f"project {project.pk}: {project.items.count():,} items; {args.runs} runs per case; times in ms")
    print(f"{'case':34} {'sort':10} {'first p50':>10} {'max':>8} {'page 50 p50':>12} {'max':>8}")
    for name, params in cases.items():
        if args.only not in name:
            continue
        item_filter = selectors.ItemFilter.from_params(params)
        for sort in ("id", "-priority"):
            key = ""
            for _ in range(49):
                page = selectors.browse_items(project, item_filter, sort=sort, after=key)
                if page.next_key is None:
                    break
                key = page.next_key
            first = timed(partial(one_request, project, item_filter, sort, ""), args.runs)
            deep = (
                timed(partial(one_request, project, item_filter, sort, key), args.runs)
                if key
                else (float("nan"), float("nan"))
            )
            print(f"{name:34} {sort:10} {first[0]:10.1f} {first[1]:8.1f} {deep[0]:12.1f} {deep[1]:8.1f}")
            if args.explain and sort == "id":
                query = selectors.filtered_items(project, item_filter).order_by("id")[:51]
                sql, sql_params = query.query.sql_with_params()
                with connection.cursor() as cursor:
                    cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, sql_params)
                    print("\n".join("    " + row[0] for row in cursor.fetchall()))

    if args.no_bulk:
        return
    researcher, _ = User.objects.get_or_create(username="bench-researcher")
    researcher.groups.add(Group.objects.get_or_create(name="researcher")[0])
    matching = selectors.filtered_items(project, selectors.ItemFilter.from_params({"model": "model-5"}))
    chosen = project.items.filter(pk__in=list(matching.order_by("id").values_list("pk", flat=True)[:2000]))
    started = time.perf_counter()
    result = services.bulk_apply(project, chosen, services.PRIORITY, actor=researcher, change=1)
    print(f"bulk priority change of {result.applied:,} items: {(time.perf_counter() - started) * 1000:.0f} ms")
    started = time.perf_counter()
    try:
        services.bulk_apply(project, matching, services.PRIORITY, actor=researcher, change=1)
    except services.SelectionTooLarge:
        print(f"refusing {matching.count():,} matching items: {(time.perf_counter() - started) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
