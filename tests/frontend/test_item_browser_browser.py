"""Real chromium: a researcher finds the items whose labels disagreed, reads one, raises the priority of two; an admin
overrides one of them from its page and finds the override in its history."""

from __future__ import annotations

import pytest

from annotation import workflow
from annotation.models import Item, ItemEvent, Label
from core import roles

from .labeling_fixtures import label_item, make_dataset, make_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def workspace(make_user):
    """Four items: two resolved by a majority after the first two labels disagreed, one agreed on, one untouched."""
    annotators = [make_user(roles.ANNOTATOR, username=name) for name in ("alan", "bea", "cy")]
    project = make_project(make_dataset(questions=4, name="VerifyBench sample"), annotators=annotators)
    alan, bea, cy = annotators
    label_item(project, alan, True, note="the boxed value matches", seconds_spent=35)
    label_item(project, bea, False, note="the derivation skips a case")
    label_item(project, cy, True)
    label_item(project, alan, True)
    label_item(project, bea, False)
    label_item(project, cy, False)
    label_item(project, alan, True)
    label_item(project, bea, True)
    disagreed = list(project.items.filter(resolution=workflow.BY_MAJORITY).order_by("id"))
    assert len(disagreed) == 2
    noted = Label.objects.get(note="the boxed value matches").item
    return {
        "project": project,
        "disagreed": disagreed,
        "noted": noted,
        "researcher": make_user(roles.RESEARCHER, username="rita"),
        "admin": make_user(roles.ADMIN, username="ada"),
    }


def test_researcher_finds_disagreements_raises_priority_and_an_admin_overrides(
    browser, live_server, login, app_url, screenshot, workspace
):
    project, disagreed = workspace["project"], workspace["disagreed"]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    login(page, workspace["researcher"])

    page.goto(app_url("dashboard-project", project.pk))
    page.get_by_test_id("browse-items").click()
    page.wait_for_url(f"**/projects/{project.pk}/items/")
    assert page.get_by_test_id("row-state").count() == 4
    page.get_by_label("Labels", exact=True).select_option("yes")
    page.get_by_role("button", name="Filter", exact=True).click()
    page.wait_for_url("**disagreement=yes**")
    rows = page.get_by_test_id("items").locator("tbody tr")
    assert rows.count() == 2
    assert [int(rows.nth(n).get_attribute("data-item")) for n in range(2)] == [item.pk for item in disagreed]

    noted = workspace["noted"]
    page.get_by_role("link", name=f"Item {noted.pk}", exact=True).click()
    page.wait_for_url(app_url("item-detail", noted.pk))
    page.wait_for_selector("html[data-math-ready='1']")
    labels = page.get_by_test_id("labels")
    for text in ("alan", "bea", "cy", "the boxed value matches", "the derivation skips a case", "35 s"):
        assert labels.get_by_text(text, exact=False).count() >= 1, text
    history = page.get_by_test_id("history")
    assert history.locator("li[data-event=tiebreak_requested]").count() == 1
    assert history.locator("li[data-event=resolved]").count() == 1
    assert page.get_by_test_id("completion").locator(".katex").count() >= 1
    screenshot(page, "item-page")

    page.go_back()
    page.wait_for_selector("form[data-item-bulk][data-ready='1']")
    page.get_by_label("Select every item on this page").check()
    assert page.get_by_text("(2 ticked)").is_visible()
    page.get_by_label("Priority step").fill("3")
    page.get_by_role("button", name="Raise priority").click()
    page.wait_for_url("**disagreement=yes**")
    assert page.get_by_text("Change priority: 2 items changed.").is_visible()
    assert page.get_by_test_id("row-priority").all_inner_texts() == ["3", "3"]
    screenshot(page, "item-browser")
    assert set(Item.objects.filter(pk__in=[item.pk for item in disagreed]).values_list("priority", flat=True)) == {3}
    events = ItemEvent.objects.filter(kind=ItemEvent.Kind.PRIORITY_CHANGED)
    assert events.count() == 2 and {event.actor.username for event in events} == {"rita"}
    context.close()

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    login(page, workspace["admin"])
    target = noted
    page.goto(app_url("item-detail", target.pk))
    form = page.get_by_test_id("override-form")
    form.get_by_label("Incorrect", exact=True).check()
    form.get_by_label("Rationale").fill("The boxed value is right but the case split misses n = 0.")
    form.get_by_role("button", name="Override").click()
    page.wait_for_url(app_url("item-detail", target.pk))
    overridden = page.get_by_test_id("history").locator("li[data-event=overridden]")
    assert overridden.count() == 1
    text = overridden.inner_text()
    assert "ada" in text and "final Incorrect" in text and "misses n = 0." in text
    assert page.get_by_test_id("item-final").inner_text() == "Incorrect"
    screenshot(page, "item-override")
    context.close()

    target.refresh_from_db()
    assert (target.resolution, target.final_value) == (workflow.BY_OVERRIDE, False)
    assert errors == []
