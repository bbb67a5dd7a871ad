"""Real chromium on a phone-sized screen with a reasoning model's completion: the label bar stays on screen over a
long trace, the `<think>` section is folded with its length, keys reach the answer, the reasoning and the plain
text, and TeX KaTeX cannot typeset shows as its source in code style, not as a red error."""

from __future__ import annotations

import pytest

from core import roles
from verifybench.models import Completion

from .labeling_fixtures import make_dataset, make_project
from .test_ux_browser import WIDER_THAN_VIEWPORT, open_label_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TRACE = "<think>\n" + "Let me check the integral again: $\\int_0^1 2x\\,dx = 1$. Wait, the bound is 1.\n\n" * 400
COMPLETION = (
    TRACE + "</think>\n\nSo with $x\\tag{1}$ and $a & b$ aside, it costs $5 per unit and the answer is $\\boxed{1}$."
)


def test_a_long_reasoning_trace_on_a_phone(browser, live_server, login, app_url, make_user):
    annotator = make_user(roles.ANNOTATOR, username="reasoner")
    dataset = make_dataset(questions=1, name="Reasoning sample")
    Completion.objects.filter(question__dataset=dataset).update(text=COMPLETION)
    project = make_project(dataset, annotators=[annotator])
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    login(page, annotator)
    open_label_page(page, app_url, project)
    task = page.locator(".task-holder[data-item=current]")

    bar = task.locator("[data-label-form]").bounding_box()
    assert bar["y"] + bar["height"] <= 844 + 1 and bar["y"] >= 0  # on screen without scrolling
    reasoning = task.locator("details[data-reasoning]")
    assert reasoning.evaluate("details => details.open") is False
    assert "characters)" in reasoning.locator("summary").inner_text()
    layout = page.evaluate(WIDER_THAN_VIEWPORT)
    assert layout["scrollWidth"] <= layout["width"] and layout["wide"] == [], layout

    page.mouse.wheel(0, 3000)
    bar = task.locator("[data-label-form]").bounding_box()
    assert 0 <= bar["y"] and bar["y"] + bar["height"] <= 844 + 1  # still on screen after scrolling

    page.keyboard.press("r")
    assert reasoning.evaluate("details => details.open") is True
    page.keyboard.press("j")
    page.wait_for_function(
        "() => { const a = document.querySelector('.task-holder[data-item=current] #final-answer');"
        " const box = a.getBoundingClientRect(); return box.top >= 0 && box.bottom <= innerHeight; }"
    )
    page.keyboard.press("r")
    assert reasoning.evaluate("details => details.open") is False

    failed = task.locator(".label-completion .math-error")
    assert failed.count() == 2  # \tag inline and & outside an environment
    for index in range(2):
        style = failed.nth(index).evaluate(
            "el => ({ color: getComputedStyle(el).color, ink: getComputedStyle(el.closest('.prose')).color,"
            " font: getComputedStyle(el).fontFamily })"
        )
        assert style["color"] == style["ink"] and "mono" in style["font"].lower(), style
    assert "$5 per unit" in task.locator(".label-completion .prose").inner_text()  # a price, not a formula

    page.keyboard.press("p")
    source = task.locator("pre[data-tex-source]")
    assert source.is_visible() and "<think>" in source.inner_text()
    assert task.locator(".label-completion .prose[data-tex-rendered]").is_hidden()
    page.keyboard.press("p")
    assert source.is_hidden()
    context.close()
