"""HTTP load benchmark of the annotation workflow: concurrent annotators claiming and labeling over gunicorn.

    .venv/bin/python bench/annotate_load.py [--database-url postgres://postgres@127.0.0.1:5432/bench_annotate]
        [--items 20000] [--annotators 32] [--seconds 60] [--explain] [--smoke]

Creates (if missing) and migrates the PostgreSQL database, loads a synthetic dataset of --items completions
with realistic text sizes, creates annotator users with tokens and a correctness project over the dataset,
starts the app under gunicorn on a free loopback port and drives --annotators simulated annotators over HTTP:
claim (POST next-task), think for --think-ms (default 300-1500 ms: a real annotator reads for 20-90 s, so this
is already a compressed day), submit (about 15% disagree with the item's majority answer). `--think-ms 5 100`
turns it into a saturation test that shows the server's ceiling.

Prints next-task and submit latency p50/p95/p99, labels per second, error counts (5xx separately) and the
over-assignment check made on the database afterwards. Target: next-task p95 <= 50 ms, no 5xx, no
over-assignment. --explain prints EXPLAIN ANALYZE of the claim query at the end of the run.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_annotate"
SECRET_KEY = "annotate-load-benchmark-secret"
DISAGREEMENT_RATE = 0.15
THINK_SECONDS = (0.3, 1.5)
WORDS = (
    "let suppose therefore hence integer real function derivative integral limit sequence series bound prove "
    "equation solve substitute factor polynomial root square triangle angle circle radius probability expected "
    "value matrix vector determinant eigenvalue sum product converges diverges monotone continuous"
).split()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--completions-per-question", type=int, default=10)
    parser.add_argument("--annotators", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--client-processes",
        type=int,
        default=4,
        help="load-generator processes the annotator threads are spread over, so the client's own "
        "interpreter lock does not add to the measured latency",
    )
    parser.add_argument(
        "--think-ms",
        type=float,
        nargs=2,
        default=[300.0, 1500.0],
        metavar=("MIN", "MAX"),
        help="time an annotator spends between claiming and submitting",
    )
    parser.add_argument(
        "--separate-claim",
        action="store_true",
        help="claim each next task with its own request (POST next-task) instead of asking for it with the submit "
        "(`next`: one request per label, as the labeling page works)",
    )
    parser.add_argument("--explain", action="store_true", help="print EXPLAIN ANALYZE of the claim query")
    parser.add_argument(
        "--verifiers",
        type=int,
        default=0,
        help="rule verifiers with a verdict on every completion before the run, so each final label also moves "
        "the meta-evaluation's counts of verdicts against labels",
    )
    parser.add_argument(
        "--connection-per-request",
        action="store_true",
        help="open a new connection for every request instead of keeping one per annotator",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="40 items, 2 annotators for 2 s on one gunicorn worker: checks that the benchmark runs",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.items, args.completions_per_question, args.annotators, args.seconds = 40, 4, 2, 2.0
        args.workers, args.threads, args.client_processes, args.think_ms = 1, 2, 1, [5.0, 20.0]
    return args


def ensure_database(database_url: str) -> None:
    """Create the benchmark database when it does not exist yet."""
    import psycopg

    url = urlparse(database_url)
    name = url.path.lstrip("/")
    admin_url = url._replace(path="/postgres").geturl()
    with psycopg.connect(admin_url, autocommit=True) as connection:
        exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{name}"')
            print(f"created database {name}")


def setup_django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["SECRET_KEY"] = SECRET_KEY
    os.environ["DEBUG"] = "0"
    os.environ["ALLOWED_HOSTS"] = "127.0.0.1"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def paragraph(rng: random.Random, chars: int) -> str:
    words = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        if rng.random() < 0.08:
            word = f"${rng.randint(2, 99)}x^{{{rng.randint(2, 9)}}} + \\frac{{{rng.randint(1, 9)}}}{{{rng.randint(2, 9)}}}$"
        words.append(word)
        size += len(word) + 1
    return " ".join(words)


def load_dataset(rng: random.Random, items: int, per_question: int):
    """A synthetic dataset: questions of 200-900 characters, completions of 1,000-8,000 characters."""
    from verifybench.models import Completion, Dataset, Question, ReferenceAnswer

    dataset = Dataset.objects.create(name=f"annotate-load-{int(time.time())}-{rng.randint(0, 10**6)}")
    question_count = -(-items // per_question)
    questions = Question.objects.bulk_create(
        [
            Question(
                dataset=dataset,
                external_id=f"q{n}",
                text=paragraph(rng, rng.randint(200, 900)),
                domain="math_reasoning",
                answer_type="A1",
                answer_class="A",
                content_hash=f"{n:064x}",
            )
            for n in range(question_count)
        ],
        batch_size=1000,
    )
    ReferenceAnswer.objects.bulk_create(
        [
            ReferenceAnswer(question=q, final_answer=str(rng.randint(1, 500)), solution=paragraph(rng, 400))
            for q in questions
        ],
        batch_size=1000,
    )
    completions = []
    for question in questions:
        for sample in range(per_question):
            if len(completions) == items:
                break
            completions.append(
                Completion(
                    question=question,
                    external_id=f"c{sample}",
                    model_name=f"model-{sample % 5}",
                    sample_index=sample,
                    text=paragraph(rng, rng.randint(1000, 8000)) + f"\n\\boxed{{{rng.randint(1, 500)}}}",
                    content_hash=f"{question.pk:032x}{sample:032x}",
                )
            )
    Completion.objects.bulk_create(completions, batch_size=1000)
    return dataset


def create_annotators(count: int) -> list[tuple[int, str]]:
    from django.contrib.auth.models import Group, User
    from rest_framework.authtoken.models import Token

    from core import roles

    group = Group.objects.get(name=roles.ANNOTATOR)
    users = []
    for n in range(count):
        user, created = User.objects.get_or_create(username=f"load-annotator-{n:02d}")
        if created:
            user.set_unusable_password()
            user.save()
        user.groups.add(group)
        token, _ = Token.objects.get_or_create(user=user)
        users.append((user, token.key))
    return users


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_gunicorn(database_url: str, port: int, workers: int, threads: int) -> subprocess.Popen:
    env = dict(os.environ, DATABASE_URL=database_url, SECRET_KEY=SECRET_KEY, DEBUG="0", ALLOWED_HOSTS="127.0.0.1")
    env.pop("PYTEST_VERSION", None)
    command = [
        str(REPO_ROOT / ".venv/bin/gunicorn"),
        "config.wsgi",
        "-w",
        str(workers),
        "-k",
        "gthread",
        "--threads",
        str(threads),
        "-b",
        f"127.0.0.1:{port}",
        "--log-level",
        "warning",
    ]
    print("server:", " ".join(command))
    return subprocess.Popen(command, cwd=REPO_ROOT, env=env, start_new_session=True)


def wait_until_up(port: int, token: str, server: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited with code {server.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/api/projects/", headers={"Authorization": f"Token {token}"})
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("gunicorn did not answer in time")


def server_cpu_seconds(server: subprocess.Popen) -> float:
    """CPU time (user + system) used so far by the gunicorn master and its workers, from /proc (Linux)."""
    ticks = os.sysconf("SC_CLK_TCK")
    pids = [server.pid]
    try:
        children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
    except OSError:
        return float("nan")
    pids += [int(pid) for pid in children]
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime and stime, in clock ticks
    return total / ticks


def stop_gunicorn(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.next_task_ms: list[float] = []
        self.submit_ms: list[float] = []
        self.labels = 0
        self.no_task = 0
        self.errors = 0
        self.server_errors = 0
        self.error_samples: list[str] = []

    def error(self, what: str, status: int, body: bytes) -> None:
        with self.lock:
            self.errors += 1
            if status >= 500:
                self.server_errors += 1
            if len(self.error_samples) < 5:
                self.error_samples.append(f"{what} -> {status}: {body[:200]!r}")


def client_process(
    port, project_id, tokens_and_seeds, stop_at, connection_per_request, separate_claim, think, results
) -> None:
    """One load-generator process: a thread per annotator; sends its measurements back through `results`."""
    global THINK_SECONDS
    THINK_SECONDS = think
    stats = Stats()
    threads = [
        threading.Thread(
            target=annotator_loop,
            args=(port, project_id, token, seed, stop_at, stats, connection_per_request, separate_claim),
        )
        for token, seed in tokens_and_seeds
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put(
        {
            "next_task_ms": stats.next_task_ms,
            "submit_ms": stats.submit_ms,
            "labels": stats.labels,
            "no_task": stats.no_task,
            "errors": stats.errors,
            "server_errors": stats.server_errors,
            "error_samples": stats.error_samples,
        }
    )


def run_clients(port: int, project_id: int, tokens: list[str], args, stop_at: float) -> Stats:
    import multiprocessing

    context = multiprocessing.get_context("fork")
    results = context.Queue()
    seeded = [(token, args.seed * 1000 + n) for n, token in enumerate(tokens)]
    groups = [seeded[index :: args.client_processes] for index in range(args.client_processes)]
    processes = [
        context.Process(
            target=client_process,
            args=(
                port,
                project_id,
                group,
                stop_at,
                args.connection_per_request,
                args.separate_claim,
                THINK_SECONDS,
                results,
            ),
        )
        for group in groups
        if group
    ]
    for process in processes:
        process.start()
    merged = Stats()
    for _ in processes:
        part = results.get()
        merged.next_task_ms += part["next_task_ms"]
        merged.submit_ms += part["submit_ms"]
        merged.error_samples += part["error_samples"][: max(0, 5 - len(merged.error_samples))]
        for key in ("labels", "no_task", "errors", "server_errors"):
            setattr(merged, key, getattr(merged, key) + part[key])
    for process in processes:
        process.join()
    return merged


def annotator_loop(
    port: int,
    project_id: int,
    token: str,
    seed: int,
    stop_at: float,
    stats: Stats,
    connection_per_request: bool = False,
    separate_claim: bool = False,
) -> None:
    rng = random.Random(seed)
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def post(path: str, body: dict | None = None) -> tuple[int, bytes, float]:
        nonlocal connection
        payload = json.dumps(body) if body is not None else ""
        started = time.perf_counter()
        if connection_per_request:
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            connection.request("POST", path, body=payload, headers=headers)
            response = connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("POST", path, body=payload, headers=headers)
            response = connection.getresponse()
            data = response.read()
        return response.status, data, (time.perf_counter() - started) * 1000

    task = None
    while time.monotonic() < stop_at:
        if task is None:
            status, data, elapsed = post(f"/api/projects/{project_id}/next-task/")
            with stats.lock:
                stats.next_task_ms.append(elapsed)
            if status == 204:
                with stats.lock:
                    stats.no_task += 1
                time.sleep(0.2)
                continue
            if status != 200:
                stats.error("next-task", status, data)
                time.sleep(0.05)
                continue
            task = json.loads(data)
        time.sleep(rng.uniform(*THINK_SECONDS))
        majority_answer = task["item_id"] % 3 != 0
        value = (not majority_answer) if rng.random() < DISAGREEMENT_RATE else majority_answer
        body = {"value": value, "note": "", "seconds_spent": round(rng.uniform(5, 90), 1)}
        if not separate_claim:
            body["next"] = True
        status, data, elapsed = post(f"/api/tasks/{task['task_id']}/submit/", body)
        task = None
        with stats.lock:
            stats.submit_ms.append(elapsed)
            if not separate_claim:
                stats.next_task_ms.append(elapsed)  # the submit's answer is what the annotator waits for
        if status in (200, 201):
            with stats.lock:
                stats.labels += status == 201
            if not separate_claim:
                task = json.loads(data).get("next_task")
        else:
            stats.error("submit", status, data)
    connection.close()


def warm_up(port: int, project_id: int, tokens: list[str]) -> None:
    """Each gunicorn worker imports the URL configuration and views on its first request; do that before timing."""

    def visit(token: str) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for _ in range(3):
            connection.request("GET", f"/api/projects/{project_id}/", headers={"Authorization": f"Token {token}"})
            connection.getresponse().read()
        connection.close()

    threads = [threading.Thread(target=visit, args=(token,)) for token in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def percentiles(values: list[float]) -> str:
    if len(values) < 2:
        return "n/a"
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return f"p50 {cuts[49]:7.1f} ms   p95 {cuts[94]:7.1f} ms   p99 {cuts[98]:7.1f} ms   (n={len(values)})"


def over_assignment(project_id: int) -> dict:
    from django.db.models import Count, F

    from annotation.models import Item, Label

    labels_per_item = Item.objects.filter(project_id=project_id).annotate(n=Count("labels"))
    return {
        "items_over_required": labels_per_item.filter(n__gt=F("required_labels"), is_gold=False).count(),
        "label_count_mismatches": labels_per_item.exclude(n=F("label_count")).count(),
        "duplicate_item_annotator": Label.objects.filter(item__project_id=project_id)
        .values("item", "annotator")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .count(),
    }


def explain_claim(project_id: int, user) -> str:
    """EXPLAIN ANALYZE of the query next_task runs to pick and lock an item."""
    from django.db import connection, transaction
    from django.db.models import Count, Exists, F, IntegerField, OuterRef, Subquery, Value
    from django.db.models.functions import Coalesce
    from django.utils import timezone

    from annotation import workflow
    from annotation.models import Item, Task

    now = timezone.now()
    leases = (
        Task.objects.filter(item=OuterRef("pk"), status=Task.Status.LEASED, expires_at__gt=now)
        .order_by()
        .values("item")
        .annotate(n=Count("pk"))
        .values("n")
    )
    done = Task.objects.filter(
        item=OuterRef("pk"), annotator=user, status__in=[Task.Status.SUBMITTED, Task.Status.SKIPPED]
    )
    query = (
        Item.objects.filter(project_id=project_id, state__in=workflow.OPEN_STATES, is_gold=False)
        .annotate(leases=Coalesce(Subquery(leases, output_field=IntegerField()), Value(0)))
        .filter(~Exists(done))
        .filter(leases__lt=F("required_labels") - F("label_count"))
        .order_by("-started", "-priority", "random_key")
        .select_for_update(skip_locked=True, of=("self",))[:1]
    )
    with transaction.atomic(), connection.cursor() as cursor:
        sql, params = query.query.sql_with_params()
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        transaction.set_rollback(True)
    return plan


def add_verdicts(rng: random.Random, project, count: int) -> None:
    """`count` rule verifiers, each with a random verdict on every completion of the project, counted into its
    tallies (nothing is labeled yet, so the rebuild is quick)."""
    from annotation import aggregates
    from grading.models import Verdict, VerifierConfig

    statuses = ["correct"] * 5 + ["incorrect"] * 4 + ["inconclusive"]
    subjects = list(project.items.values_list("subject_id", flat=True))
    for number in range(count):
        verifier, _ = VerifierConfig.objects.get_or_create(
            name=f"load-rule-{number}", defaults={"kind": VerifierConfig.Kind.RULE}
        )
        Verdict.objects.bulk_create(
            [Verdict(completion_id=subject, verifier=verifier, status=rng.choice(statuses)) for subject in subjects],
            batch_size=5000,
        )
    aggregates.rebuild(project)


def main(argv: list[str] | None = None) -> None:
    global THINK_SECONDS
    args = parse_args(argv)
    THINK_SECONDS = (args.think_ms[0] / 1000, args.think_ms[1] / 1000)
    ensure_database(args.database_url)
    setup_django(args.database_url)

    from django.db import connections

    from annotation import services

    rng = random.Random(args.seed)
    started = time.perf_counter()
    dataset = load_dataset(rng, args.items, args.completions_per_question)
    annotators = create_annotators(args.annotators)
    project = services.create_project(dataset=dataset, kind="correctness", name=f"load {dataset.name}", seed=args.seed)
    for user, _ in annotators:
        services.add_member(project, user)
    if args.verifiers:
        add_verdicts(rng, project, args.verifiers)
    print(
        f"loaded {project.items.count()} items in project {project.pk} and {len(annotators)} annotators "
        f"in {time.perf_counter() - started:.1f} s"
    )
    with connections["default"].cursor() as cursor:
        cursor.execute("ANALYZE")  # fresh planner statistics, as autovacuum keeps them on a live database
    connections.close_all()

    port = free_port()
    server = start_gunicorn(args.database_url, port, args.workers, args.threads)
    try:
        wait_until_up(port, annotators[0][1], server)
        warm_up(port, project.pk, [token for _, token in annotators])
        stop_at = time.monotonic() + args.seconds
        load_before = os.getloadavg()[0]
        cpu_before = server_cpu_seconds(server)
        run_started = time.perf_counter()
        stats = run_clients(port, project.pk, [token for _, token in annotators], args, stop_at)
        elapsed = time.perf_counter() - run_started
        server_cpu = server_cpu_seconds(server) - cpu_before
    finally:
        stop_gunicorn(server)

    check = over_assignment(project.pk)
    print(
        f"\n{args.annotators} annotators ({args.client_processes} client processes, think "
        f"{args.think_ms[0]:.0f}-{args.think_ms[1]:.0f} ms) for {elapsed:.1f} s against {args.workers} gunicorn workers "
        f"x {args.threads} threads, {args.items} items, {args.verifiers} verifiers' verdicts on each; "
        f"{os.cpu_count()} CPUs, load average before "
        f"{load_before:.1f}, after {os.getloadavg()[0]:.1f}"
        + (", a new connection per request" if args.connection_per_request else ", keep-alive connections")
    )
    if args.separate_claim:
        print("one request to submit, one to claim the next task")
    else:
        print("one request per label: the submit's answer carries the next task (a claim only when none came)")
    print(f"next-task  {percentiles(stats.next_task_ms)}")
    print(f"submit     {percentiles(stats.submit_ms)}")
    print(f"throughput {stats.labels / elapsed:.1f} labels/s ({stats.labels} labels); next-task 204: {stats.no_task}")
    print(
        f"web CPU   {server_cpu / elapsed * 100:.0f}% of one core, "
        f"{server_cpu / max(stats.labels, 1) * 1000:.1f} ms per label (gunicorn master and workers)"
    )
    print(f"errors     {stats.errors} (5xx: {stats.server_errors})")
    for sample in stats.error_samples:
        print(f"           {sample}")
    print(
        f"over-assignment: items with more labels than required {check['items_over_required']}, "
        f"(item, annotator) duplicates {check['duplicate_item_annotator']}, "
        f"label_count mismatches {check['label_count_mismatches']}"
    )
    if args.explain:
        print("\nclaim query plan:\n" + explain_claim(project.pk, annotators[-1][0]))
    next_p95 = (
        statistics.quantiles(stats.next_task_ms, n=100, method="inclusive")[94] if len(stats.next_task_ms) > 1 else None
    )
    ok = (
        next_p95 is not None
        and next_p95 <= 50
        and stats.server_errors == 0
        and not check["items_over_required"]
        and not check["duplicate_item_annotator"]
    )
    print("\nTARGET MET" if ok else "\nTARGET MISSED")


if __name__ == "__main__":
    main()
