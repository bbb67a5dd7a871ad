"""Runs shared by several real worker processes (Celery on Redis, PostgreSQL): one verdict per completion whatever
the number of workers, a killed worker's chunk taken over with nothing written twice, a judge's limit held across
processes and runs, and progress equal to the verdicts written."""

from __future__ import annotations

from collections import Counter

import pytest
from django.db.models import Count
from django.utils import timezone

from grading import runs
from grading.models import JudgeResponseCache, RunChunk, Verdict, VerificationRun
from grading.services import ensure_default_templates
from tests.fakes.openai_server import Reply, Slow
from tests.grading.test_runs import JUDGE_KEY_ENV, judge_verifier, make_dataset, rule_verifier
from tests.waiting import wait_for

pytestmark = pytest.mark.worker


def finished(run_id):
    return VerificationRun.objects.filter(pk=run_id, status__in=VerificationRun.FINISHED).first()


def assert_one_usable_verdict_each_and_exact_progress(run, dataset, config) -> None:
    expected = set(dataset.questions.values_list("completions__pk", flat=True))
    verdicts = Verdict.objects.filter(verifier=config, failed=False, completion_id__in=expected)
    per_completion = verdicts.values("completion_id").annotate(n=Count("pk"))
    assert {row["completion_id"] for row in per_completion} == expected
    assert {row["n"] for row in per_completion} == {1}
    assert run.progress_done == run.progress_total == len(expected)
    assert sum(run.counts[key] for key in ("correct", "incorrect", "inconclusive")) == len(expected)


def test_a_run_split_over_two_worker_processes_gives_one_verdict_per_completion(celery_worker_factory):
    dataset = make_dataset("fan-out", questions=20, per_question=6)
    config = rule_verifier("fan-out-rules")
    celery_worker_factory()
    celery_worker_factory()
    run = runs.create_run(verifier=config, dataset=dataset, chunk_size=6, options={"chunk_delay": 0.1})
    run = wait_for(lambda: finished(run.pk), what="the run to finish", timeout=120)

    assert run.status == VerificationRun.Status.SUCCEEDED, run.error
    assert_one_usable_verdict_each_and_exact_progress(run, dataset, config)
    chunks = RunChunk.objects.filter(run=run)
    assert chunks.count() == 20 and set(chunks.values_list("status", flat=True)) == {"done"}
    assert chunks.values("holder").distinct().count() == 2, "both worker processes took chunks"
    assert sum(chunks.values_list("verified", flat=True)) == 120


def test_a_worker_killed_mid_chunk_is_taken_over_and_nothing_is_paid_or_written_twice(
    celery_worker_factory, fake_openai
):
    ensure_default_templates()  # the transactional test database is flushed of migration data
    dataset = make_dataset("killed-mid-chunk", questions=10, per_question=4, judge_markers=True)
    config = judge_verifier(fake_openai.base_url)
    config.concurrency_limit, config.timeout_seconds = 4, 5
    config.save()
    fake_openai.always(Slow(0.4, Reply()))
    # the dead worker's chunk and its share of the judge's limit are free again after a few seconds
    environment = {JUDGE_KEY_ENV: "sk-kill", "VERIFICATION_STALE_SECONDS": "3", "JUDGE_LEASE_SECONDS": "1"}
    first = celery_worker_factory(extra_env=environment)
    run = runs.create_run(verifier=config, dataset=dataset, chunk_size=8)
    wait_for(lambda: VerificationRun.objects.get(pk=run.pk).progress_done >= 8, what="a first chunk", timeout=60)
    wait_for(lambda: RunChunk.objects.filter(run=run, status="running").exists(), what="a chunk held", timeout=30)
    first.kill()
    asked_before_kill = len(fake_openai.chat_requests)  # nothing asks any more until the next worker starts
    kept_before_kill = JudgeResponseCache.objects.count()
    held = list(RunChunk.objects.filter(run=run, status="running").values_list("first_id", "last_id"))
    assert held, "the worker died holding a chunk"
    killed_at = timezone.now()

    runs.resume_run(run, force=True)
    celery_worker_factory(extra_env=environment)
    run = wait_for(lambda: finished(run.pk), what="the run taken over to finish", timeout=120)
    assert run.status == VerificationRun.Status.SUCCEEDED, run.error
    assert_one_usable_verdict_each_and_exact_progress(run, dataset, config)
    prompts = Counter(str(request.messages) for request in fake_openai.chat_requests)
    paid_twice = sum(count - 1 for count in prompts.values())
    # only the calls that were on the wire when the worker died are paid again: every answer it got was kept
    assert paid_twice <= asked_before_kill - kept_before_kill <= config.concurrency_limit
    for first_id, last_id in held:  # what the dead worker held was verified again, after it died
        taken_over = Verdict.objects.filter(verifier=config, completion_id__gte=first_id, completion_id__lte=last_id)
        assert taken_over.exists() and not taken_over.filter(updated_at__lt=killed_at).exists()
    assert set(RunChunk.objects.filter(run=run).values_list("status", flat=True)) == {"done"}


def test_two_runs_of_one_judge_on_two_processes_never_exceed_its_limit(celery_worker_factory, fake_openai):
    ensure_default_templates()
    config = judge_verifier(fake_openai.base_url)
    config.concurrency_limit = 3
    config.save()
    fake_openai.always(Slow(0.15, Reply()))
    datasets = [make_dataset(f"limited-{side}", questions=6, per_question=4, judge_markers=True) for side in "ab"]
    for _ in range(2):
        celery_worker_factory(extra_env={JUDGE_KEY_ENV: "sk-limit"})
    started = [runs.create_run(verifier=config, dataset=dataset, chunk_size=4) for dataset in datasets]
    ended = [wait_for(lambda run=run: finished(run.pk), what="both runs to finish", timeout=180) for run in started]

    assert all(run.status == VerificationRun.Status.SUCCEEDED for run in ended), [run.error for run in ended]
    for run, dataset in zip(ended, datasets):
        assert_one_usable_verdict_each_and_exact_progress(run, dataset, config)
    assert fake_openai.max_in_flight == 3  # the limit was reached, and never passed
