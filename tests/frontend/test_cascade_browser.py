"""Real chromium and a real Celery worker: a researcher starts a cascade run from the dataset's page, the worker
asks the fake judge endpoint, and the run's own page shows what each stage decided and what it cost."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from core import roles
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

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_cascade_run_started_from_the_page_shows_its_stages_and_cost(
    page, live_server, login, app_url, make_user, celery_worker_factory, fake_openai, screenshot
):
    celery_worker_factory({JUDGE_KEY_ENV: "sk-browser-cascade"})
    researcher = make_user(roles.RESEARCHER, username="casimir")
    ensure_default_templates()  # an earlier transactional test may have flushed the ones the migration made
    dataset = make_cascade_dataset("browser-cascade")
    label_project(dataset, LABELS)
    config = make_cascade(fake_openai.base_url, sample_rate=1.0, name="browser-cascade")

    login(page, researcher)
    page.goto(app_url("jobs-dataset", dataset.pk))
    form = page.get_by_test_id("run-form")
    form.get_by_label("Verifier").select_option(value=str(config.pk))
    form.get_by_role("button", name="Start run").click()
    page.wait_for_url(re.compile(r"#verification-runs$"))
    run = VerificationRun.objects.get(verifier=config)
    row = page.locator(f"#job-run-{run.pk}")
    expect(row.locator('[data-job-field="status"]')).to_have_text("Succeeded", timeout=60_000)
    wait_for(lambda: VerificationRun.objects.filter(pk=run.pk, status="succeeded").first(), what="the run to end")

    page.goto(app_url("job-detail", "verification-run", run.pk))
    report = page.get_by_test_id("cascade-report")
    expect(report.get_by_role("heading")).to_contain_text("then browser-cascade-judge, then humans")
    stages = report.get_by_test_id("cascade-stages")
    n = QUESTIONS
    expect(stages.locator('tr[data-stage="rules"] [data-field="decided"]')).to_have_text(str(2 * n))
    expect(stages.locator('tr[data-stage="rules"] [data-field="precision"]')).to_have_text("1.000")
    expect(stages.locator('tr[data-stage="judge"] [data-field="decided"]')).to_have_text(str(n))
    expect(stages.locator('tr[data-stage="judge"] [data-field="precision"]')).to_have_text("0.667")
    expect(stages.locator('tr[data-stage="human"] [data-field="decided"]')).to_contain_text(
        f"{2 * n} ({n} undecided, {n} disputed)"
    )
    verdicts = list(Verdict.objects.filter(verifier=config))
    cost = sum(verdict.cost for verdict in verdicts)
    prompt = sum(verdict.prompt_tokens for verdict in verdicts)
    completion = sum(verdict.completion_tokens for verdict in verdicts)
    assert cost > 0 and prompt > 0 and completion > 0
    expect(stages.locator('tr[data-stage="judge"] [data-field="cost"]')).to_have_text(f"${float(cost):.6f}")
    expect(stages.locator('tr[data-stage="judge"] [data-field="tokens"]')).to_have_text(
        f"{prompt + completion} ({prompt} / {completion})"
    )
    expect(report.get_by_test_id("cascade-summary")).to_contain_text(
        f"Sampled checks of rule verdicts: {3 * n}, disputed {n}"
    )
    report.scroll_into_view_if_needed()
    screenshot(page, "cascade-run")
