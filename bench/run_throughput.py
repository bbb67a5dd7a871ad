"""Verification runs through the path a user takes: real Celery workers on Redis, PostgreSQL, a local judge.

    .venv/bin/python bench/run_throughput.py [--completions 100000] [--judge-completions 2000] [--latency 1.0]
        [--limits 64 256] [--only rules|judge|shared|kill ...] [--database-url postgres://...] [--smoke]

Each figure is printed beside its baseline or ideal, measured in the same session:

- rules: N generated completions (about 50 samples per question with a few distinct final answers, as Pass@k
  sampling gives) are imported through the app's import; `manage.py verify_jsonl` verifies the same rows as a file
  (the baseline); then a rule-based run over the dataset, queued as a user queues it, is timed from its creation to
  its success with one worker process, then with two.
- judge: a local OpenAI-compatible judge (tests.fakes.judge_server, in a process of its own) answers each call after
  `--latency` seconds. Its own maximum rate is measured first with a load generator at the largest limit. Then a
  judge run over `--judge-completions` distinct completions is timed at each limit, beside the ideal
  n x latency / limit and the server's own rate.
- shared: two worker processes and two concurrent runs of one judge (limit 64): the most calls the server ever had
  in flight at once, beside the limit.
- kill: a judge run (limit 64) whose only worker is killed (SIGKILL) midway; another worker takes it over. The
  answers the server gave twice, beside the calls it had in flight when the worker died.
- The VerifyBench-Hard construction (7.25 million judge calls at the latency, 256 in flight) extrapolated from the
  rate at limit 256, beside its ideal.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_database import ensure_database  # noqa: E402
from verify_throughput import STYLES, synthetic_rows  # noqa: E402

REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
JUDGE_KEY_ENV = "JUDGE_KEY_BENCH_RUNS"
VBH_CALLS = 7_250_000


def setup(database_url: str, queue: str) -> None:
    os.environ.update(
        DATABASE_URL=database_url,
        CELERY_BROKER_URL=REDIS_URL,
        CELERY_QUEUE=queue,
        DJANGO_SETTINGS_MODULE="config.settings",
        SECRET_KEY=os.environ.get("SECRET_KEY", "bench-secret"),
        CELERY_TASK_ALWAYS_EAGER="0",
    )
    os.environ[JUDGE_KEY_ENV] = "sk-bench"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


class Workers:
    """`celery worker` processes (prefork) on the benchmark's queue."""

    def __init__(self, database_url: str, queue: str, processes: int, extra_env: dict | None = None):
        self.log = Path(tempfile.gettempdir()) / f"bench-worker-{uuid.uuid4().hex[:6]}.log"
        env = dict(os.environ)
        env.update(
            DATABASE_URL=database_url,
            CELERY_BROKER_URL=REDIS_URL,
            CELERY_QUEUE=queue,
            PYTHONUNBUFFERED="1",
            **(extra_env or {}),
        )
        self._handle = open(self.log, "w")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--pool=prefork",
                f"--concurrency={processes}",
                "-Q",
                queue,
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel=warning",
                "-n",
                f"bench-{uuid.uuid4().hex[:6]}@%h",
            ],
            cwd=ROOT,
            env=env,
            stdout=self._handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self._children() >= processes:
                time.sleep(1.0)  # its start-up sweep, and the children's imports
                return
            if self.process.poll() is not None:
                raise RuntimeError(self.log.read_text())
            time.sleep(0.2)
        raise RuntimeError(f"workers did not start:\n{self.log.read_text()}")

    def _children(self) -> int:
        try:
            out = subprocess.run(["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True).stdout
        except FileNotFoundError:
            return 0
        return len(out.split())

    def cpu_seconds(self) -> float:
        """CPU time of the worker's processes so far (user + system), from /proc."""
        pids = [self.process.pid]
        try:
            pids += [
                int(p)
                for p in subprocess.run(
                    ["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True
                ).stdout.split()
            ]
        except FileNotFoundError:
            pass
        total = 0.0
        for pid in pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return total

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        self._handle.close()


def native_rows(count: int, seed: int = 11, *, distinct: bool = False) -> list[dict]:
    """The benchmark's completions in the app's own import format: each distinct (reference, type) is a question.
    The generator repeats whole completions (about one in ten is new); `distinct` makes every text unique, as sampled
    model outputs are, while the final answers still repeat."""
    rows, questions = [], {}
    for index, item in enumerate(synthetic_rows(count, seed=seed)):
        question_id = questions.setdefault((item.reference, item.answer_type), f"q{len(questions)}")
        rows.append(
            {
                "question_id": question_id,
                "question": f"Question {question_id}: find the value.",
                "reference_answer": item.reference,
                "answer_type": item.answer_type,
                "completion_id": f"c{index}",
                "model": f"model-{index % 18}",
                "completion": f"Attempt {index}. {item.completion}" if distinct else item.completion,
            }
        )
    return rows


def judge_rows(count: int, prefix: str, seed: int = 5) -> list[dict]:
    """Distinct completions (so every prompt is asked once), half of them carrying the fake judge's correct marker."""
    from tests.fakes.openai_server import CORRECT_MARKER

    rows = []
    for index in range(count):
        value = random.Random(seed * 1_000_003 + index // 4).randint(1, 10_000)
        right = index % 2 == 0
        answer = value if right else value + 1
        text = random.Random(index).choice(STYLES).format(a=answer) + f" (sample {prefix}-{index})"
        rows.append(
            {
                "question_id": f"{prefix}-q{index // 4}",
                "question": f"Compute the value of item {index // 4}.",
                "reference_answer": str(value),
                "answer_type": "A1",
                "completion_id": f"{prefix}-c{index}",
                "model": f"model-{index % 18}",
                "completion": text + (f" {CORRECT_MARKER}" if right else ""),
            }
        )
    return rows


def write_jsonl(rows: list[dict], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def import_dataset(name: str, rows: list[dict], folder: Path) -> tuple[object, float]:
    from verifybench.models import Dataset
    from verifybench.services import import_jsonl

    existing = Dataset.objects.filter(name=name).first()
    if existing is not None and existing.completion_count == len(rows):
        return existing, 0.0
    path = write_jsonl(rows, folder / f"{name}.jsonl")
    started = time.perf_counter()
    report = import_jsonl(dataset_name=name, source=str(path), fmt="mathlabel")
    elapsed = time.perf_counter() - started
    return Dataset.objects.get(pk=report.dataset_id), elapsed


def timed_run(verifier, dataset, poll: float = 0.05, timeout: float = 3600) -> tuple[object, float]:
    from grading import runs
    from grading.models import VerificationRun

    started = time.perf_counter()
    run = runs.create_run(verifier=verifier, dataset=dataset)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = VerificationRun.objects.get(pk=run.pk)
        if run.is_finished:
            return run, time.perf_counter() - started
        time.sleep(poll)
    raise RuntimeError(f"run {run.pk} did not finish within {timeout} s")


def fresh_verifier(kind: str, name: str, **fields):
    from grading.models import PromptTemplate, VerifierConfig

    if kind == "judge":
        from grading.judges.egress import parse_entry
        from grading.models import AllowedJudgeHost

        scheme, host, port = parse_entry(fields["base_url"])
        AllowedJudgeHost.objects.update_or_create(
            scheme=scheme, host=host, port=port, defaults={"allow_private": True, "key_envs": [JUDGE_KEY_ENV]}
        )
        from grading.services import ensure_default_templates

        ensure_default_templates()  # made by a data migration; here too for a database emptied since
        fields.setdefault("template", PromptTemplate.objects.get(name="verifybench-final-judgment", version=1))
        fields.setdefault("api_key_env", JUDGE_KEY_ENV)
    return VerifierConfig.objects.create(name=f"{name}-{uuid.uuid4().hex[:6]}", kind=kind, **fields)


def check_verdicts(run, expected: int) -> str:
    from grading.models import Verdict

    written = Verdict.objects.filter(verifier_id=run.verifier_id, failed=False).count()
    state = "exact" if written == expected == run.progress_done else "MISMATCH"
    return f"{written} verdicts, progress {run.progress_done}/{run.progress_total} ({state})"


# -- the phases ------------------------------------------------------------------------------------------------------


def bench_rules(arguments, database_url: str, queue: str, folder: Path) -> None:
    count = arguments.completions
    rows = native_rows(count, distinct=arguments.distinct_texts)
    name = f"bench-rules-{count}" + ("-distinct" if arguments.distinct_texts else "")
    dataset, import_seconds = import_dataset(name, rows, folder)
    if import_seconds:
        print(f"imported {count:,} completions in {import_seconds:.1f} s ({count / import_seconds:,.0f} rows/s)")
    file_rows = write_jsonl(
        [
            {
                "completion_id": r["completion_id"],
                "question": r["question"],
                "answer": r["reference_answer"],
                "answer_type": r["answer_type"],
                "completion": r["completion"],
            }
            for r in rows
        ],
        folder / f"verify-{name}.jsonl",
    )
    file_records = file_rows.read_text(encoding="utf-8").splitlines(keepends=True)
    one_row = folder / "verify-one-row.jsonl"
    one_row.write_text(file_records[0], encoding="utf-8")
    halves = []
    for half, records in enumerate((file_records[: count // 2], file_records[count // 2 :])):
        halves.append(folder / f"verify-{name}-half{half}.jsonl")
        halves[-1].write_text("".join(records), encoding="utf-8")

    def verify_files(paths: list[Path]) -> float:
        """verify_jsonl over each file, one process per file, all at once: seconds until the last one ends."""
        started = time.perf_counter()
        processes = [
            subprocess.Popen(
                [sys.executable, "manage.py", "verify_jsonl", str(path), str(path.with_suffix(".verdicts"))],
                cwd=ROOT,
                env={**os.environ},
                stdout=subprocess.DEVNULL,
            )
            for path in paths
        ]
        if any(process.wait() != 0 for process in processes):
            raise RuntimeError("verify_jsonl failed")
        return time.perf_counter() - started

    start_up = verify_files([one_row])
    baseline = verify_files([file_rows])
    baseline_rate = count / baseline
    two_files = verify_files(halves)
    print(
        f"baseline  verify_jsonl on the same {count:,} rows as a file (1 process): {baseline:.1f} s, "
        f"{baseline_rate:,.0f} completions/s ({count / (baseline - start_up):,.0f}/s without its {start_up:.1f} s "
        f"start-up); the rows in two halves, two processes at once: {two_files:.1f} s = "
        f"{baseline / two_files:.2f}x one (what two processes can gain on this machine)"
    )
    rates = {}
    for processes in (1, 2):
        workers = Workers(database_url, queue, processes)
        try:
            verifier = fresh_verifier("rule", f"bench-rules-{processes}p")
            cpu_before = workers.cpu_seconds()
            run, seconds = timed_run(verifier, dataset)
            cpu = workers.cpu_seconds() - cpu_before
        finally:
            workers.stop()
        rates[processes] = count / seconds
        print(
            f"rule-based run, {processes} worker process(es): {seconds:.1f} s, {rates[processes]:,.0f} completions/s "
            f"= {rates[processes] / baseline_rate:.0%} of verify_jsonl; worker CPU {cpu:.1f} s; "
            f"{check_verdicts(run, count)}; {run.status}"
        )
    print(
        f"  two processes / one: {rates[2] / rates[1]:.2f}x (target >= 1.7x; verify_jsonl in two processes: "
        f"{baseline / two_files:.2f}x); one process / verify_jsonl: {rates[1] / baseline_rate:.0%} "
        f"(target >= 50%; {rates[1] * (baseline - start_up) / count:.0%} of it without its start-up); "
        f"two processes / verify_jsonl: {rates[2] / baseline_rate:.0%}"
    )


async def _load(base_url: str, concurrency: int, seconds: float) -> float:
    import aiohttp

    body = {"model": "load", "messages": [{"role": "user", "content": "ping"}], "temperature": 0}
    done = 0
    stop_at = time.monotonic() + seconds
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def loop() -> None:
            nonlocal done
            while time.monotonic() < stop_at:
                async with session.post(f"{base_url}/chat/completions", json=body) as response:
                    await response.read()
                    done += 1

        started = time.monotonic()
        await asyncio.gather(*(loop() for _ in range(concurrency)))
        return done / (time.monotonic() - started)


def server_rate(server, concurrency: int, latency: float) -> float:
    rate = asyncio.run(_load(server.base_url, concurrency, max(5.0, 6 * latency)))
    server.reset()
    return rate


def bench_judge(arguments, database_url: str, queue: str, folder: Path, server) -> float | None:
    count, latency = arguments.judge_completions, arguments.latency
    top = max(arguments.limits)
    own = server_rate(server, top, latency)
    print(
        f"fake judge server on its own, {top} concurrent callers at {latency:g} s latency: {own:,.1f} calls/s "
        f"(ideal {top / latency:,.1f})"
    )
    rate_at_top = None
    for limit in arguments.limits:
        dataset, _ = import_dataset(f"bench-judge-{count}-{limit}", judge_rows(count, f"l{limit}"), folder)
        verifier = fresh_verifier(
            "judge",
            f"bench-judge-{limit}",
            base_url=server.base_url,
            model=f"fake-{uuid.uuid4().hex[:6]}",
            concurrency_limit=limit,
            timeout_seconds=30,
            max_retries=3,
            backoff_base_seconds=0.2,
        )
        server.reset()
        workers = Workers(database_url, queue, 1)
        try:
            cpu_before = workers.cpu_seconds()
            run, seconds = timed_run(verifier, dataset)
            cpu = workers.cpu_seconds() - cpu_before
        finally:
            workers.stop()
        stats = server.stats()
        rate = stats["requests"] / seconds
        ideal_seconds = count * latency / limit
        print(
            f"judge run, limit {limit}, 1 worker process: {count:,} calls in {seconds:.1f} s = {rate:,.1f} calls/s; "
            f"ideal {count / ideal_seconds:,.1f} ({rate * ideal_seconds / count:.0%} of it), server alone {own:,.1f} "
            f"({rate / own:.0%} of it); most in flight {stats['max_in_flight']}; worker CPU {cpu:.1f} s; "
            f"{check_verdicts(run, count)}"
        )
        if limit == top:
            rate_at_top = rate
    return rate_at_top


def bench_shared(arguments, database_url: str, queue: str, folder: Path, server) -> None:
    from grading.models import VerificationRun

    count, limit = arguments.judge_completions, 64
    datasets = [
        import_dataset(f"bench-shared-{count}-{side}", judge_rows(count, f"s{side}"), folder)[0] for side in "ab"
    ]
    verifier = fresh_verifier(
        "judge",
        "bench-shared",
        base_url=server.base_url,
        model=f"fake-{uuid.uuid4().hex[:6]}",
        concurrency_limit=limit,
        timeout_seconds=30,
        max_retries=3,
        backoff_base_seconds=0.2,
    )
    server.reset()
    workers = Workers(database_url, queue, 2)
    try:
        from grading import runs

        started = time.perf_counter()
        created = [runs.create_run(verifier=verifier, dataset=dataset) for dataset in datasets]
        while not all(VerificationRun.objects.get(pk=run.pk).is_finished for run in created):
            time.sleep(0.1)
        seconds = time.perf_counter() - started
    finally:
        workers.stop()
    stats = server.stats()
    print(
        f"two concurrent runs of one judge (limit {limit}) on 2 worker processes: {stats['requests']:,} calls in "
        f"{seconds:.1f} s ({stats['requests'] / seconds:,.1f}/s, ideal {limit / arguments.latency:,.1f}); most in "
        f"flight at the server {stats['max_in_flight']} (limit {limit})"
    )


def bench_kill(arguments, database_url: str, queue: str, folder: Path, server) -> None:
    from grading.models import VerificationRun

    count, limit = arguments.judge_completions, 64
    dataset, _ = import_dataset(f"bench-kill-{count}", judge_rows(count, "k"), folder)
    verifier = fresh_verifier(
        "judge",
        "bench-kill",
        base_url=server.base_url,
        model=f"fake-{uuid.uuid4().hex[:6]}",
        concurrency_limit=limit,
        timeout_seconds=10,
        max_retries=3,
        backoff_base_seconds=0.2,
    )
    stale = {"VERIFICATION_STALE_SECONDS": "6"}
    server.reset()
    first = Workers(database_url, queue, 1, stale)
    from grading import runs

    run = runs.create_run(verifier=verifier, dataset=dataset)
    while server.stats()["answered"] < count * 0.4:
        time.sleep(0.05)
    first.kill()
    first.stop()
    # in flight when it died, as the run sees it: calls it started whose answers it had not kept (on the wire, or
    # answered and not yet written to the cache); nothing starts or is kept after the kill
    from grading.models import JudgeResponseCache

    unkept_at_kill = server.stats()["requests"] - JudgeResponseCache.objects.filter(model=verifier.model).count()
    time.sleep(7)  # the run's heartbeat goes stale; the next worker's start-up sweep takes it over
    second = Workers(database_url, queue, 1, stale)
    try:
        while not VerificationRun.objects.get(pk=run.pk).is_finished:
            time.sleep(0.2)
    finally:
        second.stop()
    run = VerificationRun.objects.get(pk=run.pk)
    stats = server.stats()
    print(
        f"worker killed mid-run (limit {limit}): {unkept_at_kill} calls in flight when it died (started, answer not "
        f"kept; {stats['orphaned']} of them still at the server, answered to a closed connection), "
        f"{stats['answers_paid_again']} answers paid twice ({stats['prompts_answered_twice']} prompts; target <= "
        f"{unkept_at_kill}); "
        f"{check_verdicts(run, count)}; {run.status} after {run.attempt} attempts"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url")
    parser.add_argument("--completions", type=int, default=100_000)
    parser.add_argument("--judge-completions", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--limits", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--only", nargs="+", choices=["rules", "judge", "shared", "kill"])
    parser.add_argument(
        "--distinct-texts", action="store_true", help="rules: every completion's text unique (its answer repeated)"
    )
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, to check the benchmark runs")
    arguments = parser.parse_args(argv)
    if arguments.smoke:
        arguments.completions, arguments.judge_completions, arguments.latency = 300, 60, 0.05
        arguments.limits = [8, 16]
    phases = set(arguments.only or ["rules", "judge", "shared", "kill"])
    database_url = ensure_database(arguments.database_url, "mathlabel_run_bench")
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    setup(database_url, queue)
    folder = ROOT / "var" / "bench" / "runs"
    if "rules" in phases:
        bench_rules(arguments, database_url, queue, folder)
    if phases & {"judge", "shared", "kill"}:
        from tests.fakes.judge_server import JudgeServerProcess

        server = JudgeServerProcess(latency=arguments.latency).start()
        try:
            rate = bench_judge(arguments, database_url, queue, folder, server) if "judge" in phases else None
            if "shared" in phases:
                bench_shared(arguments, database_url, queue, folder, server)
            if "kill" in phases:
                bench_kill(arguments, database_url, queue, folder, server)
        finally:
            server.stop()
        if rate:
            ideal_hours = VBH_CALLS * arguments.latency / 256 / 3600
            hours = VBH_CALLS / rate / 3600
            print(
                f"VerifyBench-Hard construction, {VBH_CALLS:,} judge calls at {arguments.latency:g} s with "
                f"{max(arguments.limits)} in flight: {hours:.1f} h at the measured rate, ideal {ideal_hours:.1f} h "
                f"({hours / ideal_hours:.2f}x; target <= 1.25x)"
            )


if __name__ == "__main__":
    main()
