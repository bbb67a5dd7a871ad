"""The API docs in real chromium: Swagger UI and Redoc render the operations from the app's own files, under its CSP.

Nothing may come from another host (the README promises no CDN) and the console stays free of errors, where chromium
reports every CSP violation.
"""

from __future__ import annotations

import pytest

from annotation import services as annotation_services
from core import roles

from .labeling_fixtures import make_dataset, make_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Runs before any page script (and is not subject to the page's CSP): records what the policy blocks.
WATCH_CSP = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


@pytest.fixture
def researcher(make_user):
    return make_user(roles.RESEARCHER, username="rita")


def watch(page) -> dict:
    """Record every request, console error and uncaught error of the page from now on."""
    seen = {"requests": [], "console_errors": [], "page_errors": []}
    page.on("request", lambda request: seen["requests"].append(request.url))
    page.on("console", lambda message: seen["console_errors"].append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: seen["page_errors"].append(str(error)))
    page.add_init_script(WATCH_CSP)
    return seen


def assert_only_the_app_was_asked_and_nothing_failed(page, seen, origin: str) -> None:
    page.wait_for_load_state("networkidle")
    foreign = [
        url for url in seen["requests"] if not (url.startswith(origin + "/") or url.startswith(("data:", "blob:")))
    ]
    assert foreign == []
    assert page.evaluate("window.__cspViolations") == []
    assert seen["console_errors"] == []
    assert seen["page_errors"] == []


def test_swagger_ui_renders_the_operations_from_the_app_alone(page, live_server, login, researcher, app_url):
    login(page, researcher)
    seen = watch(page)
    page.goto(app_url("api-docs"))
    history = page.locator(".opblock-summary-path", has_text="/api/items/{id}/history/")
    history.wait_for()
    assert page.locator(".opblock").count() > 50
    assert page.locator(".opblock-summary-path", has_text="/api/datasets/import/").count() == 1
    # An operation opens with its description and parameters.
    history.click()
    page.get_by_text("The append-only history of an item").first.wait_for()
    assert_only_the_app_was_asked_and_nothing_failed(page, seen, live_server.url)
    assert any(url.startswith(live_server.url + "/api/schema/") for url in seen["requests"])


def test_swagger_ui_try_it_out_calls_the_api_with_the_session_and_its_csrf_token(
    page, live_server, login, researcher, app_url
):
    project = make_project(make_dataset(2), annotators=[researcher])
    task = annotation_services.next_task(project, researcher)
    login(page, researcher)
    seen = watch(page)
    page.goto(app_url("api-docs"))
    operation = page.locator("#operations-datasets-datasets_list")
    operation.locator(".opblock-summary").click()
    operation.get_by_role("button", name="Try it out").click()
    operation.get_by_role("button", name="Execute").click()
    operation.locator(".live-responses-table .response-col_status", has_text="200").wait_for()
    # A write carries the CSRF token (without it the session's POST would be a 403): skip a task of one's own.
    operation = page.locator("#operations-tasks-tasks_skip_create")
    operation.locator(".opblock-summary").click()
    operation.get_by_role("button", name="Try it out").click()
    operation.locator("input[placeholder='id']").fill(str(task.pk))
    operation.get_by_role("button", name="Execute").click()
    operation.locator(".live-responses-table .response-col_status", has_text="200").wait_for()
    task.refresh_from_db()
    assert task.status == "skipped"
    assert_only_the_app_was_asked_and_nothing_failed(page, seen, live_server.url)


def test_redoc_renders_the_operations_from_the_app_alone(page, live_server, login, researcher, app_url):
    login(page, researcher)
    seen = watch(page)
    page.goto(app_url("api-redoc"))
    page.get_by_role("heading", name="The append-only history of an item").wait_for()
    assert page.locator("[data-section-id^='operation/']").count() > 50
    assert_only_the_app_was_asked_and_nothing_failed(page, seen, live_server.url)
