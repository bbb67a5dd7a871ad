"""Real chromium, a real Celery worker on Redis: creating a project from the page answers at once with the setup
job's page (no item is made in the request: no worker is running yet, so the job waits, queued), and once a worker
takes the job the page moves on by itself to the project, complete and open for labeling."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotation import aggregates
from annotation.models import AnnotationProject
from core import roles
from tests.annotation.conftest import build_dataset
from tests.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_the_page_queues_the_setup_and_lands_on_the_complete_project(
    page, live_server, login, app_url, make_user, celery_worker_factory
):
    researcher = make_user(roles.RESEARCHER, username="rhea")
    dataset = build_dataset(questions=6, completions_per_question=4, name="setup-by-worker")

    login(page, researcher)
    page.goto(app_url("dashboard-project-new"))
    page.locator("#id_name").fill("Worker made")
    page.locator("#id_dataset").select_option(label=dataset.name)
    page.locator("#id_kind").select_option(value="correctness")
    page.get_by_role("button", name="Create project").click()

    page.wait_for_url(re.compile(r"/jobs/project-setup/\d+/$"))
    project = AnnotationProject.objects.get(name="Worker made")
    job = project.setup_jobs.get()
    expect(page.locator(f"#job-setup-{job.pk} [data-job-field='status']")).to_have_text("Queued")
    assert project.preparing and project.items.count() == 0  # the request made no item

    celery_worker_factory()
    page.wait_for_url(re.compile(rf"/projects/{project.pk}/dashboard/$"), timeout=60_000)
    expect(page.get_by_test_id("item-count")).to_have_text("24")
    expect(page.get_by_test_id("project-preparing")).to_have_count(0)

    job = wait_for(lambda: project.setup_jobs.filter(status="succeeded").first(), what="the setup to succeed")
    project.refresh_from_db()
    assert not project.preparing and project.items.count() == 24 == job.items_created
    assert aggregates.project_tallies(project) == {
        key: count for key, count in aggregates.computed_with_moments(project).items() if count
    }
