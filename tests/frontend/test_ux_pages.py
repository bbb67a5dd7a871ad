"""Pages every role reaches: proof-grading links that answer, role-appropriate buttons, readable timestamps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse

from annotation import services as annotation_services
from core import roles
from grading.proofs import services as proof_services

from .test_pages import assert_csp_clean

pytestmark = pytest.mark.django_db

RUBRIC = {
    "max_points": 7,
    "chains": [
        {
            "key": "main",
            "title": "Main",
            "checkpoints": [{"key": "c1", "title": "Everything", "points": 7, "allow_partial": True}],
        }
    ],
}


@pytest.fixture
def proof_project(make_user):
    competition = proof_services.get_or_create_competition("Page Olympiad")
    problem = proof_services.add_problem(competition, problem_idx=1, statement="Prove $1+1=2$.", rubric=RUBRIC)
    proof_services.add_submission(problem, model_name="m", text="Obvious.")
    grader = make_user(roles.ANNOTATOR, username="grader")
    project = proof_services.create_proof_project(name="Page proofs", competition=competition, graders=[grader])
    return project, grader


def test_annotator_home_links_proof_grading_with_a_get_that_answers(client, proof_project):
    project, grader = proof_project
    client.force_login(grader)
    html = client.get(reverse("home")).content.decode()
    assert reverse("proof-next", args=[project.pk]) not in html  # a POST-only URL is never a link
    proof_home = reverse("proof-home")
    assert f'<a href="{proof_home}">Page proofs</a>' in html
    assert re.search(rf'<nav class="site-nav".*<a href="{proof_home}"[^>]*>Proof grading</a>', html, re.S)
    for link in set(re.findall(r'href="(/[^"#]*)"', html)) - {reverse("logout")}:
        assert client.get(link).status_code in (200, 302), link
    page = client.get(proof_home).content.decode()
    assert page.count(">Grade next proof</button>") == 1


def test_researchers_see_grading_projects_without_a_grade_button(client, researcher, proof_project):
    client.force_login(researcher)
    html = client.get(reverse("proof-home")).content.decode()
    assert_csp_clean(html)
    assert "Page proofs" in html and "Grade next proof" not in html
    assert "You do not grade in this project." in html


def test_proof_conflict_history_shows_readable_times(client, adjudicator, proof_project, make_user):
    project, grader = proof_project
    annotation_services.add_member(project, adjudicator, "adjudicator")
    item = project.items.get()
    task = annotation_services.next_task(project, grader)
    proof_services.grade_task(task, grader, chain="main", awarded={"c1": 7}, deductions=[], justifications={})
    client.force_login(adjudicator)
    html = client.get(reverse("proof-conflict", args=[item.pk])).content.decode()
    times = re.findall(r'<time datetime="([^"]+)">([^<]+)</time>', html)
    assert times, "the history lists at least the item's creation"
    for iso, shown in times:
        assert "T" in iso and "T" not in shown.split()[0]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} \S+", shown), shown


def test_every_page_has_the_theme_toggle_and_the_hidden_rule_is_in_the_styles(client, annotator):
    client.force_login(annotator)
    html = client.get(reverse("home")).content.decode()
    assert 'data-theme-toggle aria-pressed="false">Dark mode</button>' in html
    css = (Path(__file__).resolve().parents[2] / "frontend" / "src" / "app.css").read_text()
    assert "[hidden] { display: none !important; }" in css


def test_skipping_a_proof_is_a_post_of_its_grader_only(client, make_user, proof_project):
    project, grader = proof_project
    client.force_login(grader)
    task = annotation_services.next_task(project, grader)
    skip = reverse("proof-skip", args=[task.pk])
    assert client.get(skip).status_code == 405
    stranger = make_user(roles.ANNOTATOR, username="not-a-grader")
    client.force_login(stranger)
    assert client.post(skip).status_code == 404
    client.force_login(grader)
    response = client.post(skip)
    assert response.status_code == 302 and response.url == reverse("proof-home")  # nothing else left for them
    task.refresh_from_db()
    assert task.status == "skipped"
    assert client.post(skip).status_code == 302  # a second skip is refused with a message, not a 500
