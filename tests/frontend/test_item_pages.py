"""The item browser, the bulk actions and the item page through Django's test client."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import services, workflow
from annotation.models import AnnotationProject, Item, ItemEvent, Label
from core import roles
from grading.models import Verdict, VerifierConfig
from grading.proofs import services as proof_services

from .labeling_fixtures import HIDDEN_MODEL_NAME, label_item, make_dataset, make_project
from .test_pages import assert_csp_clean

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(make_user):
    """A correctness project of four items: two disagreed (adjudication is waiting), one agreed, one untouched."""
    first, second = make_user(roles.ANNOTATOR, username="ann-one"), make_user(roles.ANNOTATOR, username="ann-two")
    judge = make_user(roles.ADJUDICATOR, username="judy")
    project = make_project(
        make_dataset(questions=4), annotators=[first, second], adjudicators=[judge], tiebreak_annotators=0
    )
    label_item(project, first, True, note="looks right to me", seconds_spent=42)
    label_item(project, second, False, note="sign error in step 2")
    label_item(project, first, True)
    label_item(project, second, True)
    label_item(project, first, True)
    label_item(project, second, False)
    return {
        "project": project,
        "annotators": [first, second],
        "judge": judge,
        "researcher": make_user(roles.RESEARCHER, username="rita"),
        "admin": make_user(roles.ADMIN, username="ada"),
    }


def browser_url(project, **params):
    return reverse("item-browser", args=[project.pk]) + ("?" + urlencode(params) if params else "")


def test_annotators_and_outside_adjudicators_get_404(client, team, make_user):
    project = team["project"]
    item = project.items.first()
    for user in (team["annotators"][0], make_user(roles.ADJUDICATOR)):
        client.force_login(user)
        assert client.get(browser_url(project)).status_code == 404
        assert client.get(reverse("item-detail", args=[item.pk])).status_code == 404
        assert (
            client.post(
                reverse("item-bulk", args=[project.pk]),
                {"items": [item.pk], "scope": "selected", "action": "raise_priority"},
            ).status_code
            == 404
        )
    assert not ItemEvent.objects.filter(kind=ItemEvent.Kind.PRIORITY_CHANGED).exists()


def test_researchers_browse_and_filter(client, team):
    project = team["project"]
    client.force_login(team["researcher"])
    response = client.get(browser_url(project))
    html = response.content.decode()
    assert response.status_code == 200
    for item in project.items.all():
        assert reverse("item-detail", args=[item.pk]) in html
    assert 'data-testid="bulk-actions"' in html and 'name="csrfmiddlewaretoken"' in html
    assert HIDDEN_MODEL_NAME in html  # the model filter offers the dataset's models to reviewers
    assert_csp_clean(html)

    html = client.get(browser_url(project, disagreement="yes")).content.decode()
    disagreed = project.items.filter(state=workflow.NEEDS_ADJUDICATION)
    assert html.count('data-testid="row-state"') == disagreed.count() == 2
    html = client.get(browser_url(project, state="resolved", q="Question 2")).content.decode()
    assert html.count('data-testid="row-state"') <= 1

    response = client.get(browser_url(project, state="finished"))
    assert response.status_code == 400 and 'data-testid="filter-error"' in response.content.decode()


def test_the_projects_adjudicator_browses_without_bulk_actions(client, team):
    client.force_login(team["judge"])
    html = client.get(browser_url(team["project"])).content.decode()
    assert 'data-testid="items"' in html and 'data-testid="bulk-actions"' not in html
    item = team["project"].items.first()
    response = client.post(
        reverse("item-bulk", args=[team["project"].pk]),
        {"items": [item.pk], "scope": "selected", "action": "raise_priority"},
    )
    assert response.status_code == 403


def test_pages_follow_keys_and_cost_the_same_whatever_the_size(client, team, make_user):
    researcher = team["researcher"]
    client.force_login(researcher)
    big = make_project(make_dataset(questions=60), annotators=team["annotators"])
    counts = {}
    for project in (team["project"], big):
        client.get(browser_url(project))  # warm the session and the role caches
        with CaptureQueriesContext(connection) as queries:
            response = client.get(browser_url(project, sort="-priority", model=HIDDEN_MODEL_NAME))
        assert response.status_code == 200
        counts[project.pk] = len(queries)
    assert counts[team["project"].pk] == counts[big.pk]

    html = client.get(browser_url(big)).content.decode()
    assert 'data-testid="next-page"' in html
    seen, url = set(), browser_url(big)
    while url:
        response = client.get(url)
        page = response.context["rows"]
        assert not seen & {row["id"] for row in page}
        seen |= {row["id"] for row in page}
        url = response.context["next_url"]
    assert seen == set(big.items.values_list("pk", flat=True))


def test_bulk_on_ticked_items_and_on_all_matching(client, team):
    project = team["project"]
    client.force_login(team["researcher"])
    chosen = list(project.items.order_by("id").values_list("pk", flat=True)[:2])
    back = browser_url(project, sort="-priority")
    response = client.post(
        reverse("item-bulk", args=[project.pk]),
        {"items": chosen, "scope": "selected", "action": "raise_priority", "amount": "4", "next": back},
    )
    assert response.status_code == 302 and response.url == back
    assert set(Item.objects.filter(pk__in=chosen).values_list("priority", flat=True)) == {4}
    assert "Change priority: 2 items changed." in client.get(back).content.decode()

    response = client.post(
        reverse("item-bulk", args=[project.pk]),
        {"scope": "matching", "filter": "disagreement=yes", "action": "exclude", "rationale": "Ambiguous wording."},
    )
    assert response.status_code == 302 and response.url == browser_url(project)
    excluded = project.items.filter(state=workflow.EXCLUDED)
    assert excluded.count() == 2
    assert set(ItemEvent.objects.filter(kind=ItemEvent.Kind.EXCLUDED).values_list("rationale", flat=True)) == {
        "Ambiguous wording."
    }

    response = client.post(
        reverse("item-bulk", args=[project.pk]),
        {"scope": "matching", "filter": "", "action": "reopen", "rationale": ""},
        follow=True,
    )
    assert "Nothing was changed: a written rationale is required" in response.content.decode()


def test_bulk_refuses_a_selection_over_the_limit(client, team, monkeypatch):
    monkeypatch.setattr(services, "BULK_LIMIT", 2)
    monkeypatch.setattr(services.bulk, "BULK_LIMIT", 2)
    client.force_login(team["researcher"])
    response = client.post(
        reverse("item-bulk", args=[team["project"].pk]),
        {"scope": "matching", "filter": "", "action": "raise_priority"},
        follow=True,
    )
    assert "narrow the filter" in response.content.decode()
    assert set(team["project"].items.values_list("priority", flat=True)) == {0}


def test_the_bulk_form_needs_its_csrf_token(team):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(team["researcher"])
    item = team["project"].items.first()
    response = strict.post(
        reverse("item-bulk", args=[team["project"].pk]),
        {"items": [item.pk], "scope": "selected", "action": "raise_priority"},
    )
    assert response.status_code == 403


def test_a_researcher_reads_every_label_verdict_and_event(client, team):
    project = team["project"]
    project.verdict_visibility = AnnotationProject.VerdictVisibility.ADJUDICATORS
    project.save()
    item = Label.objects.get(note="looks right to me").item
    assert item.state == workflow.NEEDS_ADJUDICATION
    Verdict.objects.create(
        completion_id=item.subject_id,
        status="incorrect",
        extracted_answer="42",
        verifier=VerifierConfig.objects.create(name="rule-check", kind="rule"),
    )
    client.force_login(team["researcher"])
    response = client.get(reverse("item-detail", args=[item.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    for text in (
        "ann-one",
        "ann-two",
        "looks right to me",
        "sign error in step 2",
        "42 s",
        "rule-check",
        "Adjudication requested",
        "Label given",
        'data-testid="question"',
        'data-testid="completion"',
        'class="math"',
    ):
        assert text in html, text
    assert 'data-testid="override-form"' not in html and 'data-testid="item-actions"' in html
    assert 'data-testid="decide-link"' not in html  # a researcher without the adjudicator role
    assert_csp_clean(html)

    project.verdict_visibility = AnnotationProject.VerdictVisibility.NOBODY
    project.save()
    assert "rule-check" not in client.get(reverse("item-detail", args=[item.pk])).content.decode()


def test_verdicts_show_extracted_answers_and_explanations_as_math_with_their_source(client, team):
    project = team["project"]
    project.verdict_visibility = AnnotationProject.VerdictVisibility.ADJUDICATORS
    project.save()
    item = Label.objects.get(note="looks right to me").item
    Verdict.objects.create(
        completion_id=item.subject_id,
        status="incorrect",
        extracted_answer="\\frac{\\pi}{2}",
        explanation="The completion gives \\\\frac{\\\\pi}{2}, not \\\\sqrt{2}.",
        verifier=VerifierConfig.objects.create(name="judge", kind="rule"),
    )
    client.force_login(team["researcher"])
    html = client.get(reverse("item-detail", args=[item.pk])).content.decode()
    assert (
        'data-testid="extracted-answer"><p><span class="math" data-display="inline">\\frac{\\pi}{2}</span></p>' in html
    )
    assert (
        'gives <span class="math" data-display="inline">\\frac{\\pi}{2}</span>, not '
        '<span class="math" data-display="inline">\\sqrt{2}</span>.'
    ) in html
    assert "<code data-tex-source hidden>\\frac{\\pi}{2}</code>" in html
    assert 'data-plain-toggle aria-pressed="false">Plain text</button>' in html

    client.force_login(team["judge"])
    html = client.get(reverse("item-detail", args=[item.pk])).content.decode()
    assert 'data-testid="decide-link"' in html and 'data-testid="item-actions"' not in html


def test_untrusted_text_is_inert_on_the_item_page(client, team):
    item = team["project"].items.order_by("id").first()
    completion = item.subject
    completion.text = "Answer: <script>window.__pwned = 1</script> <img src=x onerror=alert(1)> $x^2$"
    completion.save()
    client.force_login(team["researcher"])
    html = client.get(reverse("item-detail", args=[item.pk])).content.decode()
    assert "<script>window.__pwned" not in html and "<img" not in html
    assert "&lt;script&gt;window.__pwned" in html


def test_only_admins_override_from_the_item_page(client, team):
    project = team["project"]
    item = project.items.filter(state=workflow.RESOLVED).first()
    url = reverse("item-detail", args=[item.pk])
    client.force_login(team["researcher"])
    assert client.post(url, {"decision": "incorrect", "rationale": "no"}).status_code == 403

    client.force_login(team["admin"])
    html = client.get(url).content.decode()
    assert 'data-testid="override-form"' in html
    response = client.post(url, {"decision": "incorrect", "rationale": "  "})
    assert response.status_code == 400 and "rationale is required" in response.content.decode()
    response = client.post(url, {"decision": "incorrect", "rationale": "The last step divides by zero."})
    assert response.status_code == 302 and response.url == url
    item.refresh_from_db()
    assert (item.resolution, item.final_value) == (workflow.BY_OVERRIDE, False)
    html = client.get(url).content.decode()
    assert "Overridden by admin" in html and "The last step divides by zero." in html and "final Incorrect" in html

    pending = project.items.filter(state=workflow.NEEDS_ADJUDICATION).first()
    html = client.get(reverse("item-detail", args=[pending.pk])).content.decode()
    assert 'data-testid="not-overridable"' in html


def test_proofs_stay_anonymous_on_the_item_page(client, make_user):
    competition = proof_services.get_or_create_competition("Page Olympiad")
    problem = proof_services.add_problem(
        competition,
        problem_idx=1,
        statement="Prove $1 < 2$.",
        solutions=["Obvious."],
        rubric={
            "max_points": 7,
            "chains": [{"key": "c", "title": "Direct", "checkpoints": [{"key": "a", "title": "All", "points": 7}]}],
        },
    )
    proof_services.add_submission(problem, model_name="secret-proof-model", text="Since $2 - 1 = 1 > 0$.")
    project = proof_services.create_proof_project(
        name="Proofs", competition=competition, graders=[make_user(roles.ANNOTATOR)]
    )
    item = project.items.get()
    client.force_login(make_user(roles.RESEARCHER))
    html = client.get(reverse("item-detail", args=[item.pk])).content.decode()
    assert 'data-testid="proof"' in html and "secret-proof-model" not in html
    html = client.get(browser_url(project, q="Prove")).content.decode()
    assert reverse("item-detail", args=[item.pk]) in html and "secret-proof-model" not in html


def test_items_are_linked_from_the_dashboard_and_the_conflicts(client, team):
    project = team["project"]
    client.force_login(team["judge"])
    html = client.get(reverse("annotation-conflicts", args=[project.pk])).content.decode()
    for item in project.items.filter(state=workflow.NEEDS_ADJUDICATION):
        assert reverse("item-detail", args=[item.pk]) in html
    client.force_login(team["researcher"])
    html = client.get(reverse("dashboard-project", args=[project.pk])).content.decode()
    assert browser_url(project) in html


def test_the_verdict_filters_follow_the_projects_visibility_for_adjudicators(client, team):
    project = team["project"]
    project.verdict_visibility = AnnotationProject.VerdictVisibility.NOBODY
    project.save()
    client.force_login(team["judge"])
    assert 'name="verdict"' not in client.get(browser_url(project)).content.decode()
    assert client.get(browser_url(project, verdict="correct")).status_code == 400
    client.force_login(team["researcher"])
    assert 'name="verdict"' in client.get(browser_url(project)).content.decode()


def test_a_researcher_following_an_adjudication_link_lands_on_the_item_page(client, team):
    item = team["project"].items.filter(state=workflow.NEEDS_ADJUDICATION).first()
    client.force_login(team["researcher"])
    response = client.get(reverse("annotation-adjudicate", args=[item.pk]))
    assert response.status_code == 302 and response.url == reverse("item-detail", args=[item.pk])
    response = client.post(reverse("annotation-adjudicate", args=[item.pk]), {"decision": "correct", "rationale": "x"})
    assert response.status_code == 404
    assert Item.objects.get(pk=item.pk).state == workflow.NEEDS_ADJUDICATION
