"""The conflict queue and the adjudication page through Django's test client."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation import workflow
from annotation.models import Item, ItemEvent
from core import roles

from .labeling_fixtures import label_item, make_dataset, make_project
from .test_pages import assert_csp_clean

pytestmark = pytest.mark.django_db


@pytest.fixture
def conflicted(make_user):
    """A correctness project with tie-breaks off: two disagreeing labels send every item to adjudication."""
    first, second = make_user(roles.ANNOTATOR, username="ann-one"), make_user(roles.ANNOTATOR, username="ann-two")
    judge = make_user(roles.ADJUDICATOR)
    project = make_project(
        make_dataset(questions=2), annotators=[first, second], adjudicators=[judge], tiebreak_annotators=0
    )
    for _ in range(2):
        label_item(project, first, True, note="looks right to me")
        label_item(project, second, False, note="sign error in step 2")
    assert Item.objects.filter(project=project, state=workflow.NEEDS_ADJUDICATION).count() == 2
    return project, judge


def test_annotators_and_outside_adjudicators_get_404(client, conflicted, make_user):
    project, _ = conflicted
    item = project.items.first()
    for user in (project.members.get(username="ann-one"), make_user(roles.ADJUDICATOR)):
        client.force_login(user)
        assert client.get(reverse("annotation-conflicts", args=[project.pk])).status_code == 404
        assert client.get(reverse("annotation-adjudicate", args=[item.pk])).status_code == 404
        assert (
            client.post(
                reverse("annotation-adjudicate", args=[item.pk]), {"decision": "correct", "rationale": "x"}
            ).status_code
            == 404
        )
    assert Item.objects.get(pk=item.pk).state == workflow.NEEDS_ADJUDICATION


def test_conflict_queue_lists_items_waiting_for_a_decision(client, conflicted):
    project, judge = conflicted
    client.force_login(judge)
    response = client.get(reverse("annotation-conflicts", args=[project.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    for item in project.items.all():
        assert reverse("annotation-adjudicate", args=[item.pk]) in html
    assert_csp_clean(html)


def test_conflict_queue_is_read_a_page_at_a_time_from_a_key(client, conflicted, monkeypatch):
    from annotation import selectors

    project, judge = conflicted
    first, second = project.items.order_by("priority", "id")
    Item.objects.filter(pk=second.pk).update(priority=-1)  # the queue is in priority order, then id
    monkeypatch.setattr(selectors, "CONFLICTS_PAGE_SIZE", 1)
    monkeypatch.setattr(selectors.items, "CONFLICTS_PAGE_SIZE", 1)
    monkeypatch.setattr(selectors.conflicts_page, "__defaults__", ("", 1))
    client.force_login(judge)
    html = client.get(reverse("annotation-conflicts", args=[project.pk])).content.decode()
    assert reverse("annotation-adjudicate", args=[second.pk]) in html
    assert reverse("annotation-adjudicate", args=[first.pk]) not in html
    assert "2 items waiting for adjudication" in html
    next_page = client.get(reverse("annotation-conflicts", args=[project.pk]), {"after": f"-1~{second.pk}"})
    html = next_page.content.decode()
    assert reverse("annotation-adjudicate", args=[first.pk]) in html and 'rel="next"' not in html
    assert client.get(reverse("annotation-conflicts", args=[project.pk]), {"after": "nonsense"}).status_code == 400


def test_adjudication_page_shows_every_label_with_its_author_and_the_history(client, conflicted):
    project, judge = conflicted
    item = project.items.order_by("id").first()
    client.force_login(judge)
    html = client.get(reverse("annotation-adjudicate", args=[item.pk])).content.decode()
    for text in (
        "ann-one",
        "ann-two",
        "looks right to me",
        "sign error in step 2",
        "Correct",
        "Incorrect",
        "adjudication_requested",
        'name="rationale"',
    ):
        assert text in html, text
    assert_csp_clean(html)


def test_a_decision_needs_a_rationale_and_then_moves_to_the_next_conflict(client, conflicted):
    project, judge = conflicted
    first, second = project.items.order_by("priority", "id")
    client.force_login(judge)
    url = reverse("annotation-adjudicate", args=[first.pk])

    response = client.post(url, {"decision": "incorrect", "rationale": "  "})
    assert response.status_code == 400 and "rationale is required" in response.content.decode()
    response = client.post(url, {"rationale": "no value chosen"})
    assert response.status_code == 400
    assert Item.objects.get(pk=first.pk).state == workflow.NEEDS_ADJUDICATION

    response = client.post(url, {"decision": "incorrect", "rationale": "The sign error is real."})
    assert response.status_code == 302 and response.url == reverse("annotation-adjudicate", args=[second.pk])
    first.refresh_from_db()
    assert (first.state, first.resolution, first.final_value) == (workflow.RESOLVED, workflow.BY_ADJUDICATION, False)
    assert ItemEvent.objects.get(item=first, kind=ItemEvent.Kind.ADJUDICATED).rationale == "The sign error is real."

    response = client.post(
        reverse("annotation-adjudicate", args=[second.pk]),
        {"decision": "unsuitable", "rationale": "The question is ambiguous."},
    )
    assert response.status_code == 302 and response.url == reverse("annotation-conflicts", args=[project.pk])
    second.refresh_from_db()
    assert second.excluded and second.state == workflow.RESOLVED
    html = client.get(reverse("annotation-adjudicate", args=[second.pk])).content.decode()
    assert 'data-testid="not-decidable"' in html and "The question is ambiguous." in html


def test_answer_type_decision_takes_a_code(client, make_user):
    annotators = [make_user(roles.ANNOTATOR) for _ in range(3)]
    judge = make_user(roles.ADJUDICATOR)
    project = make_project(make_dataset(questions=1), kind="answer_type", annotators=annotators, adjudicators=[judge])
    for annotator, code in zip(annotators, ("A1", "A3", "B1")):
        label_item(project, annotator, code)
    item = project.items.get()
    assert item.state == workflow.NEEDS_ADJUDICATION
    client.force_login(judge)
    html = client.get(reverse("annotation-adjudicate", args=[item.pk])).content.decode()
    assert html.count('name="decision"') == 19  # 18 codes + unsuitable
    response = client.post(
        reverse("annotation-adjudicate", args=[item.pk]), {"decision": "A3", "rationale": "1/2 is a fraction."}
    )
    assert response.status_code == 302
    item.refresh_from_db()
    assert item.final_value == "A3" and item.resolution == workflow.BY_ADJUDICATION


def test_every_link_an_adjudicator_sees_on_the_project_pages_opens(client, conflicted):
    """The project's dashboard, item browser and conflicts show an adjudicator only links they may follow (no
    researcher-only settings, members or project list)."""
    import re

    project, judge = conflicted
    client.force_login(judge)
    pages = [
        reverse("dashboard-project", args=[project.pk]),
        reverse("item-browser", args=[project.pk]),
        reverse("annotation-conflicts", args=[project.pk]),
    ]
    followed = set()
    for page in pages:
        html = client.get(page).content.decode()
        for href in re.findall(r'href="(/[^"#?]*)', html):
            if href in followed or href.startswith(("/static/", "/logout", "/api/")) or href.endswith(".csv"):
                continue
            followed.add(href)
            assert client.get(href).status_code < 400, f"{page} links to {href}"
    assert reverse("project-settings", args=[project.pk]) not in followed
    assert reverse("annotation-conflicts", args=[project.pk]) in followed
