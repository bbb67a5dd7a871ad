"""The workspace through the REST API: members (list, add, remove), invitations (list, create, revoke), settings and
guidelines by PATCH; who may use it."""

import pytest
from django.contrib.auth.models import User

from annotation import services, workflow
from annotation.models import Invitation, Label, ProjectChange, ProjectMember

from .conftest import label_item


@pytest.fixture
def setup(make_project, api_client_for, researcher, admin_role_user, make_user):
    project, people, judges = make_project(annotators=2, adjudicators=1)
    return {
        "project": project,
        "people": people,
        "judge": judges[0],
        "researcher": api_client_for(researcher),
        "admin": api_client_for(admin_role_user),
        "annotator": api_client_for(people[0]),
        "adjudicator": api_client_for(judges[0]),
        "anonymous": api_client_for(None),
        "researcher_user": researcher,
    }


def url(project, tail=""):
    return f"/api/projects/{project.pk}/{tail}"


class TestWhoMayUseIt:
    @pytest.mark.parametrize("who", ["annotator", "adjudicator"])
    def test_annotators_and_adjudicators_are_refused(self, setup, who):
        project, client = setup["project"], setup[who]
        member = ProjectMember.objects.filter(project=project).first()
        invitation, _ = services.create_invitation(project, actor=setup["researcher_user"])
        for method, path, body in [
            ("get", url(project, "members/"), None),
            ("post", url(project, "members/"), {"username": setup["people"][1].username, "role": "annotator"}),
            ("delete", url(project, f"members/{member.pk}/"), None),
            ("get", url(project, "invitations/"), None),
            ("post", url(project, "invitations/"), {"role": "annotator"}),
            ("delete", url(project, f"invitations/{invitation.pk}/"), None),
            ("patch", url(project), {"guidelines": "mine now"}),
        ]:
            response = getattr(client, method)(path, body, format="json")
            assert response.status_code in (403, 404), (method, path, response.status_code)
        assert ProjectMember.objects.filter(project=project, is_active=True).count() == 3
        assert Invitation.objects.get(pk=invitation.pk).status() == Invitation.Status.OPEN
        project.refresh_from_db()
        assert project.guidelines == ""

    def test_anonymous_is_refused(self, setup):
        project, client = setup["project"], setup["anonymous"]
        assert client.get(url(project, "members/")).status_code in (401, 403)
        assert client.get(url(project, "invitations/")).status_code in (401, 403)
        assert client.post(url(project, "invitations/"), {}, format="json").status_code in (401, 403)


class TestMembers:
    def test_list_shows_labels_and_hides_removed_members_unless_asked(self, setup):
        project, (alice, bob) = setup["project"], setup["people"]
        label_item(project.items.order_by("random_key").first(), [alice], [True])
        rows = {row["username"]: row for row in setup["researcher"].get(url(project, "members/")).json()}
        assert rows[alice.username]["labels"] == 1 and rows[alice.username]["is_active"] is True
        bob_member = ProjectMember.objects.get(project=project, user=bob)
        assert setup["researcher"].delete(url(project, f"members/{bob_member.pk}/")).status_code == 204
        listed = [row["username"] for row in setup["researcher"].get(url(project, "members/")).json()]
        assert bob.username not in listed
        everyone = setup["researcher"].get(url(project, "members/") + "?include_removed=1").json()
        assert {row["username"]: row["is_active"] for row in everyone}[bob.username] is False

    def test_delete_keeps_the_labels_and_a_second_delete_is_a_conflict(self, setup):
        project, (alice, _) = setup["project"], setup["people"]
        label_item(project.items.order_by("random_key").first(), [alice], [False])
        member = ProjectMember.objects.get(project=project, user=alice)
        assert setup["admin"].delete(url(project, f"members/{member.pk}/")).status_code == 204
        assert Label.objects.filter(annotator=alice).count() == 1
        assert setup["admin"].delete(url(project, f"members/{member.pk}/")).status_code == 409
        assert setup["admin"].delete(url(project, "members/999999/")).status_code == 404
        assert setup["annotator"].post(url(project, "next-task/")).status_code in (403, 404)

    def test_adding_needs_the_role(self, setup, make_user):
        project = setup["project"]
        plain = make_user()
        response = setup["researcher"].post(
            url(project, "members/"), {"username": plain.username, "role": "adjudicator"}, format="json"
        )
        assert response.status_code == 400 and "role" in response.json()["username"][0]
        judge = make_user("adjudicator")
        response = setup["researcher"].post(
            url(project, "members/"), {"username": judge.username, "role": "adjudicator"}, format="json"
        )
        assert response.status_code == 200
        assert ProjectChange.objects.filter(
            project=project, kind=ProjectChange.Kind.MEMBER_ADDED, details__username=judge.username
        ).exists()


