"""Real chromium: a tie broken by a third annotator through the labeling page, and an adjudicator deciding a
three-way answer-type conflict through the adjudication page."""

from __future__ import annotations

import pytest

from annotation import workflow
from annotation.models import Item, ItemEvent
from core import roles

from .labeling_fixtures import label_item, make_dataset, make_project
from .test_labeling_browser import open_label_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def label_with_key(browser, login, app_url, user, project, key: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        login(page, user)
        open_label_page(page, app_url, project)
        page.keyboard.press(key)
        page.get_by_test_id("all-done").wait_for()
    finally:
        context.close()


def test_two_annotators_disagree_and_a_third_breaks_the_tie(browser, live_server, login, app_url, make_user):
    first, second, third = (make_user(roles.ANNOTATOR, username=name) for name in ("alan", "bea", "cy"))
    project = make_project(make_dataset(questions=1), annotators=[first, second, third])
    item = project.items.get()

    label_with_key(browser, login, app_url, first, project, "1")
    label_with_key(browser, login, app_url, second, project, "0")
    item.refresh_from_db()
    assert item.state == workflow.NEEDS_TIEBREAK
    label_with_key(browser, login, app_url, third, project, "y")

    item.refresh_from_db()
    assert (item.state, item.resolution, item.final_value) == (workflow.RESOLVED, workflow.BY_MAJORITY, True)
    assert list(item.labels.order_by("id").values_list("annotator__username", "value", "is_tiebreak")) == [
        ("alan", True, False),
        ("bea", False, False),
        ("cy", True, True),
    ]


def test_adjudicator_resolves_a_three_way_answer_type_conflict(
    page, live_server, login, app_url, make_user, screenshot
):
    annotators = [make_user(roles.ANNOTATOR, username=name) for name in ("alan", "bea", "cy")]
    judge = make_user(roles.ADJUDICATOR, username="judy")
    project = make_project(
        make_dataset(questions=1, name="VerifyBench sample"),
        kind="answer_type",
        annotators=annotators,
        adjudicators=[judge],
    )
    for annotator, code, note in zip(annotators, ("A1", "A3", "B1"), ("a whole number", "", "looks symbolic")):
        label_item(project, annotator, code, note=note, seconds_spent=30)
    item = Item.objects.get(project=project)
    assert item.state == workflow.NEEDS_ADJUDICATION

    login(page, judge)
    page.goto(app_url("annotation-conflicts", project.pk))
    page.get_by_test_id("start-adjudicating").click()
    page.wait_for_selector("form[data-adjudication-form][data-ready='1']")
    page.wait_for_selector("html[data-math-ready='1']")
    labels = page.get_by_test_id("labels")
    for text in (
        "A1 - Integer",
        "A3 - Fraction/Float",
        "B1 - Algebraic formula",
        "alan",
        "bea",
        "cy",
        "a whole number",
        "looks symbolic",
    ):
        assert labels.get_by_text(text, exact=False).count() >= 1, text
    assert page.get_by_test_id("history").get_by_text("adjudication_requested").count() == 1

    page.keyboard.press("a")
    page.keyboard.press("1")
    assert page.locator("input[name=decision][value=A1]").is_checked()
    page.keyboard.press("r")
    page.keyboard.type("The reference answer 1 is an integer.")
    screenshot(page, "adjudication")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(app_url("annotation-conflicts", project.pk))
    assert page.get_by_test_id("no-conflicts").is_visible()

    item.refresh_from_db()
    assert (item.state, item.resolution, item.final_value) == (workflow.RESOLVED, workflow.BY_ADJUDICATION, "A1")
    event = ItemEvent.objects.get(item=item, kind=ItemEvent.Kind.ADJUDICATED)
    assert event.actor == judge and event.rationale == "The reference answer 1 is an integer."
