"""Real chromium: a researcher writes guidelines and makes an invitation link; a newcomer signs up through it in a
browser of their own, lands on the labeling page with the guidelines open, and sees the next version after the
researcher changes them."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation import services
from annotation.models import Invitation, ProjectMember
from core import roles

from .labeling_fixtures import make_dataset, make_project
from .test_labeling_browser import open_label_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-passphrase-1"


def save_settings(page, guidelines: str) -> None:
    page.get_by_label("Guidelines:", exact=True).fill(guidelines)
    page.get_by_role("button", name="Save settings").click()
    page.get_by_text("Settings saved.").wait_for()


def test_an_invited_annotator_signs_up_and_follows_each_guidelines_version(
    browser, page, live_server, login, app_url, make_user, screenshot
):
    researcher = make_user(roles.RESEARCHER, username="rita")
    project = make_project(make_dataset(questions=3, name="VerifyBench sample"))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    login(page, researcher)
    page.goto(app_url("dashboard-projects"))
    page.get_by_test_id("project-list").get_by_role("row", name=project.name).get_by_role(
        "link", name="Settings"
    ).click()
    page.wait_for_url(app_url("project-settings", project.pk))
    page.get_by_label("Description").fill("Decide whether each completion's **final answer** is right.")
    save_settings(
        page, "1. Compare the boxed answer with the reference.\n2. Treat $\\frac{1}{2}$ and $0.5$ as the same answer."
    )
    preview = page.get_by_test_id("guidelines-preview")
    assert preview.locator(".katex").count() >= 2
    assert "guidelines version 1" in page.get_by_test_id("change-log").inner_text()
    screenshot(page, "project-settings")

    page.get_by_role("link", name="Members and invitations").click()
    page.wait_for_url(app_url("project-members", project.pk))
    invite = page.get_by_test_id("invite-form")
    invite.get_by_label("Role").select_option("annotator")
    invite.get_by_role("button", name="Create invitation link").click()
    link = page.get_by_test_id("new-link-url").input_value()
    assert link.startswith(live_server.url + "/invite/")

    newcomer_context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        newcomer = newcomer_context.new_page()
        newcomer.on("pageerror", lambda error: errors.append(str(error)))
        newcomer.goto(link)
        assert newcomer.get_by_role("heading", name=f"Join {project.name}").is_visible()
        screenshot(newcomer, "invitation")
        newcomer.get_by_label("Username").fill("nadia")
        newcomer.get_by_label("Password:", exact=True).fill(PASSWORD)
        newcomer.get_by_label("Password confirmation").fill(PASSWORD)
        newcomer.get_by_role("button", name="Create my account and join").click()
        newcomer.wait_for_url(app_url("annotation-label", project.pk))
        newcomer.wait_for_selector("[data-labeling][data-ready='1']:is([data-state='task'], [data-state='done'])")
        newcomer.wait_for_selector("html[data-math-ready='1']")

        panel = newcomer.locator("#guidelines-panel")
        assert panel.get_attribute("data-guidelines-version") == "1"
        assert panel.get_by_role("heading", name="Guidelines").is_visible()
        assert panel.get_by_test_id("guidelines-text").is_visible()
        assert panel.get_by_test_id("guidelines-text").locator(".katex").count() >= 2
        assert "final answer" in panel.get_by_test_id("project-description").inner_text()
        screenshot(newcomer, "labeling-guidelines", full_page=False)
        newcomer.get_by_role("button", name="I have read version 1").click()
        newcomer.wait_for_function("() => document.querySelector('#guidelines-panel').dataset.guidelinesSeen === '1'")
        assert not panel.get_by_test_id("guidelines-text").is_visible()  # folded away, still there to open

        newcomer.keyboard.press("1")  # labeling goes on as before
        newcomer.wait_for_function("() => document.querySelector('[data-done-today]').textContent === '1'")

        open_label_page(newcomer, app_url, project)
        assert not newcomer.locator("#guidelines-panel [data-guidelines-details]").evaluate("d => d.open")

        page.goto(app_url("project-settings", project.pk))
        save_settings(
            page,
            "1. Compare the boxed answer with the reference.\n"
            "2. Treat $\\frac{1}{2}$ and $0.5$ as the same answer.\n"
            "3. An answer with units is right only if the units are right.",
        )

        open_label_page(newcomer, app_url, project)
        panel = newcomer.locator("#guidelines-panel")
        assert panel.get_attribute("data-guidelines-version") == "2"
        assert panel.get_by_test_id("guidelines-text").is_visible()
        assert "units are right" in panel.get_by_test_id("guidelines-text").inner_text()
        assert panel.locator("[data-guidelines-new]").inner_text() == "updated"
    finally:
        newcomer_context.close()

    nadia = User.objects.get(username="nadia")
    assert roles.role_names(nadia) == {roles.ANNOTATOR}
    assert services.is_member(project, nadia, ProjectMember.Role.ANNOTATOR)
    assert Invitation.objects.get(project=project).used_by == nadia

    page.goto(app_url("project-members", project.pk))
    row = page.locator("tr[data-member=nadia]")
    assert row.locator("td.number").first.inner_text() == "1"
    assert "used by nadia" in page.get_by_test_id("invitation-table").inner_text()
    screenshot(page, "project-members")
    assert errors == []


def test_copy_link_puts_the_new_invitation_link_on_the_clipboard(browser, live_server, login, app_url, make_user):
    researcher = make_user(roles.RESEARCHER)
    project = make_project(make_dataset(questions=1))
    context = browser.new_context(
        viewport={"width": 1280, "height": 800}, permissions=["clipboard-read", "clipboard-write"]
    )
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        login(page, researcher)
        page.goto(app_url("project-members", project.pk))
        page.get_by_test_id("invite-form").get_by_role("button", name="Create invitation link").click()
        link = page.get_by_test_id("new-link-url").input_value()
        assert link.startswith(live_server.url + "/invite/")

        page.get_by_role("button", name="Copy link").click()
        status = page.locator("[data-copy-status-for=new-link-url]")
        status.get_by_text("Copied").wait_for()
        assert status.get_attribute("aria-live") == "polite"
        assert page.evaluate("() => navigator.clipboard.readText()") == link
        page.wait_for_function("() => !document.querySelector('[data-copy-status-for=new-link-url]').textContent")

        # without the clipboard API the link is selected for the reader to copy
        page.add_init_script("Object.defineProperty(Navigator.prototype, 'clipboard', { get: () => undefined })")
        page.goto(app_url("project-members", project.pk))
        page.get_by_test_id("invite-form").get_by_role("button", name="Create invitation link").click()
        page.get_by_role("button", name="Copy link").click()
        status.get_by_text("press Ctrl+C").wait_for()
        selected = page.evaluate(
            "() => { const input = document.activeElement;"
            " return [input.id, input.value.slice(input.selectionStart, input.selectionEnd)]; }"
        )
        assert selected == ["new-link-url", page.get_by_test_id("new-link-url").input_value()]
        assert errors == []
    finally:
        context.close()
