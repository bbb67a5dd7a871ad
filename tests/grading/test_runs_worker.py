"""Verification runs on a real Celery worker (Redis + PostgreSQL): a SIGKILL mid-run, and a judge run over HTTP.

After the kill the run is resumed explicitly (`runs.resume_run(force=True)`), as an operator would: with the whole
worker killed, Redis hands the unacknowledged message out again only after its visibility timeout (an hour by
default), and by then the resumed attempt has finished, so the late message is ignored. The run is slowed with the
`chunk_delay` option so that the kill lands between chunks of a run that is still going.
"""

import pytest
from django.db.models import Count

from grading import runs
from grading.models import Verdict, VerificationRun
from grading.services import ensure_default_templates
from tests.grading.test_runs import JUDGE_KEY_ENV, judge_verifier, make_dataset, rule_verifier
from tests.waiting import wait_for
from verifybench.models import Completion


def finished(run_id):
    return VerificationRun.objects.filter(pk=run_id, status__in=VerificationRun.FINISHED).first()


@pytest.mark.worker
def test_a_killed_worker_loses_at_most_its_chunk_and_a_resumed_run_ends_with_one_verdict_each(
    celery_worker_factory,
):
    dataset = make_dataset("killed-run", questions=10, per_question=4)
    config = rule_verifier()
    worker = celery_worker_factory()
    run = runs.create_run(verifier=config, dataset=dataset, chunk_size=4, options={"chunk_delay": 0.3})
    wait_for(lambda: VerificationRun.objects.get(pk=run.pk).done >= 8, what="the run to get going")
    worker.kill()

    run.refresh_from_db()
    assert run.status == VerificationRun.Status.RUNNING
    written = list(
        Verdict.objects.filter(verifier=config).order_by("completion_id").values_list("completion_id", flat=True)
    )
    all_ids = list(Completion.objects.filter(question__dataset=dataset).order_by("pk").values_list("pk", flat=True))
    assert 8 <= len(written) < 40 and len(written) % 4 == 0, "only whole chunks are committed"
    assert written == all_ids[: len(written)] and run.done == len(written)

    runs.resume_run(run, force=True)
    celery_worker_factory()
    run = wait_for(lambda: finished(run.pk), what="the resumed run to finish")
    assert run.status == VerificationRun.Status.SUCCEEDED, run.error
    assert (run.attempt, run.total, run.done) == (2, 40, 40)
    assert run.counts == {"correct": 20, "incorrect": 20, "inconclusive": 0, "failed": 0}
    per_completion = Verdict.objects.filter(verifier=config).values("completion_id").annotate(n=Count("pk"))
    assert sorted(row["completion_id"] for row in per_completion) == all_ids
    assert {row["n"] for row in per_completion} == {1}


@pytest.mark.worker
def test_a_judge_run_goes_through_a_real_worker_to_the_fake_endpoint(celery_worker_factory, fake_openai):
    ensure_default_templates()  # the transactional test database is flushed of migration data
    dataset = make_dataset("worker-judge", questions=3, per_question=4, judge_markers=True)
    config = judge_verifier(fake_openai.base_url)
    celery_worker_factory(extra_env={JUDGE_KEY_ENV: "sk-worker-judge-key"})
    run = runs.create_run(verifier=config, dataset=dataset, chunk_size=5)
    run = wait_for(lambda: finished(run.pk), what="the judge run to finish")

    assert run.status == VerificationRun.Status.SUCCEEDED, run.error
    assert run.counts == {"correct": 6, "incorrect": 6, "inconclusive": 0, "failed": 0}
    assert fake_openai.chat_requests, "the worker should have called the endpoint"
    assert all(request.authorization == "Bearer sk-worker-judge-key" for request in fake_openai.chat_requests)
    for verdict in Verdict.objects.filter(verifier=config).select_related("completion"):
        expected = "correct" if "<<correct>>" in verdict.completion.text else "incorrect"
        assert verdict.status == expected and "Final Judgment" in verdict.raw_output
