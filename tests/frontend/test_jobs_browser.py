"""Real chromium: a rule-based run started from the dashboard is watched to the end, an export is downloaded."""

from __future__ import annotations

import json
import zipfile

import pytest
from playwright.sync_api import expect

from core import roles
from core.jobs import runner
from grading import runs
from grading.models import VerificationRun
from reports.models import ExportJob

from .jobs_fixtures import correctness_project, label_everything, make_verifiable_dataset, rule_verifier

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def save_sections_screenshot(screenshot, page, *test_ids: str, name: str) -> None:
    """docs/screenshots/<name>.png: the part of the page that holds the given sections."""
    boxes = [page.get_by_test_id(test_id).bounding_box() for test_id in test_ids]  # relative to the viewport
    scroll_x, scroll_y = page.evaluate("[window.scrollX, window.scrollY]")
    top = min(box["y"] for box in boxes) + scroll_y - 12
    bottom = max(box["y"] + box["height"] for box in boxes) + scroll_y + 12
    left = min(box["x"] for box in boxes) + scroll_x - 12
    right = max(box["x"] + box["width"] for box in boxes) + scroll_x + 12
    screenshot(
        page,
        name,
        full_page=True,
        clip={"x": max(left, 0), "y": max(top, 0), "width": right - left, "height": bottom - top},
    )


def test_run_progress_is_watched_to_the_end_and_an_export_downloads(
    page, live_server, login, app_url, make_user, monkeypatch, settings, tmp_path, screenshot
):
    settings.EXPORT_ROOT = tmp_path / "exports"
    researcher = make_user(roles.RESEARCHER, username="rita")
    annotators = [make_user(roles.ANNOTATOR, username=name) for name in ("dora", "eli")]
    dataset = make_verifiable_dataset(questions=4, per_question=4, name="VerifyBench sample")
    project = correctness_project(dataset, annotators=annotators, name="VerifyBench sample: correctness")
    label_everything(project, annotators)
    rule_verifier("math-rules")
    # As with a worker, the run the form starts waits in the queue; it is executed below while the page watches.
    queued = []
    enqueue = runner.enqueue
    monkeypatch.setattr(
        runner, "enqueue", lambda job: queued.append(job) if isinstance(job, VerificationRun) else enqueue(job)
    )

    login(page, researcher)
    page.goto(app_url("dashboard-project", project.pk))
    form = page.get_by_test_id("section-runs").get_by_test_id("run-form")
    form.get_by_label("Verifier").select_option(label="math-rules (rule-based)")
    form.get_by_label("Chunk size").fill("4")
    form.get_by_role("button", name="Start run").click()
    page.wait_for_url(app_url("dashboard-project", project.pk) + "#verification-runs")

    run = VerificationRun.objects.get()
    assert [queued_run.pk for queued_run in queued] == [run.pk] and run.status == "queued"
    row = page.locator(f"#job-run-{run.pk}")
    status = row.locator('[data-job-field="status"]')
    expect(status).to_have_text("Queued")
    expect(page.locator("html")).to_have_attribute("data-jobs-polling", "active")
    expect(row.get_by_role("button", name="Cancel")).to_be_visible()

    finished = runs.execute_run(run.pk)
    assert finished.status == "succeeded" and finished.total == 16

    expect(status).to_have_text("Succeeded", timeout=15_000)
    expect(row.locator('[data-job-field="done"]')).to_have_text("16")
    expect(row.locator('[data-job-field="total"]')).to_have_text("16")
    expect(row.locator('[data-job-count="correct"]')).to_have_text(str(finished.counts["correct"]))
    expect(row.locator('[data-job-count="incorrect"]')).to_have_text(str(finished.counts["incorrect"]))
    assert finished.counts["correct"] == finished.counts["incorrect"] == 8
    bar = row.locator("[data-job-progress]")
    assert bar.evaluate("bar => bar.value / bar.max") == 1
    expect(page.locator("html")).to_have_attribute("data-jobs-polling", "idle")
    # The row the server renders for an ended run replaces the one that was polled: no Cancel button now.
    expect(row.get_by_role("button", name="Cancel")).to_have_count(0)

    exports = page.get_by_test_id("section-exports")
    form = exports.get_by_test_id("export-form")
    form.get_by_label("Format").select_option("verifybench-hard")
    form.get_by_label("csv").check()
    form.get_by_label("Seed").fill("3")
    form.get_by_role("button", name="Start export").click()
    page.wait_for_url(app_url("dashboard-project", project.pk) + "#exports")

    job = ExportJob.objects.get()
    assert job.status == "succeeded", job.error
    export_row = page.locator(f"#job-export-{job.pk}")
    expect(export_row.locator('[data-job-field="status"]')).to_have_text("Succeeded")
    expect(export_row.locator('[data-job-field="rows"]')).to_have_text(str(job.manifest["counts"]["rows"]))
    with page.expect_download() as download_info:
        export_row.get_by_role("link", name="Download").click()
    download = download_info.value
    assert download.suggested_filename.endswith(".zip")
    with zipfile.ZipFile(download.path()) as bundle:
        manifest = json.loads(bundle.read("manifest.json"))
        assert manifest["counts"]["rows"] == 16
        assert {name.rsplit(".", 1)[-1] for name in bundle.namelist()} >= {"jsonl", "csv", "json"}

    page.get_by_text("Start a verification run").click()
    expect(page.get_by_test_id("section-runs").get_by_test_id("run-form")).to_be_visible()
    save_sections_screenshot(screenshot, page, "section-runs", "section-exports", name="jobs")
