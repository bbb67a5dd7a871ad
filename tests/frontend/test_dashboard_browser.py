"""Real chromium: the researcher dashboard shows what the database holds."""

from __future__ import annotations

import pytest

from annotation import selectors, services
from core import roles

from .labeling_fixtures import label_item, make_dataset, make_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_dashboard_shows_the_counts_the_database_holds(page, live_server, login, app_url, make_user, screenshot):
    researcher = make_user(roles.RESEARCHER, username="rita")
    dora, eli, finn = (make_user(roles.ANNOTATOR, username=name) for name in ("dora", "eli", "finn"))
    judge = make_user(roles.ADJUDICATOR, username="judy")
    project = make_project(
        make_dataset(questions=8, name="VerifyBench sample"),
        annotators=[dora, eli, finn],
        adjudicators=[judge],
        tiebreak_annotators=0,
    )
    for value_a, value_b in ((True, True), (False, False), (True, False), (False, False), (True, True)):
        label_item(project, dora, value_a, seconds_spent=14)
        label_item(project, eli, value_b, seconds_spent=22)
    label_item(project, finn, True, seconds_spent=9)
    conflict = selectors.conflicts(project).first()
    services.adjudicate(conflict, judge, value=True, rationale="The final line is right.")

    login(page, researcher)
    page.goto(app_url("dashboard-projects"))
    page.get_by_role("link", name=project.name).click()
    page.wait_for_url(app_url("dashboard-project", project.pk))

    counts = selectors.state_counts(project)
    assert page.get_by_test_id("item-count").inner_text() == str(counts["items"]) == "8"
    assert page.get_by_test_id("label-count").inner_text() == str(counts["labels"]) == "11"
    states = page.get_by_test_id("state-counts")
    for state, count in counts["by_state"].items():
        assert states.locator(f"tr[data-state={state}] td.number").first.inner_text() == str(count), state
    resolutions = page.get_by_test_id("resolution-counts")
    for resolution, count in counts["by_resolution"].items():
        if resolution:
            assert resolutions.locator(f"tr[data-resolution={resolution}] td.number").inner_text() == str(count)
    agreement = selectors.agreement_figures(project)
    assert page.get_by_test_id("items-compared").inner_text().startswith(str(agreement["items_compared"]))
    assert page.get_by_test_id("raw-agreement").inner_text() == f"{agreement['raw_agreement']:.3f}"
    assert page.get_by_test_id("cohens-kappa").inner_text() == f"{agreement['cohens_kappa']:.3f}"
    table = {row["annotator"]: row for row in selectors.annotator_table(project)}
    for name in ("dora", "eli", "finn"):
        cells = page.locator(f"tr[data-annotator={name}] td")
        assert cells.nth(1).inner_text() == str(table[name]["labels"])
        assert cells.nth(3).inner_text() == f"{table[name]['median_seconds']:.1f}"
    days = selectors.progress_over_time(project)
    bars = page.get_by_test_id("timeline-chart").locator("rect.bar")
    assert bars.count() == 2 * len(days)
    assert page.get_by_test_id("agreement-chart").locator("rect.bar").count() >= 1
    screenshot(page, "dashboard")
