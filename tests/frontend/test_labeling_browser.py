"""Real chromium against the live server: labeling with the keyboard only, answer types, a stale submit."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import services, workflow
from annotation.models import Item, Label, Task
from core import roles

from .helpers import VISIBLE_TEXT
from .labeling_fixtures import make_dataset, make_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_label_page(page, app_url, project):
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(app_url("annotation-label", project.pk))
    page.wait_for_selector("[data-labeling][data-ready='1']:is([data-state='task'], [data-state='done'])")
    page.wait_for_selector("html[data-math-ready='1']")
    return errors


def wait_for_next(page, previous_task_id: str) -> str:
    page.wait_for_function(
        "previous => { const root = document.querySelector('[data-labeling]');"
        " return root.dataset.taskId !== previous && root.getAttribute('aria-busy') === null; }",
        arg=previous_task_id,
    )
    return page.locator("[data-labeling]").get_attribute("data-task-id")


def test_annotator_labels_three_items_with_the_keyboard_only(page, live_server, login, app_url, make_user, screenshot):
    annotator = make_user(roles.ANNOTATOR, username="alan")
    project = make_project(make_dataset(questions=3, name="VerifyBench sample"), annotators=[annotator])
    login(page, annotator)
    errors = open_label_page(page, app_url, project)
    root = page.locator("[data-labeling]")
    first = root.get_attribute("data-task-id")
    assert page.locator("[data-testid=completion] .katex").count() >= 1
    assert page.locator("[data-done-today]").inner_text() == "0"
    assert "left" in page.locator("[data-lease-left]").inner_text()
    screenshot(page, "labeling", full_page=False)

    page.keyboard.press("?")
    assert page.locator("[data-label-help]").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator("[data-label-help]").is_visible()

    page.keyboard.press("j")  # jump to the final answer: a shortcut, not a label
    page.keyboard.press("1")
    second = wait_for_next(page, first)
    page.wait_for_function("() => document.querySelector('[data-done-today]').textContent === '1'")
    page.keyboard.press("0")
    third = wait_for_next(page, second)

    page.keyboard.press("n")
    page.keyboard.type("0 and 1 inside a note are text, not shortcuts")
    page.keyboard.press("Escape")
    page.keyboard.press("y")
    wait_for_next(page, third)
    page.get_by_test_id("all-done").wait_for()
    page.wait_for_selector("[data-labeling][data-unsaved='0']")  # labels are saved in the background
    page.wait_for_function("() => document.querySelector('[data-done-today]').textContent === '3'")

    labels = {label.task_id: label for label in Label.objects.filter(annotator=annotator)}
    assert [labels[int(task)].value for task in (first, second, third)] == [True, False, True]
    assert labels[int(third)].note == "0 and 1 inside a note are text, not shortcuts"
    assert all(label.seconds_spent is not None for label in labels.values())
    assert errors == []


def test_answer_type_labels_by_typing_the_code(page, live_server, login, app_url, make_user, screenshot):
    annotator = make_user(roles.ANNOTATOR, username="alan")
    project = make_project(
        make_dataset(questions=2, name="VerifyBench sample"), kind="answer_type", annotators=[annotator]
    )
    login(page, annotator)
    errors = open_label_page(page, app_url, project)
    first = page.locator("[data-labeling]").get_attribute("data-task-id")
    assert page.locator(".task-holder[data-item=current] [data-code]").count() == 18
    page.keyboard.press("b")
    page.keyboard.press("3")
    assert page.locator(".task-holder[data-item=current] [data-code=B3]").get_attribute("aria-pressed") == "true"
    screenshot(page, "answer-type")
    page.keyboard.press("Enter")
    second = wait_for_next(page, first)

    page.keyboard.press("u")
    assert page.locator(".task-holder[data-item=current] [data-unsuitable-reason]").is_visible()
    page.keyboard.type("The question has two readings")
    page.keyboard.press("Enter")
    wait_for_next(page, second)
    page.get_by_test_id("all-done").wait_for()
    page.wait_for_selector("[data-labeling][data-unsaved='0']")  # labels are saved in the background

    by_task = {label.task_id: label for label in Label.objects.filter(annotator=annotator)}
    assert by_task[int(first)].value == "B3" and not by_task[int(first)].unsuitable
    assert by_task[int(second)].unsuitable and by_task[int(second)].unsuitable_reason == "The question has two readings"
    assert errors == []


def test_a_stale_submit_explains_itself_and_offers_the_next_task(page, live_server, login, app_url, make_user):
    slow = make_user(roles.ANNOTATOR, username="alan")
    holder, quick = make_user(roles.ANNOTATOR, username="bea"), make_user(roles.ANNOTATOR, username="cy")
    project = make_project(make_dataset(questions=1), annotators=[slow, holder, quick], labels_per_item=2)
    login(page, slow)
    open_label_page(page, app_url, project)
    task = Task.objects.get(annotator=slow)
    assert services.next_task(project, holder).item_id == task.item_id  # the item's other slot
    Task.objects.filter(pk=task.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    taken = services.next_task(project, quick)  # the expired slot goes to someone else
    assert taken.item_id == task.item_id
    services.submit_label(taken, quick, value=False)

    page.keyboard.press("1")
    message = page.locator("[data-label-message]")
    message.wait_for(state="visible")
    assert "not stored" in message.inner_text() and "expired" in message.inner_text()
    next_button = page.get_by_role("button", name="Take the next task")
    assert next_button.is_visible()
    assert page.evaluate("document.activeElement.textContent") == "Take the next task"
    page.keyboard.press("Enter")
    page.get_by_test_id("all-done").wait_for()
    page.wait_for_selector("[data-labeling][data-unsaved='0']")  # labels are saved in the background
    assert not Label.objects.filter(annotator=slow).exists()
    item = Item.objects.get(pk=task.item_id)
    assert item.state == workflow.IN_PROGRESS and item.label_count == 1
    assert item.events.filter(kind="late_submit_refused", actor=slow).exists()


# Holds the page's frame callbacks and `scheduler.yield` continuations while window.__holdPreparation is set, so that
# the items leased ahead stay half prepared, out of the page, until the test lets them go on.
HOLD_PREPARATION = """
window.__held = [];
window.__holdPreparation = true;
const realYield = globalThis.scheduler?.yield?.bind(globalThis.scheduler);
if (realYield) {
  globalThis.scheduler.yield = () =>
    window.__holdPreparation ? new Promise((resolve) => window.__held.push(resolve)) : realYield();
}
const realFrame = window.requestAnimationFrame.bind(window);
window.requestAnimationFrame = (callback) =>
  window.__holdPreparation ? (window.__held.push(() => realFrame(callback)), 0) : realFrame(callback);
