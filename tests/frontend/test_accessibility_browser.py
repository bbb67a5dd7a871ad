"""axe-core (bundled from npm, injected from node_modules, never fetched) on every page for every role, in light
and dark colours: no serious or critical violation. The same pages at a phone's width: nothing wider than the
screen."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from annotation import services as annotation_services
from annotation import workflow
from annotation.models import AnnotationProject, Item
from core.demo import DEMO_PASSWORD, load_demo
from grading.models import Competition, SelectionRecord, VerifierConfig
from grading.proofs.subject import PROOF_GRADE
from grading.selection import services as selection_services
from verifybench.models import Completion, Dataset
from webhooks.models import Webhook, WebhookAttempt, WebhookDelivery

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parents[2] / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")


def axe_violations(page) -> list[dict]:
    if not page.evaluate("() => Boolean(window.axe)"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate("""async () => {
      const result = await window.axe.run(document, { resultTypes: ['violations'] });
      return result.violations.map(v => ({ id: v.id, impact: v.impact,
        nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ')) }));
    }""")
    return [violation for violation in found if violation["impact"] in BLOCKING]


@pytest.fixture
def demo(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    load_demo(stdout=io.StringIO())
    correctness = AnnotationProject.objects.filter(kind="correctness").order_by("pk").first()
    answer_type = AnnotationProject.objects.filter(kind="answer_type").order_by("pk").first()
    proofs = AnnotationProject.objects.get(kind=PROOF_GRADE)
    users = {user.username: user for user in User.objects.all()}
    proof_task = annotation_services.next_task(proofs, users["annotator1"])
    dataset = correctness.dataset
    record = selection_services.select_for_annotation(
        dataset=dataset,
        strategy="verifybench",
        verifiers=[VerifierConfig.objects.order_by("pk").first()],
        seed=1,
        target=4,
        name="axe",
        created_by=users["researcher1"],
    )
    conflict = (
        Item.objects.filter(project=correctness, state=workflow.NEEDS_ADJUDICATION).first()
        or correctness.items.order_by("pk").first()
    )
    proof_item = proofs.items.order_by("pk").first()
    hook = Webhook.objects.create(
        project=correctness, url="https://hooks.example.org/in", events=["export.ready"], secret="whsec_axe"
    )
    delivery = WebhookDelivery.objects.create(
        webhook=hook, event="export.ready", event_id="e" * 32, body="{}", status="succeeded", attempts=2
    )
    for number, code in ((1, 500), (2, 200)):
        WebhookAttempt.objects.create(
            delivery=delivery,
            number=number,
            trigger="event" if number == 1 else "retry",
            started_at=delivery.created_at,
            status_code=code,
            error="" if code == 200 else "the receiver answered 500 Internal Server Error",
        )
    annotation_services.add_member(proofs, users["adjudicator1"], "adjudicator")
    return {
        "annotator1": [
            ("home",),
            ("proof-home",),
            ("annotation-label", correctness.pk),
            ("annotation-label", answer_type.pk),
            ("proof-grade", proof_task.pk),
        ],
        "adjudicator1": [
            ("home",),
            ("annotation-conflicts", correctness.pk),
            ("annotation-adjudicate", conflict.pk),
            ("item-browser", correctness.pk),
            ("item-detail", conflict.pk),
            ("proof-conflict", proof_item.pk),
        ],
        "researcher1": [
            ("home",),
            ("dataset-detail", dataset.pk),
            ("completion-detail", Completion.objects.filter(question__dataset=dataset).first().pk),
            ("dataset-import",),
            ("dashboard-projects",),
            ("dashboard-project-new",),
            ("dashboard-project", correctness.pk),
            ("project-settings", correctness.pk),
            ("project-members", correctness.pk),
            ("project-webhooks", correctness.pk),
            ("workspace-webhooks", dataset.workspace_id),
            ("item-browser", correctness.pk),
            ("item-detail", conflict.pk),
            ("meta-eval-page", correctness.pk),
            ("model-eval-page", dataset.pk),
            ("jobs",),
            ("jobs-dataset", dataset.pk),
            ("jobs-project-run-new", correctness.pk),
            ("jobs-project-export-new", correctness.pk),
            (
                "jobs-selection",
                (record if isinstance(record, SelectionRecord) else SelectionRecord.objects.latest("pk")).pk,
            ),
            ("proof-home",),
            ("proof-leaderboard", Competition.objects.first().pk),
            ("proof-competition", Competition.objects.first().pk),
            ("dashboard-project", proofs.pk),
            ("model-eval-page", Dataset.objects.last().pk),
        ],
        "admin1": [("home",), ("jobs",), ("dashboard-projects",)],
    }


def visit_as(context, page, app_url, username: str, pages):
    """Sign in as a demo user, then open each page (answered 200, its math and labeling ready) and yield it."""
    context.clear_cookies()
    page.goto(app_url("login"))
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(app_url("home"))
    for name, *args in pages:
        response = page.goto(app_url(name, *args))
        assert response.status == 200, (username, name, response.status)
        page.wait_for_selector("html[data-math-ready='1']")
        if name == "annotation-label":
            page.wait_for_selector("[data-labeling]:is([data-state='task'], [data-state='done'])")
        yield name, *args


def test_every_page_for_every_role_has_no_serious_or_critical_axe_violation(
    browser, live_server, app_url, demo, built_assets
):
    assert AXE.exists(), "run `cd frontend && npm ci`: axe-core is a dev dependency"
    failures, visited = {}, 0
    for scheme in ("light", "dark"):
        # bypass_csp only lets the test inject axe; the pages themselves keep their policy
        context = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 900}, bypass_csp=True)
        page = context.new_page()
        page.goto(app_url("login"))
        page.wait_for_selector("html[data-math-ready='1']")
        if violations := axe_violations(page):
            failures[f"anonymous {scheme} login"] = violations
        for username, pages in demo.items():
            for name, *args in visit_as(context, page, app_url, username, pages):
                visited += 1
                if violations := axe_violations(page):
                    failures[f"{username} {scheme} {name}{args}"] = violations
        context.close()
    assert visited >= 2 * 36
    assert failures == {}, "\n".join(f"{page}: {violations}" for page, violations in failures.items())


def test_every_page_for_every_role_fits_a_phone_screen(browser, live_server, app_url, demo, built_assets):
    from .test_ux_browser import WIDER_THAN_VIEWPORT

    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    overflowing, visited = {}, 0
    page.goto(app_url("login"))
    page.wait_for_selector("html[data-math-ready='1']")
    layout = page.evaluate(WIDER_THAN_VIEWPORT)
    if layout["scrollWidth"] > layout["width"] or layout["wide"]:
        overflowing["anonymous login"] = layout
    for username, pages in demo.items():
        for name, *args in visit_as(context, page, app_url, username, pages):
            visited += 1
            layout = page.evaluate(WIDER_THAN_VIEWPORT)
            if layout["scrollWidth"] > layout["width"] or layout["wide"]:
                overflowing[f"{username} {name}{args}"] = layout
    context.close()
    assert visited >= 36
    assert overflowing == {}, "\n".join(f"{page}: {layout}" for page, layout in overflowing.items())
