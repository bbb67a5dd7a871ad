"""Real chromium: the meta-evaluation of a project with two verifiers shows each figure's interval and the
comparison's sentence, with nothing wider than a 390 px screen."""

from __future__ import annotations

import pytest

from core import roles
from tests.evaluation.projects import two_verifier_project

from .test_ux_browser import WIDER_THAN_VIEWPORT

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [390, 1280])
def test_meta_evaluation_shows_intervals_and_comparisons(browser, live_server, login, app_url, make_user, width):
    researcher = make_user(roles.RESEARCHER, username=f"meta-{width}")
    project, _, _ = two_verifier_project()
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    login(page, researcher)
    page.goto(app_url("meta-eval-page", project.pk))
    overall = page.locator("[data-testid=verifier-report]").first.locator(
        "[data-testid=overall-row] [data-field=accuracy]"
    )
    assert overall.locator("[data-field=interval]").inner_text().startswith("[")
    low, high = (float(part) for part in overall.locator("[data-field=interval]").inner_text().strip("[]").split(","))
    value = float(overall.inner_text().split()[0])
    assert low <= value <= high
    sentence = page.locator("[data-testid=comparison-sentence]").first
    assert sentence.is_visible()
    assert sentence.inner_text().startswith("rule-a is more accurate than rule-b: +")
    assert "95% interval" in sentence.inner_text()
    matrix = page.locator("[data-testid=comparison-matrix]")
    assert matrix.locator("td.significant").count() == 2  # both off-diagonal cells leave out zero
    assert page.locator("[data-testid=label-noise]").is_visible()
    layout = page.evaluate(WIDER_THAN_VIEWPORT)
    assert layout["scrollWidth"] <= layout["width"] and layout["wide"] == [], layout
    context.close()