class TestInvitations:
    def test_create_list_and_revoke(self, setup, client):
        project, researcher = setup["project"], setup["researcher"]
        created = researcher.post(url(project, "invitations/"), {"role": "adjudicator", "days": 3}, format="json")
        assert created.status_code == 201, created.content
        body = created.json()
        assert body["role"] == "adjudicator" and body["status"] == "open"
        assert body["url"].endswith(f"/invite/{body['token']}/")
        invitation = Invitation.objects.get(pk=body["id"])
        assert body["token"] not in invitation.token_hash
        listed = researcher.get(url(project, "invitations/")).json()
        assert [row["id"] for row in listed] == [invitation.pk] and "token" not in listed[0]

        revoked = researcher.delete(url(project, f"invitations/{invitation.pk}/"))
        assert revoked.status_code == 200 and revoked.json()["status"] == "revoked"
        assert researcher.delete(url(project, f"invitations/{invitation.pk}/")).status_code == 409
        page = client.get(f"/invite/{body['token']}/")
        assert page.status_code == 410 and "withdrawn" in page.content.decode()

    def test_bad_requests(self, setup):
        project, researcher = setup["project"], setup["researcher"]
        assert researcher.post(url(project, "invitations/"), {"role": "researcher"}, format="json").status_code == 400
        assert researcher.post(url(project, "invitations/"), {"days": 400}, format="json").status_code == 400
        other = services.create_project(dataset=project.dataset, kind="answer_type")
        foreign, _ = services.create_invitation(other, actor=setup["researcher_user"])
        assert researcher.delete(url(project, f"invitations/{foreign.pk}/")).status_code == 404


class TestSettingsByPatch:
    def test_patch_goes_through_the_rules_and_the_change_log(self, setup):
        project, researcher = setup["project"], setup["researcher"]
        response = researcher.patch(url(project), {"guidelines": "Use *care*.", "lease_minutes": 12}, format="json")
        assert response.status_code == 200, response.content
        assert (response.json()["guidelines_version"], response.json()["lease_minutes"]) == (1, 12)
        kinds = set(ProjectChange.objects.filter(project=project).values_list("kind", flat=True))
        assert {ProjectChange.Kind.SETTINGS, ProjectChange.Kind.GUIDELINES} <= kinds
        annotator_view = setup["annotator"].get(url(project)).json()
        assert (annotator_view["guidelines"], annotator_view["guidelines_version"]) == ("Use *care*.", 1)

    def test_a_refused_change_is_a_400_that_says_why(self, setup):
        project, (alice, bob) = setup["project"], setup["people"]
        item = project.items.order_by("random_key").first()
        label_item(item, [alice, bob], [True, False])
        assert item.state == workflow.NEEDS_TIEBREAK
        response = setup["researcher"].patch(url(project), {"labels_per_item": 3}, format="json")
        assert response.status_code == 400 and "tie-break" in str(response.json())

    def test_the_dataset_cannot_change(self, setup):
        from verifybench.models import Dataset

        other = Dataset.objects.create(name="another-set")
        response = setup["researcher"].patch(url(setup["project"]), {"dataset": other.name}, format="json")
        assert response.status_code == 400 and "cannot change" in str(response.json())

    def test_guidelines_given_at_creation_are_version_one(self, setup, corpus):
        response = setup["researcher"].post(
            "/api/projects/",
            {"dataset": corpus.name, "kind": "answer_type", "name": "typed", "guidelines": "First words."},
            format="json",
        )
        assert response.status_code == 202, response.content
        assert response.json()["project"]["guidelines_version"] == 1


def test_a_created_user_can_log_in_through_the_token_endpoint(setup, client):
    project = setup["project"]
    _, token = services.create_invitation(project, actor=setup["researcher_user"])
    services.sign_up_with_invitation(token, username="api-newbie", password="a-long-passphrase")
    response = client.post("/api/auth/token/", {"username": "api-newbie", "password": "a-long-passphrase"})
    assert response.status_code == 200
    assert User.objects.get(username="api-newbie").groups.filter(name="annotator").exists()


def test_adding_a_member_by_a_name_no_database_holds_is_a_400(setup):
    for body in ('{"username": "a\\u0000b"}', '{"username": "\\ud800x"}'):  # a NUL, an unpaired surrogate
        response = setup["researcher"].post(url(setup["project"], "members/"), body, content_type="application/json")
        assert response.status_code == 400 and "username" in str(response.json())  # the field is named
