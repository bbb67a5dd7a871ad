"""Real chromium: the labeling page at phone width (one column, nothing wider than the viewport), dark mode from the
system preference and from the toggle, and messages whose buttons respect `hidden`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core import roles
from frontend.rendering import final_answer_span, render_answer, render_with_final_answer

from .labeling_fixtures import make_dataset, make_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDER_THAN_VIEWPORT = """() => {
  const width = document.documentElement.clientWidth;
  const scrolls = (el) => { for (let p = el.parentElement; p; p = p.parentElement) {
      const style = getComputedStyle(p);
      if (/(auto|scroll|hidden)/.test(style.overflowX) && p !== document.documentElement && p !== document.body) return true;
    } return false; };
  const wide = [];
  for (const el of document.querySelectorAll('body *')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    if ((box.right > width + 1 || box.left < -1) && !scrolls(el) && !el.closest('.visually-hidden, .skip-link'))
      wide.push(`${el.tagName.toLowerCase()}.${el.className}`);
  }
  return { scrollWidth: document.documentElement.scrollWidth, width, wide: wide.slice(0, 10) };
}"""


def open_label_page(page, app_url, project):
    page.goto(app_url("annotation-label", project.pk))
    page.wait_for_selector("[data-labeling][data-ready='1'][data-task-id]:not([data-task-id=''])")
    page.wait_for_selector("html[data-math-ready='1']")


def background(page) -> str:
    return page.evaluate("getComputedStyle(document.documentElement).backgroundColor")


def test_labeling_at_390px_is_one_column_without_horizontal_overflow(browser, live_server, login, app_url, make_user,
                                                                     screenshot):
    annotator = make_user(roles.ANNOTATOR, username="phone")
    project = make_project(make_dataset(questions=2, name="VerifyBench sample"), annotators=[annotator])
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    login(page, annotator)
    open_label_page(page, app_url, project)
    layout = page.evaluate(WIDER_THAN_VIEWPORT)
    assert layout["scrollWidth"] <= layout["width"] and layout["wide"] == [], layout
    context_box = page.locator(".label-context").bounding_box()
    completion_box = page.locator(".label-completion").bounding_box()
    assert completion_box["y"] >= context_box["y"] + context_box["height"] - 1  # stacked, not side by side
    screenshot(page, "labeling-phone", full_page=False)
    context.close()


def test_dark_mode_follows_the_system_and_the_toggle_is_remembered(browser, live_server, login, app_url, make_user,
                                                                   screenshot):
    annotator = make_user(roles.ANNOTATOR, username="night")
    project = make_project(make_dataset(questions=2, name="VerifyBench sample"), annotators=[annotator])
    context = browser.new_context(color_scheme="dark", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    login(page, annotator)
    open_label_page(page, app_url, project)
    dark = background(page)
    assert dark == "rgb(18, 21, 26)"
    toggle = page.locator("[data-theme-toggle]")
    assert toggle.get_attribute("aria-pressed") == "true"
    screenshot(page, "labeling-dark", full_page=False)
    phone = context.new_page()
    phone.set_viewport_size({"width": 390, "height": 844})
    open_label_page(phone, app_url, project)
    screenshot(phone, "labeling-phone-dark", full_page=False)
    phone.close()

    toggle.click()
    assert background(page) == "rgb(251, 251, 249)" and toggle.get_attribute("aria-pressed") == "false"
    page.reload()
    page.wait_for_selector("[data-labeling][data-ready='1']:is([data-state='task'], [data-state='done'])")
    assert background(page) == "rgb(251, 251, 249)"  # the choice outlives the page
    page.locator("[data-theme-toggle]").click()
    assert background(page) == dark
    context.close()


def test_the_message_bar_shows_no_hidden_button(page, live_server, login, app_url, make_user):
    annotator = make_user(roles.ANNOTATOR, username="plain")
    project = make_project(make_dataset(questions=1, name="VerifyBench sample"), annotators=[annotator])
    login(page, annotator)
    open_label_page(page, app_url, project)
    page.keyboard.press("u")
    page.keyboard.press("Enter")  # an empty reason: a message without the next-task button
    page.locator("[data-label-message]").wait_for()
    assert page.locator("[data-label-message-next]").is_hidden()
    assert page.locator("[data-label-message-next]").evaluate("el => getComputedStyle(el).display") == "none"


VISIBLE_TEXT = """root => {
  const copy = root.cloneNode(true);
  for (const hidden of copy.querySelectorAll('.katex-mathml')) hidden.remove();  // MathML for screen readers
  return copy.textContent;
}"""
REPO = Path(__file__).resolve().parents[2]


def reference_answers() -> list[str]:
    answers = []
    for path in (REPO / "fixtures" / "demo" / "verifybench_demo.jsonl", Path(__file__).parent / "data" /
                 "verifybench_tex_answers.jsonl"):
        answers += sorted({json.loads(line)["answer"] for line in path.read_text().splitlines() if line.strip()})
    return answers


def test_every_reference_answer_of_the_demo_and_of_verifybench_shapes_renders_as_math(page, live_server, app_url,
                                                                                       built_assets):
    answers = reference_answers()
    assert len(answers) >= 45 and any("\\begin{pmatrix}" in answer for answer in answers)
    page.goto(app_url("login"))
    page.wait_for_selector("html[data-math-ready='1']")
    html = "".join(f'<div class="prose" data-answer="{index}">{render_answer(answer)}</div>'
                   for index, answer in enumerate(answers))
    page.evaluate("html => { const box = document.createElement('section'); box.id = 'answers';"
                  " box.innerHTML = html; document.querySelector('main').append(box); window.mathlabel.typeset(box); }",
                  html)
    failed = page.locator("#answers .math-error").count()
    assert failed == 0
    for index, answer in enumerate(answers):
        shown = page.locator(f'[data-answer="{index}"]').evaluate(VISIBLE_TEXT)
        for raw in ("\\frac", "\\begin", "\\\\"):
            assert raw not in shown, (answer, shown)


def test_a_display_math_final_answer_is_highlighted_across_its_whole_width(page, live_server, app_url, built_assets):
    text = "So the value is $$\\boxed{\\frac{\\pi}{2} + \\sum_{k=1}^{n} k^2}$$"
    page.goto(app_url("login"))
    page.wait_for_selector("html[data-math-ready='1']")
    page.evaluate("html => { const box = document.createElement('div'); box.className = 'prose'; box.id = 'done';"
                  " box.innerHTML = html; document.querySelector('main').append(box); window.mathlabel.typeset(box); }",
                  str(render_with_final_answer(text, final_answer_span(text))))
    mark = page.locator("#final-answer").bounding_box()
    formula = page.locator("#final-answer .katex").bounding_box()
    background = page.locator("#final-answer").evaluate("el => getComputedStyle(el).backgroundColor")
    assert mark["height"] >= formula["height"] and mark["width"] >= formula["width"]
    assert background not in ("rgba(0, 0, 0, 0)", "transparent")