"""


def test_a_key_pressed_while_the_next_item_is_still_being_prepared_shows_it_whole(
    page, live_server, login, app_url, make_user
):
    annotator = make_user(roles.ANNOTATOR, username="quentin")
    project = make_project(make_dataset(questions=4), annotators=[annotator])
    page.add_init_script(HOLD_PREPARATION)
    login(page, annotator)
    assert open_label_page(page, app_url, project) == []
    root = page.locator("[data-labeling]")
    first = root.get_attribute("data-task-id")
    # The items leased ahead arrived with the page's first answer, but none is ready yet, so none is in the page.
    assert page.locator("[data-task-slot] > .task-holder").count() == 1

    page.locator("body").focus()
    page.keyboard.press("1")
    page.wait_for_function(
        "previous => document.querySelector('[data-labeling]').dataset.taskId !== previous", arg=first, polling=50
    )
    second = root.get_attribute("data-task-id")
    shown = page.locator(".task-holder[data-item=current]")
    assert shown.count() == 1
    assert shown.locator("[data-task]").get_attribute("data-task-id") == second
    assert shown.locator("[data-testid=question] .katex").count() >= 1
    assert shown.locator("[data-testid=completion] .katex").count() >= 1
    assert shown.locator(".math:not([data-typeset])").count() == 0
    assert "Checking each step carefully." in shown.locator("[data-testid=completion]").inner_text()

    page.evaluate("() => { window.__holdPreparation = false; for (const resume of window.__held.splice(0)) resume(); }")
    page.keyboard.press("1")
    third = wait_for_next(page, second)
    assert third not in (first, second)
    assert page.locator(".task-holder[data-item=current] [data-testid=completion] .katex").count() >= 1
    page.wait_for_selector("[data-labeling][data-unsaved='0']")
    holders = page.evaluate(
        "[...document.querySelectorAll('[data-task-slot] > .task-holder [data-task]')].map(task => task.dataset.taskId)"
    )
    assert len(holders) == len(set(holders))  # no item went into the page twice
    assert Label.objects.filter(annotator=annotator).count() == 2


def test_items_leased_ahead_are_laid_out_but_neither_tabbable_nor_read_out(
    page, live_server, login, app_url, make_user
):
    annotator = make_user(roles.ANNOTATOR, username="tabitha")
    project = make_project(make_dataset(questions=5), annotators=[annotator])
    login(page, annotator)
    assert open_label_page(page, app_url, project) == []
    settled = (
        "() => { const holders = [...document.querySelectorAll('[data-task-slot] > .task-holder:not([data-item=stowed])')];"
        " return holders.length >= 2 && holders.every(node => node.inert !== (node.dataset.item === 'current')); }"
    )
    page.wait_for_function(settled)
    holders = page.evaluate(
        "[...document.querySelectorAll('[data-task-slot] > .task-holder:not([data-item=stowed])')].map(node => ({"
        " current: node.dataset.item === 'current', hidden: node.getAttribute('aria-hidden'),"
        " width: node.getBoundingClientRect().width, opacity: getComputedStyle(node).opacity }))"
    )
    shown = [holder for holder in holders if holder["current"]]
    ahead = [holder for holder in holders if not holder["current"]]
    assert len(shown) == 1 and shown[0]["hidden"] is None and shown[0]["opacity"] == "1"
    assert ahead and all(holder["hidden"] == "true" and holder["opacity"] == "0" for holder in ahead)
    assert all(holder["width"] == shown[0]["width"] > 0 for holder in ahead)  # laid out at the shown one's width

    current_question = page.locator(".task-holder[data-item=current] [data-testid=question]").inner_text()
    snapshot = page.locator("[data-task-slot]").aria_snapshot()
    assert current_question.split(":")[0] in snapshot
    for other in page.locator(".task-holder[data-item=waiting] [data-testid=question]").all_inner_texts():
        assert other.split(":")[0] not in snapshot
    for _ in range(30):
        page.keyboard.press("Tab")
        assert page.evaluate("() => !document.activeElement.closest('.task-holder:not([data-item=current])')")

    first = page.locator("[data-labeling]").get_attribute("data-task-id")
    page.keyboard.press("Escape")
    page.locator("body").focus()
    page.keyboard.press("1")
    wait_for_next(page, first)
    page.wait_for_function(settled)
    assert page.locator(".task-holder[data-item=current] [data-testid=question]").inner_text() != current_question


def test_my_recent_labels_show_questions_with_typeset_formulas_before_and_after_a_reload(
    page, live_server, login, app_url, make_user
):
    annotator = make_user(roles.ANNOTATOR, username="recent-reader")
    project = make_project(make_dataset(questions=3, name="Recent labels"), annotators=[annotator])
    login(page, annotator)
    open_label_page(page, app_url, project)
    first = page.locator("[data-labeling]").get_attribute("data-task-id")
    page.keyboard.press("1")
    wait_for_next(page, first)

    for moment in ("added by the page", "rendered by the server"):
        page.locator("[data-recent-labels] summary").click()
        entry = page.locator(f'[data-recent-task="{first}"]')
        assert entry.locator(".katex").count() >= 1, moment
        shown = entry.evaluate(VISIBLE_TEXT)
        assert "$" not in shown and "\\int" not in shown and "Question" in shown, (moment, shown)
        assert "Correct" in shown, (moment, shown)
        page.reload()
        open_label_page(page, app_url, project)
