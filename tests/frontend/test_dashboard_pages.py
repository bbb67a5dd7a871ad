"""Project list, project creation and the dashboard through Django's test client."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation import selectors
from annotation.models import AnnotationProject, ProjectMember
from core import roles

from .labeling_fixtures import label_item, make_dataset, make_project
from .test_pages import assert_csp_clean

pytestmark = pytest.mark.django_db


def test_annotators_get_404_on_every_researcher_page(client, annotator):
    project = make_project(make_dataset(), annotators=[annotator])
    client.force_login(annotator)
    for url in (
        reverse("dashboard-projects"),
        reverse("dashboard-project-new"),
        reverse("dashboard-project", args=[project.pk]),
    ):
        assert client.get(url).status_code == 404, url
    assert client.post(reverse("dashboard-project-new"), {"name": "x"}).status_code == 404


def test_project_creation_makes_items_and_members(client, researcher, make_user, django_capture_on_commit_callbacks):
    dataset = make_dataset(questions=3, name="creation-set")
    alice, bob = make_user(roles.ANNOTATOR, username="alice"), make_user(roles.ANNOTATOR, username="bob")
    judge = make_user(roles.ADJUDICATOR, username="judge")
    client.force_login(researcher)
    form_html = client.get(reverse("dashboard-project-new")).content.decode()
    assert "alice" in form_html and "judge" in form_html
    assert '<label for="id_name">' in form_html
    assert_csp_clean(form_html)

    with django_capture_on_commit_callbacks(execute=True):  # the setup job runs (eagerly) once committed
        response = client.post(
            reverse("dashboard-project-new"),
            {
                "name": "Round one",
                "dataset": dataset.pk,
                "kind": "answer_type",
                "labels_per_item": 2,
                "tiebreak_annotators": 1,
                "lease_minutes": 20,
                "annotators": [alice.pk, bob.pk],
                "adjudicators": [judge.pk],
            },
        )
    project = AnnotationProject.objects.get(name="Round one")
    job = project.setup_jobs.get()
    assert response.status_code == 302 and response.url == reverse("job-detail", args=["project-setup", job.pk])
    assert job.status == "succeeded" and not project.preparing
    assert project.kind == "answer_type" and project.lease_minutes == 20 and not project.show_model_names
    assert project.items.count() == 3
    assert set(project.memberships.values_list("user__username", "role")) == {
        ("alice", ProjectMember.Role.ANNOTATOR),
        ("bob", ProjectMember.Role.ANNOTATOR),
        ("judge", ProjectMember.Role.ADJUDICATOR),
    }


def test_invalid_project_form_keeps_the_input_and_creates_nothing(client, researcher):
    dataset = make_dataset(questions=1)
    client.force_login(researcher)
    response = client.post(
        reverse("dashboard-project-new"),
        {
            "name": "Bad",
            "dataset": dataset.pk,
            "kind": "correctness",
            "labels_per_item": 0,
            "tiebreak_annotators": 1,
            "lease_minutes": 30,
        },
    )
    assert response.status_code == 400
    assert 'value="Bad"' in response.content.decode()
    assert not AnnotationProject.objects.filter(name="Bad").exists()


def test_dashboard_shows_the_counts_the_database_holds(client, researcher, make_user):
    first, second = make_user(roles.ANNOTATOR, username="dora"), make_user(roles.ANNOTATOR, username="eli")
    project = make_project(make_dataset(questions=4), annotators=[first, second])
    label_item(project, first, True, seconds_spent=12)
    label_item(project, second, True, seconds_spent=20)  # same item: agreement, resolved
    label_item(project, first, False, seconds_spent=8)
    client.force_login(researcher)
    response = client.get(reverse("dashboard-project", args=[project.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    counts = selectors.state_counts(project)
    assert f'data-testid="item-count">{counts["items"]}<' in html
    assert f'data-testid="label-count">{counts["labels"]}<' in html
    assert counts["labels"] == 3 and counts["by_state"]["resolved"] == 1
    assert (
        'data-state="resolved"><td><span class="swatch state-resolved" aria-hidden="true"></span>Resolved</td>\n          <td class="number">1</td>'
        in html
    )
    assert 'data-testid="timeline-chart"' in html and 'data-testid="agreement-chart"' in html
    assert 'data-annotator="dora"' in html and 'data-annotator="eli"' in html
    assert "<script" not in html.split("</head>")[1]
    assert_csp_clean(html)
    listing = client.get(reverse("dashboard-projects")).content.decode()
    assert reverse("dashboard-project", args=[project.pk]) in listing


def test_a_project_adjudicator_may_see_the_dashboard(client, make_user):
    judge = make_user(roles.ADJUDICATOR)
    project = make_project(make_dataset(questions=1), adjudicators=[judge])
    client.force_login(judge)
    assert client.get(reverse("dashboard-project", args=[project.pk])).status_code == 200
    assert client.get(reverse("dashboard-projects")).status_code == 404


def test_dashboard_reports_gold_accuracy_per_annotator(client, researcher, make_user):
    from annotation import services

    dora = make_user(roles.ANNOTATOR, username="dora")
    project = make_project(make_dataset(questions=3), annotators=[dora])
    gold_items = list(project.items.order_by("id")[:2])
    for item in gold_items:
        services.mark_gold(project, item, True, actor=researcher)
    project.gold_rate = 1.0
    project.save()
    answers = iter([True, False])  # one gold item right, one wrong
    for _ in gold_items:
        task = services.next_task(project, dora)
        assert task.item.is_gold
        services.submit_label(task, dora, value=next(answers))
    client.force_login(researcher)
    html = client.get(reverse("dashboard-project", args=[project.pk])).content.decode()
    row = html.split('data-annotator="dora"')[1].split("</tr>")[0]
    assert '0.50 <span class="muted">(1/2)</span>' in row
    assert selectors.state_counts(project)["gold_items"] == 2
    assert selectors.state_counts(project)["labels"] == 0  # gold labels are not dataset labels


def test_dashboard_shows_estimated_accuracy_per_answer_type_beside_gold_accuracy(client, researcher, make_user):
    from annotation.models import AnnotatorModelFit

    dora = make_user(roles.ANNOTATOR, username="dora")
    project = make_project(make_dataset(questions=2), annotators=[dora])
    label_item(project, dora, True)
    client.force_login(researcher)
    url = reverse("dashboard-project", args=[project.pk])
    html = client.get(url).content.decode()
    assert "No annotator model fitted yet." in html and 'data-testid="model-accuracy"' not in html
    AnnotatorModelFit.objects.create(
        project=project,
        status=AnnotatorModelFit.Status.SUCCEEDED,
        labels_seen=1,
        parameters={"classes": [False, True], "class_prior": [0.5, 0.5], "confusion": {}},
        summary={
            "annotators": {
                str(dora.pk): {
                    "labels": 1,
                    "accuracy": 0.9123,
                    "accuracy_sd": 0.05,
                    "by_type": {"A1": {"labels": 1, "accuracy": 0.88, "accuracy_sd": 0.1}},
                }
            }
        },
    )
    html = client.get(url).content.decode()
    row = html.split('data-annotator="dora"')[1].split("</tr>")[0]
    assert '0.91 <span class="muted">± 0.05</span>' in row and "A1: 0.88" in row
    assert "fitted on 1 label" in html
    response = client.post(reverse("dashboard-project-refit-model", args=[project.pk]))
    assert response.status_code == 302
    assert AnnotatorModelFit.objects.filter(project=project, status=AnnotatorModelFit.Status.QUEUED).count() == 1
    assert "A refit is queued." in client.get(url).content.decode()
    assert (
        client.get(reverse("job-detail", args=["annotator-model", AnnotatorModelFit.objects.first().pk])).status_code
        == 200
    )
    assert client.get(reverse("jobs")).status_code == 200
