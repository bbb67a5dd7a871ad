"""The labeling page and its fragment endpoint through Django's test client: who may open them and what they
never show (model names, imported labels, other annotators' labels)."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import services
from annotation.models import Item, ItemEvent, Task
from core import roles

from .labeling_fixtures import HIDDEN_MODEL_NAME, PRIOR_LABEL_ANNOTATOR, label_item, make_dataset, make_project
from .test_pages import assert_csp_clean

pytestmark = pytest.mark.django_db


def test_label_page_is_a_404_for_an_annotator_who_is_not_a_member(client, annotator, make_user):
    member = make_user(roles.ANNOTATOR)
    project = make_project(make_dataset(), annotators=[member])
    client.force_login(annotator)
    assert client.get(reverse("annotation-label", args=[project.pk])).status_code == 404
    assert client.get(reverse("annotation-label-fragment", args=[project.pk])).status_code == 404
    assert client.get(reverse("annotation-label", args=[project.pk + 1000])).status_code == 404
    assert not Task.objects.filter(annotator=annotator).exists()


def test_label_page_requires_login(client):
    project = make_project(make_dataset())
    response = client.get(reverse("annotation-label", args=[project.pk]))
    assert response.status_code == 302 and response.url.startswith(reverse("login"))


def queue(client, project, **body):
    return client.post(
        reverse("annotation-label-queue", args=[project.pk]), data=json.dumps(body), content_type="application/json"
    )


def test_label_page_get_leases_nothing_and_the_page_claims_its_queue_by_post(client, annotator):
    project = make_project(make_dataset(questions=4), annotators=[annotator])
    client.force_login(annotator)
    response = client.get(reverse("annotation-label", args=[project.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert not Task.objects.filter(annotator=annotator).exists()  # a GET changes nothing
    assert 'data-testid="loading"' in html and "data-task-id" not in html
    assert "data-left-for-me>4<" in html and "data-left>4<" in html and "data-done-total>0<" in html
    assert f'data-queue-url="{reverse("annotation-label-queue", args=[project.pk])}"' in html
    assert_csp_clean(html)

    answer = queue(client, project, action="fill").json()
    tasks = list(Task.objects.filter(annotator=annotator).order_by("leased_at", "pk"))
    assert [entry["id"] for entry in answer["tasks"]] == [task.pk for task in tasks] == answer["queue"]
    assert len(tasks) == 1 + services.QUEUE_AHEAD
    first = answer["tasks"][0]
    assert f'data-task-id="{tasks[0].pk}"' in first["html"]
    assert 'id="final-answer"' in first["html"] and 'href="#final-answer"' in first["html"]
    assert "Full reference solution" in first["html"] and 'data-testid="golden-answer"' in first["html"]
    assert first["expires_at"] == tasks[0].expires_at.isoformat()
    assert answer["progress"]["left_for_me"] == 4
    # asking again with the queue in hand leases nothing more and sends nothing again
    again = queue(client, project, action="fill", have=answer["queue"]).json()
    assert again["tasks"] == [] and again["queue"] == answer["queue"]
    assert Task.objects.filter(annotator=annotator).count() == 3


def test_one_request_saves_a_label_and_tops_the_queue_up(client, annotator):
    project = make_project(make_dataset(questions=5), annotators=[annotator])
    client.force_login(annotator)
    held = queue(client, project, action="fill").json()["queue"]
    shown, *ahead = held
    answer = queue(
        client, project, action="label", task_id=shown, value=True, note="ok", seconds_spent=3.5, have=ahead
    ).json()
    assert answer["saved"] == {"task_id": shown, "value": True, "unsuitable": False, "created": True}
    assert len(answer["tasks"]) == 1 and answer["queue"] == ahead + [answer["tasks"][0]["id"]]
    assert answer["progress"]["done_total"] == 1 and answer["progress"]["left_for_me"] == 4
    label = Task.objects.get(pk=shown).label
    assert (label.value, label.note, label.seconds_spent) == (True, "ok", 3.5)
    # the same task again with another value is a change, while the item is open
    changed = queue(client, project, action="label", task_id=shown, value=False, have=answer["queue"]).json()
    assert changed["saved"]["created"] is False and Task.objects.get(pk=shown).label.value is False
    assert ItemEvent.objects.filter(item=label.item, kind=ItemEvent.Kind.LABEL_CHANGED).count() == 1


def test_malformed_and_refused_queue_requests_answer_400_404_409_never_500(client, annotator, make_user):
    other = make_user(roles.ANNOTATOR)
    project = make_project(make_dataset(questions=2), annotators=[annotator, other])
    their_task = services.next_task(project, other)
    client.force_login(annotator)
    url = reverse("annotation-label-queue", args=[project.pk])
    assert client.post(url, data="not json", content_type="application/json").status_code == 400
    assert client.post(url, data="[1]", content_type="application/json").status_code == 400
    assert queue(client, project, action="explode", task_id=1).status_code in (400, 404)
    assert queue(client, project, action="label", task_id="7").status_code == 400
    assert queue(client, project, action="fill", have="everything").status_code == 400
    assert queue(client, project, action="label", task_id=their_task.pk, value=True).status_code == 404
    mine = queue(client, project).json()["queue"][0]
    assert queue(client, project, action="label", task_id=mine, value="maybe").status_code == 400
    assert queue(client, project, action="label", task_id=mine, value=True, seconds_spent="long").status_code == 400
    project.is_active = False
    project.save(update_fields=["is_active"])
    refused = queue(client, project, action="fill")
    assert refused.status_code == 409 and "closed" in refused.json()["detail"]
    assert client.get(url).status_code == 405


def test_leaving_the_page_releases_the_leases_held_ahead(client, annotator, make_user):
    other = make_user(roles.ANNOTATOR)
    project = make_project(make_dataset(questions=3), annotators=[annotator, other], labels_per_item=1)
    client.force_login(annotator)
    shown, *ahead = queue(client, project).json()["queue"]
    assert services.next_task(project, other) is None  # every item is leased to the first annotator
    release = client.post(
        reverse("annotation-label-release", args=[project.pk]),
        {"task": [str(task_id) for task_id in ahead] + ["x", str(10**9)]},
    )
    assert release.json() == {"released": 2}
    assert services.next_task(project, other).pk not in (shown, *ahead)
    assert Task.objects.get(pk=shown).expires_at > timezone.now()  # the item on screen stays leased


def test_open_renders_an_own_task_again_with_the_label_given(client, annotator):
    project = make_project(make_dataset(questions=2), annotators=[annotator])
    client.force_login(annotator)
    shown = queue(client, project).json()["queue"][0]
    queue(client, project, action="label", task_id=shown, value=False)
    again = queue(client, project, action="open", task_id=shown).json()["task"]
    assert again["id"] == shown and again["my_label"]["value"] is False
    assert "submitting again changes your label" in again["html"]


def test_open_says_when_the_label_given_can_no_longer_change(client, annotator):
    project = make_project(make_dataset(questions=2), annotators=[annotator])
    client.force_login(annotator)
    shown = queue(client, project).json()["queue"][0]
    queue(client, project, action="label", task_id=shown, value=True)
    assert queue(client, project, action="open", task_id=shown).json()["task"]["locked"] is None
    Item.objects.filter(tasks__pk=shown).update(state="resolved")
    locked = queue(client, project, action="open", task_id=shown).json()["task"]["locked"]
    assert locked == "this item is already resolved; your label can no longer change"
    refused = queue(client, project, action="label", task_id=shown, value=False)
    assert refused.status_code == 409 and refused.json()["detail"] == locked  # the same reason the change gets


def test_label_page_never_shows_model_name_prior_labels_or_other_labels(client, make_user):
    first, second = make_user(roles.ANNOTATOR), make_user(roles.ANNOTATOR)
    project = make_project(make_dataset(questions=1), annotators=[first, second])
    label_item(project, first, True, note="first-annotator-note-qq")
    client.force_login(second)
    html = client.get(reverse("annotation-label", args=[project.pk])).content.decode()
    html += json.dumps(queue(client, project).json())
    task = Task.objects.get(annotator=second)
    assert task.item.label_count == 1  # the very item the first annotator labeled
    assert f'data-task-id=\\"{task.pk}\\"' in html
    for secret in (
        HIDDEN_MODEL_NAME,
        PRIOR_LABEL_ANNOTATOR,
        "first-annotator-note-qq",
        first.username,
        "Imported labels",
        "verifybench",
    ):
        assert secret not in html, secret
    fragment = client.get(reverse("annotation-label-fragment", args=[project.pk]), {"task": task.pk})
    for secret in (HIDDEN_MODEL_NAME, PRIOR_LABEL_ANNOTATOR, "first-annotator-note-qq", first.username):
        assert secret not in fragment.content.decode(), secret


def test_model_name_appears_only_when_the_project_shows_it(client, annotator):
    project = make_project(make_dataset(questions=1), annotators=[annotator], show_model_names=True)
    client.force_login(annotator)
    assert HIDDEN_MODEL_NAME in queue(client, project).json()["tasks"][0]["html"]


def test_fragment_renders_own_task_and_refuses_anyone_elses(client, make_user):
    mine, theirs = make_user(roles.ANNOTATOR), make_user(roles.ANNOTATOR)
    project = make_project(make_dataset(), annotators=[mine, theirs])
    my_task = services.next_task(project, mine)
    their_task = services.next_task(project, theirs)
    client.force_login(mine)
    url = reverse("annotation-label-fragment", args=[project.pk])

    response = client.get(url, {"task": my_task.pk})
    assert response.status_code == 200
    html = response.content.decode()
    assert f'data-task-id="{my_task.pk}"' in html
    assert "<html" not in html and "site-header" not in html
    assert 'class="math"' in html  # formulas stay as TeX for the browser to typeset
    assert_csp_clean(html)

    assert client.get(url, {"task": their_task.pk}).status_code == 404
    assert client.get(url, {"task": "x1"}).status_code == 404
    other_project = make_project(make_dataset(), annotators=[mine])
    assert (
        client.get(reverse("annotation-label-fragment", args=[other_project.pk]), {"task": my_task.pk}).status_code
        == 404
    )


def test_fragment_without_a_task_is_the_all_done_state(client, annotator):
    project = make_project(make_dataset(questions=1), annotators=[annotator], labels_per_item=1)
    label_item(project, annotator, False)
    client.force_login(annotator)
    html = client.get(reverse("annotation-label-fragment", args=[project.pk])).content.decode()
    assert 'data-testid="all-done"' in html and "data-task-id" not in html
    assert "1</strong> done today" in html and "0</strong> items left" in html
    page = client.get(reverse("annotation-label", args=[project.pk])).content.decode()
    assert 'data-testid="all-done"' in page and "data-left-for-me>0<" in page and "data-done-total>1<" in page
    assert queue(client, project).json()["tasks"] == []


def test_answer_type_page_offers_the_taxonomy_and_no_completion(client, annotator):
    project = make_project(make_dataset(questions=2), kind="answer_type", annotators=[annotator])
    client.force_login(annotator)
    html = client.get(reverse("annotation-label", args=[project.pk])).content.decode()
    html += queue(client, project).json()["tasks"][0]["html"]
    codes = re.findall(r'data-code="([A-D][0-9])"', html)
    assert len(codes) == 18 and codes[0] == "A1" and codes[-1] == "D2"
    assert 'data-testid="completion"' not in html and HIDDEN_MODEL_NAME not in html
    assert 'data-kind="answer_type"' in html
    assert_csp_clean(html)


def test_closed_project_says_so(client, annotator):
    project = make_project(make_dataset(questions=1), annotators=[annotator])
    project.is_active = False
    project.save(update_fields=["is_active"])
    client.force_login(annotator)
    html = client.get(reverse("annotation-label", args=[project.pk])).content.decode()
    assert "This project is closed" in html
