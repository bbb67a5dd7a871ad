"""A cascade run on a real Celery worker (Redis + PostgreSQL) against the fake judge endpoint: the worker runs the
rules, asks the judge over HTTP, and the run page and the meta-evaluation page then show what each stage decided,
its precision against the human labels and what the judge cost."""

import pytest
from django.urls import reverse

from grading import runs
from grading.models import Verdict, VerificationRun
from grading.services import ensure_default_templates
from tests.grading.test_cascade import (
    JUDGE_KEY_ENV,
    LABELS,
    QUESTIONS,
    label_project,
    make_cascade,
    make_cascade_dataset,
)
from tests.waiting import wait_for


@pytest.mark.worker
def test_a_cascade_run_goes_through_a_real_worker_and_its_figures_reach_the_pages(
    celery_worker_factory, fake_openai, researcher, client
):
    ensure_default_templates()  # the transactional test database is flushed of migration data
    dataset = make_cascade_dataset("worker-cascade")
    project = label_project(dataset, LABELS)
    config = make_cascade(fake_openai.base_url, sample_rate=1.0)
    celery_worker_factory(extra_env={JUDGE_KEY_ENV: "sk-worker-cascade-key"})
    run = runs.create_run(verifier=config, dataset=dataset, chunk_size=6)
    run = wait_for(
        lambda: VerificationRun.objects.filter(pk=run.pk, status__in=VerificationRun.FINISHED).first(),
        what="the cascade run to finish",
    )

    assert run.status == VerificationRun.Status.SUCCEEDED, run.error
    n = QUESTIONS
    assert run.counts == {"correct": 2 * n, "incorrect": n, "inconclusive": 2 * n, "failed": 0}
    assert all(request.authorization == "Bearer sk-worker-cascade-key" for request in fake_openai.chat_requests)
    stages = dict(
        Verdict.objects.filter(verifier=config)
        .values_list("completion__external_id", "stage")
        .order_by("completion__external_id")
        .distinct()
    )
    assert stages == {"c0": "rules", "c1": "rules", "c2": "judge", "c3": "human", "c4": "human"}
    cost = sum(verdict.cost for verdict in Verdict.objects.filter(verifier=config))
    assert cost > 0

    client.force_login(researcher)
    html = client.get(reverse("job-detail", args=["verification-run", run.pk])).content.decode()
    assert '<tr data-stage="judge">' in html and f'<td class="number" data-field="decided">{n}</td>' in html
    assert f"({n} undecided, {n} disputed)" in html and f"${float(cost):.6f}" in html
    meta = client.get(reverse("meta-eval-page", args=[project.pk]), {"verifier": config.name}).content.decode()
    assert 'data-testid="cascade-stages"' in meta
    assert '<td class="number" data-field="precision">0.667</td>' in meta  # the judge: 2 of 3 labeled right
