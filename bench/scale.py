"""Scale benchmark of the researcher pages and of claims on PostgreSQL: projects of 20,000 to 1,000,000 items.

    .venv/bin/python bench/scale.py [--sizes 20000 200000 1000000] [--database-url postgres://...] [--repeats 5]
                                    [--claims 200] [--claimant-open 10000] [--smoke]

For each size, setup (not measured) fills an empty benchmark database with COPY: a dataset of size/4 questions and
`size` completions (12 author models), a correctness project with one item per completion in a realistic mix
(62% resolved with two agreeing labels or three by majority, 3% waiting for a tie-break, 2% for adjudication, the
claimant's --claimant-open items waiting for a second label, the rest pending; tie-break slots are leased, so the
claimant's items are the only started items: the worst case for claims), labels from 24 annotators, and the
verdicts of two rule verifiers on every completion. It then rebuilds the project's tallies with
`rebuild_aggregates` (timed, printed) and, in a fresh child process (the "web process"), requests every researcher
page and API route through Django's test client as a researcher: the median time of --repeats requests after one
warm-up, the number of SQL queries and the response size of each, and the peak resident memory of that process
at the end. Then --claims claims (services.next_task, each lease released at once, which is not timed) by
an annotator who already labeled --claimant-open open items that wait for someone else: p50 and p95, and the same
with the started-items lookahead lifted (every started item walked first, as claims used to).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

from bench_database import REPO_ROOT, copy_dataset, copy_rows, ensure_database, reset_sequences, setup_django

DEFAULT_BENCH_DB = "mathlabel_scale_bench"
DEFAULT_SERVER = "postgres://postgres@127.0.0.1:5432"
ANNOTATORS = 24
MODELS = [
    "Qwen2.5-7B-Instruct",
    "Qwen2.5-72B-Instruct",
    "Llama-3.1-8B-Instruct",
    "Llama-3.3-70B-Instruct",
    "DeepSeek-V3",
    "gpt-4o-mini",
    "gpt-4o",
    "claude-3.5-sonnet",
    "gemini-1.5-pro",
    "Mistral-Large",
    "QwQ-32B",
    "Qwen3-32B",
]
CODES = ["A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8", "B1", "B2", "B3", "B4", "B5", "C1", "C2", "C3", "D1", "D2"]


def populate(size: int, claimant_open: int, seed: int) -> dict:
    """Fill the database with COPY; returns the ids the measurement needs."""
    from django.contrib.auth.models import Group, User
    from django.db import connection
    from django.utils import timezone

    from annotation.models import AnnotationProject, Item, Label, ProjectMember, ProjectTally, Task
    from core import roles
    from grading.models import Verdict, VerifierConfig
    from verifybench import services as services_of_datasets
    from verifybench.models import Completion, Dataset, Question, ReferenceAnswer

    rng = random.Random(seed)
    now = timezone.now()
    lease_end = now + timedelta(days=1)
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for model in (
            ProjectTally,
            Verdict,
            Label,
            Task,
            Item,
            ProjectMember,
            AnnotationProject,
            Completion,
            ReferenceAnswer,
            Question,
            Dataset,
        ):
            cursor.execute(f"TRUNCATE {quote(model._meta.db_table)} RESTART IDENTITY CASCADE")
    VerifierConfig.objects.filter(name__startswith="scale-rule-").delete()
    User.objects.filter(username__startswith="scale-").delete()
    annotators = User.objects.bulk_create(
        [User(username=f"scale-annotator-{n}", password="!") for n in range(ANNOTATORS)]
    )
    claimant = User.objects.create(username="scale-claimant", password="!")
    researcher = User.objects.create(username="scale-researcher", password="!")
    for role in (roles.RESEARCHER, roles.ADMIN):  # an admin also adjudicates: the conflicts page is theirs
        researcher.groups.add(Group.objects.get_or_create(name=role)[0])
    claimant.groups.add(Group.objects.get_or_create(name=roles.ANNOTATOR)[0])
    dataset = Dataset.objects.create(name=f"scale-{size}")
    project = AnnotationProject.objects.create(
        name=f"scale {size}", dataset=dataset, kind="correctness", tiebreak_annotators=1
    )
    ProjectMember.objects.bulk_create(
        [
            ProjectMember(project=project, user=user, role=ProjectMember.Role.ANNOTATOR)
            for user in [*annotators, claimant]
        ]
    )
    verifiers = [VerifierConfig.objects.create(name=f"scale-rule-{n}", kind=VerifierConfig.Kind.RULE) for n in range(2)]

    questions = copy_dataset(dataset, size, MODELS, CODES, now)

    annotator_ids = [user.pk for user in annotators]
    items, tasks, labels = [], [], []
    claimant_items = min(claimant_open, size // 10)
    for c in range(size):
        item_id = c + 1
        draw = rng.random()
        final = rng.random() < 0.45
        first, second, third, fourth = rng.sample(annotator_ids, 4)
        if c < claimant_items:
            row = ("in_progress", "", 2, [(claimant.pk, final)], None)
        elif draw < 0.56:
            row = ("resolved", "agreement", 2, [(first, final), (second, final)], final)
        elif draw < 0.62:
            row = ("resolved", "majority", 3, [(first, final), (second, not final), (third, final)], final)
        elif draw < 0.65:  # waits for a tie-break label that is leased to someone (not free to claim)
            row = ("needs_tiebreak", "", 3, [(first, final), (second, not final)], None)
        elif draw < 0.67:
            row = ("needs_adjudication", "", 3, [(first, final), (second, not final), (third, None)], None)
        else:
            row = ("pending", "", 2, [], None)
        state, resolution, required, given, final_value = row
        items.append(
            (
                item_id,
                project.pk,
                c + 1,
                CODES[(c % questions) % len(CODES)],
                state,
                resolution,
                required,
                len(given),
                bool(given),
                json.dumps(final_value) if final_value is not None else None,
                False,
                0,
                rng.random(),
                False,
                now if state == "resolved" else None,
                now,
            )
        )
        if state == "needs_tiebreak":
            tasks.append((len(tasks) + 1, item_id, fourth, "leased", True, now, lease_end, None))
        for annotator, value in given:
            tasks.append((len(tasks) + 1, item_id, annotator, "submitted", False, now, now, now))
            labels.append(
                (
                    item_id,
                    len(tasks),
                    annotator,
                    json.dumps(value) if value is not None else None,
                    "{}",
                    value is None,
                    "unreadable" if value is None else "",
                    "",
                    False,
                    round(rng.lognormvariate(3.5, 0.6), 1),
                    now,
                    now,
                )
            )
    copy_rows(
        Item,
        [
            "id",
            "project",
            "subject_id",
            "answer_type",
            "state",
            "resolution",
            "required_labels",
            "label_count",
            "started",
            "final_value",
            "excluded",
            "priority",
            "random_key",
            "is_gold",
            "resolved_at",
            "created_at",
        ],
        items,
    )
    copy_rows(
        Task, ["id", "item", "annotator", "status", "is_tiebreak", "leased_at", "expires_at", "finished_at"], tasks
    )
    copy_rows(
        Label,
        [
            "item",
            "task",
            "annotator",
            "value",
            "details",
            "unsuitable",
            "unsuitable_reason",
            "note",
            "is_tiebreak",
            "seconds_spent",
            "created_at",
            "updated_at",
        ],
        labels,
    )
    statuses = ["correct"] * 5 + ["incorrect"] * 4 + ["inconclusive"]
    copy_rows(
        Verdict,
        [
            "completion",
            "verifier",
            "status",
            "extracted_answer",
            "explanation",
            "reason",
            "raw_output",
            "extraction_output",
            "prompt_tokens",
            "completion_tokens",
            "cost",
            "attempts",
            "cache_hit",
            "failed",
            "stage",
            "rule_status",
            "judge_status",
            "created_at",
            "updated_at",
        ],
        (
            (
                c + 1,
                verifier.pk,
                rng.choice(statuses),
                "",
                "",
                "",
                "",
                "",
                0,
                0,
                0,
                1,
                False,
                False,
                "",
                "",
                "",
                now,
                now,
            )
            for verifier in verifiers
            for c in range(size)
        ),
    )
    reset_sequences(Item, Task)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    services_of_datasets.recount(dataset)  # as an import does
    return {
        "project": project.pk,
        "dataset": dataset.pk,
        "researcher": researcher.pk,
        "claimant": claimant.pk,
        "labels": len(labels),
        "claimant_open": claimant_items,
    }


def own_peak_rss_mb() -> float:
    """This process's peak resident memory. Not getrusage's ru_maxrss: Linux carries that over an exec, so a child
    started by the benchmark would report the parent's peak (the tallies' rebuild) when it is higher."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(ids: dict, repeats: int, claims: int) -> dict:
    """Runs in a child process of its own: every page and route, then the claims; returns the figures."""
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotation import claim_queries, services
    from annotation.models import AnnotationProject

    project, dataset = ids["project"], ids["dataset"]
    routes = [
        ("progress API", f"/api/projects/{project}/progress/"),
        ("dashboard page", f"/projects/{project}/dashboard/"),
        ("meta-eval API", f"/api/projects/{project}/meta-eval/"),
        ("meta-eval page", f"/projects/{project}/meta-eval/"),
        ("model-eval API", f"/api/datasets/{dataset}/model-eval/?source=project:{project}"),
        ("model-eval page", f"/datasets/{dataset}/model-eval/?source=project:{project}"),
        ("conflicts page", f"/projects/{project}/conflicts/"),
        ("home page", "/"),
        ("dataset list API", "/api/datasets/"),
    ]
    client = Client()
    client.force_login(User.objects.get(pk=ids["researcher"]))
    results = []
    for name, url in routes:
        client.get(url)  # warm-up: imports, template compilation, first connection
        times = []
        for _ in range(repeats):
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = client.get(url)
                times.append(time.perf_counter() - started)
        results.append(
            {
                "route": name,
                "url": url,
                "status": response.status_code,
                "median_ms": statistics.median(times) * 1000,
                "queries": len(queries.captured_queries),
                "bytes": len(response.content),
            }
        )
    claimant = User.objects.get(pk=ids["claimant"])
    project_row = AnnotationProject.objects.get(pk=project)

    def claim_percentiles() -> tuple[float, float, int]:
        claim_times = []
        for _ in range(claims):
            started = time.perf_counter()
            task = services.next_task(project_row, claimant)
            claim_times.append(time.perf_counter() - started)
            if task is None:
                break
            # released as leaving the labeling page does, not skipped: a skip would exclude one more item from
            # the claimant's next claims each time, so later claims would walk further than the first
            services.release_tasks(claimant, [task.pk])
        claim_times.sort()
        return (
            claim_times[len(claim_times) // 2] * 1000,
            claim_times[int(len(claim_times) * 0.95) - 1] * 1000,
            len(claim_times),
        )

    rss = own_peak_rss_mb()
    p50, p95, count = claim_percentiles()
    lookahead = claim_queries.STARTED_LOOKAHEAD
    claim_queries.STARTED_LOOKAHEAD = 10**9  # every started item first, as claims did before the lookahead
    walk_p50, walk_p95, _ = claim_percentiles()
    claim_queries.STARTED_LOOKAHEAD = lookahead
    return {
        "routes": results,
        "claim_p50_ms": p50,
        "claim_p95_ms": p95,
        "claims": count,
        "walk_p50_ms": walk_p50,
        "walk_p95_ms": walk_p95,
        "peak_rss_mb": rss,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000, 1_000_000])
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--claims", type=int, default=200)
    parser.add_argument("--claimant-open", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--measure", default=None, help=argparse.SUPPRESS)  # the child process: JSON of ids
    parser.add_argument("--smoke", action="store_true", help="one project of 400 items: checks that the benchmark runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.repeats, args.claims, args.claimant_open = [400], 1, 5, 20
    database_url = ensure_database(args.database_url, DEFAULT_BENCH_DB, DEFAULT_SERVER)
    if args.measure:
        setup_django(database_url)
        print(json.dumps(measure(json.loads(args.measure), args.repeats, args.claims)))
        return
    setup_django(database_url, migrate=True)
    from annotation import aggregates
    from annotation.models import AnnotationProject

    print(f"load average before: {Path('/proc/loadavg').read_text().strip()}")
    for size in args.sizes:
        started = time.perf_counter()
        ids = populate(size, args.claimant_open, args.seed)
        setup_seconds = time.perf_counter() - started
        started = time.perf_counter()
        keys = aggregates.rebuild(AnnotationProject.objects.get(pk=ids["project"]))
        rebuild_seconds = time.perf_counter() - started
        child = subprocess.run(
            [
                sys.executable,
                __file__,
                "--database-url",
                database_url,
                "--repeats",
                str(args.repeats),
                "--claims",
                str(args.claims),
                "--measure",
                json.dumps(ids),
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO_ROOT,
        )
        figures = json.loads(child.stdout.strip().splitlines()[-1])
        print(
            f"\n{size:,} items, {ids['labels']:,} labels, {2 * size:,} verdicts (setup {setup_seconds:.0f} s; "
            f"rebuild_aggregates {rebuild_seconds:.1f} s, {keys} tallies)"
        )
        print(f"{'request':<18} {'status':>6} {'median ms':>10} {'queries':>8} {'bytes':>10}")
        for row in figures["routes"]:
            print(
                f"{row['route']:<18} {row['status']:>6} {row['median_ms']:>10.1f} {row['queries']:>8} "
                f"{row['bytes']:>10,}"
            )
        print(
            f"claim p50 {figures['claim_p50_ms']:.1f} ms, p95 {figures['claim_p95_ms']:.1f} ms over "
            f"{figures['claims']} claims with {ids['claimant_open']:,} open items already labeled by the claimant "
            f"(walking every started item first: p50 {figures['walk_p50_ms']:.1f} ms, "
            f"p95 {figures['walk_p95_ms']:.1f} ms)"
        )
        print(f"peak RSS of the web process after every page {figures['peak_rss_mb']:.0f} MB")
        print(f"load average: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
