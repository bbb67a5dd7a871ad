"""The workspace pages through Django's test client, as a browser without JavaScript uses them: settings and
guidelines, members and invitations, the public invitation page, the guidelines panel of the work pages."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from annotation import services, workflow
from annotation.models import AnnotationProject, Invitation, Label, ProjectChange, ProjectMember
from core import roles

from .labeling_fixtures import label_item, make_dataset, make_project
from .test_pages import assert_csp_clean

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-passphrase-1"


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def settings_data(project: AnnotationProject, **changes) -> dict:
    data = {
        "name": project.name,
        "description": project.description,
        "guidelines": project.guidelines,
        "labels_per_item": project.labels_per_item,
        "tiebreak_annotators": project.tiebreak_annotators,
        "agreement_threshold": project.agreement_threshold,
        "lease_minutes": project.lease_minutes,
        "verdict_visibility": project.verdict_visibility,
        "gold_rate": project.gold_rate,
        "show_model_names": "on" if project.show_model_names else "",
        "is_active": "on" if project.is_active else "",
        "aggregation": project.aggregation,
        "adaptive_redundancy": "on" if project.adaptive_redundancy else "",
        "confidence_target": project.confidence_target,
        "max_labels": project.max_labels,
        "refit_every": project.refit_every,
    }
    data.update(changes)
    return {key: value for key, value in data.items() if value != ""}


def link_in(html: str) -> str:
    match = re.search(r'id="new-link-url" readonly value="([^"]+)"', html)
    assert match, "no invitation link on the page"
    return match.group(1).replace("http://testserver", "")


def test_annotators_and_adjudicators_get_404_on_every_workspace_page(client, make_user):
    annotator, judge = make_user(roles.ANNOTATOR), make_user(roles.ADJUDICATOR)
    project = make_project(make_dataset(questions=1), annotators=[annotator], adjudicators=[judge])
    member = ProjectMember.objects.filter(project=project).first()
    invitation, _ = services.create_invitation(project, actor=None)
    for user in (annotator, judge):
        client.force_login(user)
        for url in (reverse("project-settings", args=[project.pk]), reverse("project-members", args=[project.pk])):
            assert client.get(url).status_code == 404, url
        for url, data in (
            (reverse("project-settings", args=[project.pk]), settings_data(project, name="taken over")),
            (reverse("project-member-add", args=[project.pk]), {"role": "annotator", "annotator-user": user.pk}),
            (reverse("project-member-remove", args=[project.pk, member.pk]), {}),
            (reverse("project-invitation-new", args=[project.pk]), {"invite-role": "adjudicator", "invite-days": 7}),
            (reverse("project-account-new", args=[project.pk]), {"account-username": "mine", "account-days": 7}),
            (reverse("project-invitation-revoke", args=[project.pk, invitation.pk]), {}),
        ):
            assert client.post(url, data).status_code == 404, url
    project.refresh_from_db()
    assert project.name != "taken over" and not User.objects.filter(username="mine").exists()
    assert ProjectMember.objects.filter(project=project, is_active=True).count() == 2
    client.logout()
    assert client.get(reverse("project-settings", args=[project.pk])).status_code == 302  # to the login page


class TestSettingsPage:
    def test_the_form_shows_the_settings_and_saves_a_change_with_a_new_guidelines_version(self, client, researcher):
        project = make_project(make_dataset(questions=2))
        client.force_login(researcher)
        url = reverse("project-settings", args=[project.pk])
        page = client.get(url)
        html = page.content.decode()
        assert page.status_code == 200
        assert f'value="{project.name}"' in html and '<label for="id_guidelines">' in html
        assert "No guidelines yet" in html and "Nothing changed yet" in html
        assert_csp_clean(html)

        response = client.post(
            url,
            settings_data(
                project,
                name="Round two",
                lease_minutes=20,
                is_active="",
                guidelines="Boxed answers count; $x^2$ is fine.\n\n<script>x</script>",
            ),
        )
        assert response.status_code == 302 and response.url == url
        project.refresh_from_db()
        assert (project.name, project.lease_minutes, project.is_active, project.guidelines_version) == (
            "Round two",
            20,
            False,
            1,
        )
        html = client.get(url).content.decode()
        preview = html.split('data-testid="guidelines-preview">')[1].split("</div>")[0]
        assert 'class="math"' in preview and "<script" not in preview
        log = html.split('data-testid="change-log"')[1]
        assert researcher.username in log and "lease minutes: 30 → 20" in log and "guidelines version 1" in log

        client.post(url, settings_data(project, guidelines="Second version."))
        html = client.get(url).content.decode()
        assert "now version 2" in html and "Version 1 · " in html.split('data-testid="guidelines-history"')[1]

    def test_aggregation_settings_save_and_adaptive_needs_the_model(self, client, researcher):
        project = make_project(make_dataset(questions=2))
        client.force_login(researcher)
        url = reverse("project-settings", args=[project.pk])
        html = client.get(url).content.decode()
        assert 'data-testid="aggregation-settings"' in html and 'name="adaptive_redundancy"' in html
        response = client.post(url, settings_data(project, adaptive_redundancy="on"))
        assert response.status_code == 400 and "needs model aggregation" in response.content.decode()
        response = client.post(
            url,
            settings_data(project, aggregation="model", adaptive_redundancy="on", confidence_target=0.95, max_labels=3),
        )
        assert response.status_code == 302
        project.refresh_from_db()
        assert (project.aggregation, project.adaptive_redundancy, project.confidence_target, project.max_labels) == (
            "model",
            True,
            0.95,
            3,
        )
        assert set(project.items.values_list("required_labels", flat=True)) == {1}
        log = client.get(url).content.decode().split('data-testid="change-log"')[1]
        assert "aggregation: &#x27;majority&#x27; → &#x27;model&#x27;" in log or "aggregation: 'majority'" in log

    def test_a_change_the_workflow_cannot_follow_is_refused_with_the_reason(self, client, researcher, make_user):
        first, second = make_user(roles.ANNOTATOR), make_user(roles.ANNOTATOR)
        project = make_project(make_dataset(questions=2), annotators=[first, second])
        label_item(project, first, True)
        label_item(project, second, False)
        assert project.items.filter(state=workflow.NEEDS_TIEBREAK).count() == 1
        client.force_login(researcher)
        url = reverse("project-settings", args=[project.pk])
        assert "1 item waiting for a tie-break" in client.get(url).content.decode()
        response = client.post(url, settings_data(project, labels_per_item=3, name="Not saved either"))
        assert response.status_code == 409
        html = response.content.decode()
        assert "Nothing was saved" in html and "wait for a tie-break" in html.replace("waits", "wait")
        assert 'value="Not saved either"' in html  # the input is kept
        project.refresh_from_db()
        assert (project.labels_per_item, project.name) != (3, "Not saved either")
        invalid = client.post(url, settings_data(project, labels_per_item=0))
        assert invalid.status_code == 400

    def test_the_dashboard_and_the_project_lists_link_to_the_workspace(self, client, researcher):
        project = make_project(make_dataset(questions=1))
        client.force_login(researcher)
        for page in (reverse("dashboard-project", args=[project.pk]), reverse("dashboard-projects"), reverse("home")):
            html = client.get(page).content.decode()
            assert reverse("project-settings", args=[project.pk]) in html, page
            assert reverse("project-members", args=[project.pk]) in html, page


class TestMembersPage:
    def test_members_are_listed_added_and_removed_without_losing_labels(self, client, researcher, make_user):
        alice = make_user(roles.ANNOTATOR, username="alice")
        make_user(roles.ANNOTATOR, username="bruno")
        make_user(roles.ADJUDICATOR, username="judith")
        make_user(roles.RESEARCHER, username="rita")
        project = make_project(make_dataset(questions=2), annotators=[alice])
        label_item(project, alice, True)
        client.force_login(researcher)
        url = reverse("project-members", args=[project.pk])
        html = client.get(url).content.decode()
        assert_csp_clean(html)
        row = html.split('data-member="alice"')[1].split("</tr>")[0]
        assert '<td class="number">1</td>' in row
        annotator_choices = html.split('id="add-annotator-heading"')[1].split("</section>")[0]
        adjudicator_choices = html.split('id="add-adjudicator-heading"')[1].split("</section>")[0]
        assert "bruno" in annotator_choices and "alice" not in annotator_choices and "rita" not in annotator_choices
        assert "judith" in adjudicator_choices and "bruno" not in adjudicator_choices

        judith = User.objects.get(username="judith")
        response = client.post(
            reverse("project-member-add", args=[project.pk]), {"role": "adjudicator", "adjudicator-user": judith.pk}
        )
        assert response.status_code == 302
        assert services.is_member(project, judith, ProjectMember.Role.ADJUDICATOR)
        refused = client.post(
            reverse("project-member-add", args=[project.pk]),
            {"role": "adjudicator", "adjudicator-user": User.objects.get(username="bruno").pk},
        )
        assert refused.status_code == 400

        member = ProjectMember.objects.get(project=project, user=alice)
        response = client.post(reverse("project-member-remove", args=[project.pk, member.pk]), follow=True)
        html = response.content.decode()
        assert "their labels stay" in html
        assert '<tr data-member="alice" data-role="annotator" class="removed">' in html
        assert Label.objects.filter(annotator=alice).count() == 1
        client.force_login(alice)
        assert client.get(reverse("annotation-label", args=[project.pk])).status_code == 404

    def test_several_people_are_added_at_once_and_each_name_is_accounted_for(self, client, researcher, make_user):
        alice = make_user(roles.ANNOTATOR, username="alice")
        bruno = make_user(roles.ANNOTATOR, username="bruno")
        carla = make_user(roles.ANNOTATOR, username="carla")
        carla.email = "carla@example.org"
        carla.save(update_fields=["email"])
        make_user(roles.ADJUDICATOR, username="judith")
        dora = make_user(roles.ADJUDICATOR, username="dora")
        dora.groups.add(*alice.groups.all())  # has the annotator role too, but adjudicates this project
        project = make_project(make_dataset(questions=1), annotators=[alice], adjudicators=[dora])
        client.force_login(researcher)
        url = reverse("project-members", args=[project.pk])
        page = client.get(url).content.decode()
        assert 'name="annotator-people"' in page and 'data-copy-link="new-link-url"' not in page

        response = client.post(
            reverse("project-member-add", args=[project.pk]),
            {
                "role": "annotator",
                "annotator-user": bruno.pk,  # chosen from the list, and named again below
                "annotator-people": "bruno, Carla@Example.org\nalice\nzed;nobody@example.org judith dora carla",
            },
        )
        assert response.status_code == 302 and response.url == url
        html = client.get(url).content.decode()
        assert f"bruno and carla are now annotators on {project.name}." in html
        assert f"alice is already an annotator on {project.name}." in html
        assert "No account was found for zed or nobody@example.org: check the spelling" in html
        assert "judith does not have the annotator role; an invitation link gives it." in html
        assert "dora is an adjudicator on" in html and "cannot label its items blind" in html
        assert '<li class="notice error">' in html
        annotators = ProjectMember.objects.filter(project=project, role="annotator", is_active=True)
        assert set(annotators.values_list("user__username", flat=True)) == {"alice", "bruno", "carla"}
        added = ProjectChange.objects.filter(project=project, kind=ProjectChange.Kind.MEMBER_ADDED, actor=researcher)
        assert added.count() == 2

    def test_one_name_is_a_list_of_one_and_a_list_that_adds_nobody_comes_back_with_the_reasons(
        self, client, researcher, make_user
    ):
        make_user(roles.ANNOTATOR, username="bruno")
        make_user(roles.ANNOTATOR, username="carla")
        project = make_project(make_dataset(questions=1))
        client.force_login(researcher)
        add_url = reverse("project-member-add", args=[project.pk])
        response = client.post(add_url, {"role": "annotator", "annotator-people": " bruno \n"}, follow=True)
        assert f"bruno is now an annotator on {project.name}." in response.content.decode()

        response = client.post(add_url, {"role": "annotator", "annotator-people": "zed, yann"})
        html = response.content.decode()
        assert response.status_code == 400
        assert "No account was found for zed or yann" in html and "zed, yann</textarea>" in html
        assert client.post(add_url, {"role": "annotator", "annotator-people": " , "}).status_code == 400
        assert not User.objects.filter(username__in=["zed", "yann"]).exists()
        assert set(ProjectMember.objects.filter(project=project).values_list("user__username", flat=True)) == {"bruno"}

    def test_only_researchers_of_the_projects_workspace_add_people(self, client, researcher, make_user):
        from core.models import Workspace, WorkspaceMember

        make_user(roles.ANNOTATOR, username="bruno")
        annotator = make_user(roles.ANNOTATOR, username="anna")
        project = make_project(make_dataset(questions=1), annotators=[annotator])
        outsider = make_user(roles.RESEARCHER)
        WorkspaceMember.objects.filter(user=outsider).delete()
        WorkspaceMember.objects.create(workspace=Workspace.objects.create(name="Elsewhere"), user=outsider)
        add_url = reverse("project-member-add", args=[project.pk])
        for user in (annotator, outsider):
            client.force_login(user)
            refused = client.post(add_url, {"role": "annotator", "annotator-people": "bruno\nanna"})
            assert refused.status_code == 404
        assert not ProjectMember.objects.filter(project=project, user__username="bruno").exists()
        assert set(ProjectMember.objects.filter(project=project).values_list("user__username", flat=True)) == {"anna"}

    def test_an_invitation_link_is_shown_once_and_can_be_revoked(self, client, researcher):
        project = make_project(make_dataset(questions=1))
        client.force_login(researcher)
        response = client.post(
            reverse("project-invitation-new", args=[project.pk]), {"invite-role": "annotator", "invite-days": 3}
        )
        assert response.status_code == 201
        link = link_in(response.content.decode())
        assert link.startswith("/invite/")
        assert '<button type="button" class="secondary" data-copy-link="new-link-url" hidden>Copy link</button>' in (
            response.content.decode()
        )
        assert_csp_clean(response.content.decode())
        members_page = client.get(reverse("project-members", args=[project.pk])).content.decode()
        assert link not in members_page and 'data-status="open"' in members_page
        invitation = Invitation.objects.get(project=project)
        assert timedelta(days=2, hours=23) < invitation.expires_at - timezone.now() <= timedelta(days=3)
        client.post(reverse("project-invitation-revoke", args=[project.pk, invitation.pk]))
        assert Invitation.objects.get(pk=invitation.pk).status() == Invitation.Status.REVOKED
        client.logout()
        page = client.get(link)
        assert page.status_code == 410 and "withdrawn" in page.content.decode()
        bad = client.post(reverse("project-invitation-new", args=[project.pk]), {"invite-days": 7})
        assert bad.status_code == 302  # signed out: to the login page

    def test_a_created_account_chooses_its_password_through_its_link(self, client, researcher):
        project = make_project(make_dataset(questions=1))
        client.force_login(researcher)
        response = client.post(
            reverse("project-account-new", args=[project.pk]),
            {"account-username": "carol", "account-email": "", "account-days": 7},
        )
        assert response.status_code == 201, response.content.decode()[:3000]
        html = response.content.decode()
        assert "Account carol created" in html
        link = link_in(html)
        taken = client.post(
            reverse("project-account-new", args=[project.pk]), {"account-username": "carol", "account-days": 7}
        )
        assert taken.status_code == 400 and "taken" in taken.content.decode()
        client.logout()
        page = client.get(link).content.decode()
        assert "Choose the password of your account <strong>carol</strong>" in page
        assert_csp_clean(page)
        response = client.post(link, {"new_password1": PASSWORD, "new_password2": PASSWORD})
        assert response.status_code == 302 and response.url == reverse("annotation-label", args=[project.pk])
        assert User.objects.get(username="carol").check_password(PASSWORD)
        assert client.get(reverse("annotation-label", args=[project.pk])).status_code == 200


class TestInvitationPage:
    def test_a_newcomer_signs_up_and_lands_on_the_labeling_page(self, client, researcher):
        project = make_project(make_dataset(questions=2))
        _, token = services.create_invitation(project, actor=researcher)
        url = reverse("invitation", args=[token])
        page = client.get(url)
        html = page.content.decode()
        assert page.status_code == 200 and f"Join {project.name}" in html and "annotator" in html
        assert '<label for="id_username">' in html and '<label for="id_password1">' in html
        assert_csp_clean(html)

        weak = client.post(url, {"username": "newbie", "password1": "short", "password2": "short"})
        assert weak.status_code == 400 and "too short" in weak.content.decode()
        response = client.post(url, {"username": "newbie", "email": "", "password1": PASSWORD, "password2": PASSWORD})
        assert response.status_code == 302 and response.url == reverse("annotation-label", args=[project.pk])
        newbie = User.objects.get(username="newbie")
        assert roles.role_names(newbie) == {roles.ANNOTATOR}
        assert client.get(response.url).status_code == 200  # signed in

        client.logout()
        again = client.get(url)
        assert again.status_code == 410 and "already been used" in again.content.decode()
        used = client.post(url, {"username": "second", "password1": PASSWORD, "password2": PASSWORD})
        assert used.status_code == 410 and not User.objects.filter(username="second").exists()

    def test_unknown_and_expired_links_say_so_without_naming_the_project(self, client, researcher):
        project = make_project(make_dataset(questions=1, name="secret-project-name"))
        invitation, token = services.create_invitation(project, actor=researcher)
        Invitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
        for url, status, reason in (
            (reverse("invitation", args=[token]), 410, "has expired"),
            (reverse("invitation", args=["no-such-token"]), 404, "not valid"),
        ):
            response = client.get(url)
            html = response.content.decode()
            assert response.status_code == status and reason in html
            assert "secret-project-name" not in html and "Join" not in html

    def test_a_signed_in_user_accepts_with_their_account_and_a_member_leaves_the_link(
        self, client, researcher, make_user
    ):
        member = make_user(roles.ANNOTATOR)
        outsider = make_user()
        project = make_project(make_dataset(questions=1), annotators=[member])
        _, token = services.create_invitation(project, role="adjudicator", actor=researcher)
        _, annotator_token = services.create_invitation(project, role="annotator", actor=researcher)

        client.force_login(member)
        response = client.post(reverse("invitation", args=[annotator_token]), follow=True)
        assert "already an annotator" in response.content.decode()
        assert services.open_invitation(annotator_token).status() == Invitation.Status.OPEN

        client.force_login(outsider)
        page = client.get(reverse("invitation", args=[token])).content.decode()
        assert f"signed in as <strong>{outsider.username}</strong>" in page
        response = client.post(reverse("invitation", args=[token]))
        assert response.status_code == 302 and response.url == reverse("annotation-conflicts", args=[project.pk])
        assert services.is_member(project, outsider, ProjectMember.Role.ADJUDICATOR)
        assert roles.is_adjudicator(User.objects.get(pk=outsider.pk))
        assert ProjectChange.objects.filter(
            project=project, kind=ProjectChange.Kind.INVITATION_ACCEPTED, actor=outsider
        ).exists()


class TestGuidelinesPanel:
    def test_the_labeling_page_opens_each_new_version_until_acknowledged_without_javascript(
        self, client, researcher, annotator
    ):
        project = make_project(make_dataset(questions=2), annotators=[annotator])
        label_url = reverse("annotation-label", args=[project.pk])
        client.force_login(annotator)
        assert 'id="guidelines-panel"' not in client.get(label_url).content.decode()  # nothing written yet

        services.update_project(
            project,
            actor=researcher,
            description="Checking *answers*.",
            guidelines="Mark $\\frac{1}{2}$ and 0.5 as equal.",
        )
        html = client.get(label_url).content.decode()
        panel = html.split('id="guidelines-panel"')[1].split("</section>")[0]
        assert 'data-guidelines-version="1"' in panel and 'data-guidelines-seen="0"' in panel
        assert "<details data-guidelines-details open>" in panel and "new</span>" in panel
        assert "<em>answers</em>" in panel and 'class="math"' in panel
        assert_csp_clean(html)

        response = client.post(
            reverse("project-guidelines-seen", args=[project.pk]), {"version": "1", "next": label_url}
        )
        assert response.status_code == 302 and response.url == label_url
        panel = client.get(label_url).content.decode().split('id="guidelines-panel"')[1].split("</section>")[0]
        assert "<details data-guidelines-details>" in panel and "data-guidelines-ack" not in panel

        services.update_project(project, actor=researcher, guidelines="Version two.")
        panel = client.get(label_url).content.decode().split('id="guidelines-panel"')[1].split("</section>")[0]
        assert 'data-guidelines-version="2"' in panel and "open>" in panel and "updated</span>" in panel

        json_answer = client.post(
            reverse("project-guidelines-seen", args=[project.pk]), {"version": "2"}, HTTP_ACCEPT="application/json"
        )
        assert json_answer.json() == {"seen_version": 2}
        offsite = client.post(
            reverse("project-guidelines-seen", args=[project.pk]), {"version": "2", "next": "https://evil.example/"}
        )
        assert offsite.url == label_url

    def test_only_members_acknowledge(self, client, researcher, make_user):
        project = make_project(make_dataset(questions=1))
        services.update_project(project, actor=researcher, guidelines="Text.")
        client.force_login(make_user(roles.ANNOTATOR))
        assert client.post(reverse("project-guidelines-seen", args=[project.pk]), {"version": 1}).status_code == 404
        assert client.get(reverse("project-guidelines-seen", args=[project.pk])).status_code == 405

    def test_the_proof_grading_page_shows_the_panel_too(self, client, researcher, make_user):
        from grading.proofs import services as proof_services

        competition = proof_services.get_or_create_competition("Panel Olympiad")
        problem = proof_services.add_problem(
            competition,
            problem_idx=1,
            statement="Prove it.",
            rubric={
                "max_points": 7,
                "chains": [{"key": "c", "title": "C", "checkpoints": [{"key": "k", "title": "All", "points": 7}]}],
            },
        )
        proof_services.add_submission(problem, model_name="m", text="Proof.")
        grader = make_user(roles.ANNOTATOR)
        project = proof_services.create_proof_project(name="Proofs", competition=competition, graders=[grader])
        services.update_project(project, actor=researcher, guidelines="Read the **whole** proof.")
        client.force_login(grader)
        grade_url = client.post(reverse("proof-next", args=[project.pk]))["Location"]
        html = client.get(grade_url).content.decode()
        assert 'id="guidelines-panel"' in html and "<strong>whole</strong>" in html and "open>" in html
