"""Real chromium, a real Celery worker on Redis, a slow judge: a run started from the page shows its progress move
while the worker verifies, and the Cancel button stops it part way."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from core import roles
from grading.models import Verdict, VerificationRun
from grading.services import ensure_default_templates
from tests.fakes.openai_server import Slow
from tests.grading.test_runs import JUDGE_KEY_ENV, judge_verifier, make_dataset
from tests.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def shown_done(row) -> int:
    return int(row.locator('[data-job-field="done"]').inner_text().replace(",", "") or 0)


def test_a_slow_run_shows_its_progress_move_and_is_cancelled_from_the_page(
    page, live_server, login, app_url, make_user, celery_worker_factory, fake_openai
):
    fake_openai.always(Slow(0.3))  # every judge call takes 0.3 s: about 12 s for the whole run
    celery_worker_factory({JUDGE_KEY_ENV: "sk-test-worker"})
    researcher = make_user(roles.RESEARCHER, username="rosa")
    dataset = make_dataset("slow-judge", questions=10, per_question=4)
    ensure_default_templates()  # an earlier transactional test may have flushed the ones the migration made
    verifier = judge_verifier(fake_openai.base_url, name="slow-judge")
    verifier.concurrency_limit = 1
    verifier.save(update_fields=["concurrency_limit"])

    login(page, researcher)
    page.goto(app_url("jobs-dataset", dataset.pk))
    form = page.get_by_test_id("run-form")
    form.get_by_label("Verifier").select_option(value=str(verifier.pk))
    form.get_by_label("Chunk size").fill("2")
    form.get_by_role("button", name="Start run").click()
    page.wait_for_url(re.compile(r"#verification-runs$"))

    run = VerificationRun.objects.get()
    row = page.locator(f"#job-run-{run.pk}")
    expect(row.locator('[data-job-field="status"]')).to_have_text("Running", timeout=30_000)
    # the page polls the worker's progress: the count it shows goes up at least twice while we watch
    seen = [shown_done(row)]
    for _ in range(2):
        wait_for(lambda: shown_done(row) > seen[-1], what="the progress shown on the page to move", timeout=30)
        seen.append(shown_done(row))
    assert seen == sorted(seen) and seen[-1] < 40

    row.get_by_role("button", name="Cancel").click()
    expect(row.locator('[data-job-field="status"]')).to_have_text("Cancelled", timeout=30_000)
    run = wait_for(
        lambda: VerificationRun.objects.filter(pk=run.pk, status="cancelled").first(),
        what="the run to stop",
        timeout=30,
    )
    assert 0 < run.progress_done < run.progress_total == 40
    assert Verdict.objects.filter(verifier=verifier).count() == run.progress_done
    expect(row.get_by_role("button", name="Cancel")).to_have_count(0)
    expect(row.get_by_role("button", name="Resume")).to_be_visible()
