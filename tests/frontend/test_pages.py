"""Server-side pages through Django's test client: access per role, what each home shows, CSP-clean templates."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import AnnotationProject, ProjectMember

from .helpers import DEFAULT_PASSWORD, make_completion

TEMPLATES = Path(__file__).resolve().parents[2] / "frontend" / "templates"
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.IGNORECASE)
EVENT_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.IGNORECASE)


def assert_csp_clean(html: str) -> None:
    assert not INLINE_SCRIPT.search(html), INLINE_SCRIPT.search(html)
    assert not EVENT_HANDLER.search(html), EVENT_HANDLER.search(html)


@pytest.mark.parametrize("template", sorted(TEMPLATES.rglob("*.html")), ids=lambda p: p.name)
def test_templates_have_no_inline_script_or_event_handlers(template):
    assert_csp_clean(template.read_text())


@pytest.mark.django_db
def test_login_page_has_labelled_fields_and_a_content_security_policy(client):
    response = client.get(reverse("login"))
    assert response.status_code == 200
    html = response.content.decode()
    assert '<label for="id_username">Username</label>' in html
    assert '<label for="id_password">Password</label>' in html
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "object-src 'none'" in policy
    assert_csp_clean(html)


@pytest.mark.django_db
def test_home_requires_login(client):
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


@pytest.mark.django_db
def test_login_and_logout_round_trip(client, annotator):
    response = client.post(reverse("login"), {"username": annotator.username, "password": DEFAULT_PASSWORD})
    assert response.status_code == 302 and response.url == reverse("home")
    assert client.get(reverse("home")).status_code == 200
    response = client.post(reverse("logout"))
    assert response.status_code == 302 and response.url == reverse("login")
    assert client.get(reverse("home")).status_code == 302


@pytest.mark.django_db
def test_wrong_password_shows_an_error(client, annotator):
    response = client.post(reverse("login"), {"username": annotator.username, "password": "wrong-password"})
    assert response.status_code == 200
    assert 'role="alert"' in response.content.decode()


@pytest.mark.django_db
def test_annotator_without_projects_sees_an_honest_empty_state(client, annotator):
    client.force_login(annotator)
    html = client.get(reverse("home")).content.decode()
    assert "No projects assigned to you yet." in html
    assert 'id="datasets"' not in html and "API docs" not in html
    assert_csp_clean(html)


@pytest.mark.django_db
def test_annotator_sees_their_projects_with_progress(client, annotator):
    completion = make_completion("The answer is $\\boxed{1}$.")
    project = AnnotationProject.objects.create(
        name="Telescoping sums", dataset=completion.question.dataset, kind="correctness"
    )
    ProjectMember.objects.create(project=project, user=annotator, role=ProjectMember.Role.ANNOTATOR)
    other = AnnotationProject.objects.create(name="Not mine", dataset=completion.question.dataset, kind="correctness")
    client.force_login(annotator)
    html = client.get(reverse("home")).content.decode()
    assert "Telescoping sums" in html and other.name not in html
    assert "No projects assigned" not in html


@pytest.mark.django_db
def test_researcher_home_lists_datasets_with_counts_and_tools(client, researcher):
    first = make_completion("One.", dataset_name="VerifyBench sample")
    make_completion("Two.", dataset_name="VerifyBench sample")
    client.force_login(researcher)
    response = client.get(reverse("home"))
    html = response.content.decode()
    assert response.context["totals"] == {"datasets": 1, "questions": 2, "completions": 2, "prior_labels": 0}
    row = re.search(
        r"VerifyBench sample</a></td>\s*<td>[^<]*</td>\s*<td class=\"number\">(\d+)</td>\s*"
        r"<td class=\"number\">(\d+)</td>",
        html,
    )
    assert row and row.groups() == ("2", "2")
    assert reverse("dataset-detail", args=[first.question.dataset_id]) in html
    assert reverse("api-docs") in html
    assert reverse("admin:index") not in html  # not staff


@pytest.mark.django_db
def test_home_and_dataset_list_read_the_counts_each_dataset_keeps(client, researcher, api_client_for):
    for text, model in (("One.", "model-a"), ("Two.", "model-b"), ("Three.", "model-b")):
        make_completion(text, dataset_name="Counted", model_name=model)
    client.force_login(researcher)
    with CaptureQueriesContext(connection) as home:
        assert client.get(reverse("home")).status_code == 200
    with CaptureQueriesContext(connection) as listed:
        body = api_client_for(researcher).get("/api/datasets/").json()
    row = next(row for row in body["results"] if row["name"] == "Counted")
    assert (row["question_count"], row["completion_count"], row["model_count"]) == (3, 3, 2)
    for captured in (home, listed):
        assert not any("verifybench_completion" in query["sql"] for query in captured.captured_queries)


@pytest.mark.django_db
def test_staff_admin_gets_admin_links(client, admin_role_user):
    admin_role_user.is_staff = True
    admin_role_user.save()
    client.force_login(admin_role_user)
    html = client.get(reverse("home")).content.decode()
    assert reverse("admin:index") in html and reverse("admin:auth_user_changelist") in html


@pytest.mark.django_db
def test_adjudicator_home_shows_the_adjudication_section(client, adjudicator):
    client.force_login(adjudicator)
    html = client.get(reverse("home")).content.decode()
    assert 'id="adjudication"' in html
    assert "not an adjudicator on any active project" in html


@pytest.mark.django_db
def test_completion_view_is_for_researchers_only(client, annotator, researcher):
    completion = make_completion("Answer: $\\boxed{1}$")
    url = reverse("completion-detail", args=[completion.pk])
    assert client.get(url).status_code == 302
    client.force_login(annotator)
    assert client.get(url).status_code == 403
    assert (
        client.get(reverse("dataset-detail", args=[completion.question.dataset_id])).status_code == 404
    )  # not disclosed to whoever may not see it
    client.force_login(researcher)
    assert client.get(url).status_code == 200
    assert client.get(reverse("completion-detail", args=[completion.pk + 1000])).status_code == 404


@pytest.mark.django_db
def test_completion_view_renders_untrusted_text_inert_with_the_final_answer(client, researcher):
    completion = make_completion(
        "<script>window.__pwned=1</script> so the sum is $\\boxed{1}$.",
        question_text="<img src=x onerror=alert(1)> Compute $S$.",
    )
    client.force_login(researcher)
    html = client.get(reverse("completion-detail", args=[completion.pk])).content.decode()
    assert_csp_clean(html)
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'href="#final-answer"' in html
    assert (
        '<mark class="final-answer" id="final-answer"><span class="math" data-display="inline">\\boxed{1}</span></mark>'
        in html
    )


@pytest.mark.django_db
def test_dataset_page_links_every_completion(client, researcher):
    completion = make_completion("Text.", dataset_name="mu-MATH sample", model_name="gpt-x")
    client.force_login(researcher)
    html = client.get(reverse("dataset-detail", args=[completion.question.dataset_id])).content.decode()
    assert reverse("completion-detail", args=[completion.pk]) in html
    assert "gpt-x #0" in html
