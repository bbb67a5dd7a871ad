"""The labeling page and its fragment endpoint through Django's test client: who may open them and what they
never show (model names, imported labels, other annotators' labels)."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import Task
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


def test_label_page_shows_the_task_and_leases_it(client, annotator):
    project = make_project(make_dataset(), annotators=[annotator])
    client.force_login(annotator)
    response = client.get(reverse("annotation-label", args=[project.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    task = Task.objects.get(annotator=annotator)
    assert f'data-task-id="{task.pk}"' in html
    assert 'id="final-answer"' in html and 'href="#final-answer"' in html
    assert "<details" in html and "Full reference solution" in html
    assert 'data-testid="golden-answer"' in html
    assert "0</strong> done today" in html and "3</strong> items left in the project" in html
    assert f'data-lease-expires="{task.expires_at.isoformat()}"' in html
    assert_csp_clean(html)
    # reloading keeps the same lease instead of taking another item
    client.get(reverse("annotation-label", args=[project.pk]))
    assert Task.objects.filter(annotator=annotator).count() == 1


def test_label_page_never_shows_model_name_prior_labels_or_other_labels(client, make_user):
    first, second = make_user(roles.ANNOTATOR), make_user(roles.ANNOTATOR)
    project = make_project(make_dataset(questions=1), annotators=[first, second])
    label_item(project, first, True, note="first-annotator-note-qq")
    client.force_login(second)
    html = client.get(reverse("annotation-label", args=[project.pk])).content.decode()
    task = Task.objects.get(annotator=second)
    assert task.item.label_count == 1  # the very item the first annotator labeled
    assert f'data-task-id="{task.pk}"' in html
    for secret in (HIDDEN_MODEL_NAME, PRIOR_LABEL_ANNOTATOR, "first-annotator-note-qq", first.username,
                   "Imported labels", "verifybench"):
        assert secret not in html, secret
    fragment = client.get(reverse("annotation-label-fragment", args=[project.pk]), {"task": task.pk})
    for secret in (HIDDEN_MODEL_NAME, PRIOR_LABEL_ANNOTATOR, "first-annotator-note-qq", first.username):
        assert secret not in fragment.content.decode(), secret


def test_model_name_appears_only_when_the_project_shows_it(client, annotator):
    project = make_project(make_dataset(questions=1), annotators=[annotator], show_model_names=True)
    client.force_login(annotator)
    assert HIDDEN_MODEL_NAME in client.get(reverse("annotation-label", args=[project.pk])).content.decode()


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
    assert client.get(reverse("annotation-label-fragment", args=[other_project.pk]),
                      {"task": my_task.pk}).status_code == 404


def test_fragment_without_a_task_is_the_all_done_state(client, annotator):
    project = make_project(make_dataset(questions=1), annotators=[annotator], labels_per_item=1)
    label_item(project, annotator, False)
    client.force_login(annotator)
    html = client.get(reverse("annotation-label-fragment", args=[project.pk])).content.decode()
    assert 'data-testid="all-done"' in html and "data-task-id" not in html
    assert "1</strong> done today" in html and "0</strong> items left" in html
    page = client.get(reverse("annotation-label", args=[project.pk])).content.decode()
    assert 'data-testid="all-done"' in page


def test_answer_type_page_offers_the_taxonomy_and_no_completion(client, annotator):
    project = make_project(make_dataset(questions=2), kind="answer_type", annotators=[annotator])
    client.force_login(annotator)
    html = client.get(reverse("annotation-label", args=[project.pk])).content.decode()
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
