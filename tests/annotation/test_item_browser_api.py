"""GET /api/projects/{id}/items/ and POST /api/projects/{id}/items/bulk/: who may, filters, keyset pages, actions."""

from __future__ import annotations

import pytest

from annotation import services, workflow
from annotation.models import Item, ItemEvent

from .test_item_browser import give

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(make_project, api_client_for, make_user, researcher):
    project, people, judges = make_project(annotators=2, adjudicators=1)
    items = list(project.items.order_by("id"))
    give(items[0], people, [True, False])  # a disagreement: needs a tie-break
    give(items[1], people, [True, True])
    return {
        "project": project,
        "items": items,
        "url": f"/api/projects/{project.pk}/items/",
        "researcher": api_client_for(researcher),
        "judge": api_client_for(judges[0]),
        "annotator": api_client_for(people[0]),
        "outsider": api_client_for(make_user("annotator")),
        "outside_judge": api_client_for(make_user("adjudicator")),
    }


def test_annotators_are_refused_and_outsiders_see_nothing(setup):
    url = setup["url"]
    assert setup["annotator"].get(url).status_code == 403
    assert setup["outsider"].get(url).status_code == 404
    assert setup["outside_judge"].get(url).status_code == 404
    for who in ("annotator", "outsider", "judge"):
        response = setup[who].post(
            url + "bulk/", {"action": "priority", "item_ids": [setup["items"][0].pk], "change": 1}, format="json"
        )
        assert response.status_code == 403, who
    assert not ItemEvent.objects.filter(kind=ItemEvent.Kind.PRIORITY_CHANGED).exists()


def test_researchers_and_the_projects_adjudicators_browse(setup):
    for who in ("researcher", "judge"):
        body = setup[who].get(setup["url"]).json()
        assert [row["id"] for row in body["results"]] == [item.pk for item in setup["items"]]
        assert body["next"] is None and body["previous"] is None
        first = body["results"][0]
        assert first["state"] == workflow.NEEDS_TIEBREAK and first["label_count"] == 2
        assert first["summary"]["name"] and first["summary"]["title"].startswith("Compute")


def test_filters_and_keyset_links(setup):
    client = setup["researcher"]
    body = client.get(setup["url"], {"disagreement": "yes"}).json()
    assert [row["id"] for row in body["results"]] == [setup["items"][0].pk]
    body = client.get(setup["url"], {"state": "resolved", "model": "secret-model-1"}).json()
    assert [row["id"] for row in body["results"]] == [setup["items"][1].pk]
    assert body["results"][0]["final_value"] is True and body["results"][0]["final_display"] == "Correct"

    seen, url = [], setup["url"] + "?sort=-id&page_size=4&state=pending"
    while url:
        body = client.get(url).json()
        seen.extend(row["id"] for row in body["results"])
        assert "state=pending" in (body["next"] or "state=pending")
        url = body["next"]
    assert seen == sorted((item.pk for item in setup["items"][2:]), reverse=True)
    second = client.get(setup["url"] + "?sort=-id&page_size=2&state=pending").json()["next"]
    previous = client.get(second).json()["previous"]
    assert [row["id"] for row in client.get(previous).json()["results"]] == seen[:2]


@pytest.mark.parametrize(
    "query", ["state=done", "page_size=many", "sort=random_key", "after=nonsense", "verdict=maybe"]
)
def test_bad_parameters_are_a_400(setup, query):
    response = setup["researcher"].get(f"{setup['url']}?{query}")
    assert response.status_code == 400 and response.json()["detail"]


def test_bulk_on_chosen_items_and_on_all_matching(setup):
    client, project = setup["researcher"], setup["project"]
    chosen = [item.pk for item in setup["items"][2:4]]
    response = client.post(
        setup["url"] + "bulk/", {"action": "priority", "item_ids": chosen, "change": 3}, format="json"
    )
    assert response.status_code == 200 and response.json() == {"action": "priority", "applied": 2, "skipped": {}}
    assert set(Item.objects.filter(pk__in=chosen).values_list("priority", flat=True)) == {3}

    response = client.post(
        setup["url"] + "bulk/",
        {"action": "reopen", "all_matching": True, "filters": {"state": "resolved"}, "rationale": "A second look."},
        format="json",
    )
    assert response.json()["applied"] == 1
    assert Item.objects.get(pk=setup["items"][1].pk).state == workflow.IN_PROGRESS

    response = client.post(
        setup["url"] + "bulk/",
        {"action": "exclude", "all_matching": True, "filters": {"disagreement": "yes"}},
        format="json",
    )
    assert response.status_code == 400 and "rationale" in response.json()["detail"]
    response = client.post(
        setup["url"] + "bulk/", {"action": "mark_gold", "item_ids": chosen, "value": True}, format="json"
    )
    assert response.json()["applied"] == 2
    assert project.items.filter(is_gold=True).count() == 2


def test_bulk_refuses_a_selection_over_the_limit(setup, monkeypatch):
    monkeypatch.setattr(services, "BULK_LIMIT", 3)
    monkeypatch.setattr(services.bulk, "BULK_LIMIT", 3)
    response = setup["researcher"].post(
        setup["url"] + "bulk/", {"action": "priority", "all_matching": True, "change": 1}, format="json"
    )
    assert response.status_code == 400 and "narrow the filter" in response.json()["detail"]
    assert not ItemEvent.objects.filter(kind=ItemEvent.Kind.PRIORITY_CHANGED).exists()


@pytest.mark.parametrize(
    "body",
    [
        {"action": "delete", "item_ids": [1]},
        {"action": "priority", "change": 1},
        {"action": "priority", "all_matching": True, "filters": {"gold": "maybe"}},
    ],
)
def test_bad_bulk_requests_are_a_400(setup, body):
    assert setup["researcher"].post(setup["url"] + "bulk/", body, format="json").status_code == 400


def test_the_item_endpoints_stay_as_they_were(setup):
    item = setup["items"][0]
    body = setup["researcher"].get(f"/api/items/{item.pk}/").json()
    assert body["item_id"] == item.pk and len(body["labels"]) == 2
    history = setup["researcher"].get(f"/api/items/{item.pk}/history/").json()
    assert [event["event"] for event in history][-1] == "tiebreak_requested"


def test_adjudicators_filter_by_verdicts_only_where_the_project_shows_them(setup):
    project = setup["project"]
    project.verdict_visibility = "nobody"
    project.save()
    response = setup["judge"].get(setup["url"], {"verdict": "incorrect"})
    assert response.status_code == 400 and "verdicts" in response.json()["detail"]
    assert setup["researcher"].get(setup["url"], {"verdict": "incorrect"}).status_code == 200
    project.verdict_visibility = "adjudicators"
    project.save()
    assert setup["judge"].get(setup["url"], {"verdict": "incorrect"}).status_code == 200
