"""Roles on one project stay apart: whoever labels a project's items (or holds one of its tasks) cannot become its
adjudicator, and an adjudicator cannot become one of its annotators, whichever way they try: an invitation, the
members page or the API. The refusal says why, and changes nothing."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation import services
from annotation.models import Invitation, ProjectMember
from core import roles

from .conftest import label_item

pytestmark = pytest.mark.django_db


def test_an_annotator_cannot_take_an_adjudicator_link_to_the_project_they_label(make_project, researcher):
    project, (alice, _), _ = make_project()
    alice.groups.add(*alice.groups.all())  # an annotator, who may also adjudicate elsewhere
    _, token = services.create_invitation(project, role="adjudicator", actor=researcher)
    with pytest.raises(services.RoleConflict, match="annotator cannot adjudicate the items they label"):
        services.accept_invitation(token, alice)
    assert not services.is_member(project, alice, ProjectMember.Role.ADJUDICATOR)
    assert not roles.is_adjudicator(type(alice).objects.get(pk=alice.pk))  # the role was not granted either
    assert services.open_invitation(token).status() == Invitation.Status.OPEN  # left for someone else


def test_someone_who_labeled_cannot_adjudicate_even_after_being_removed(make_project, researcher, make_user):
    project, (alice, bob), _ = make_project()
    label_item(project.items.order_by("random_key").first(), [alice], [True])
    services.remove_member(ProjectMember.objects.get(project=project, user=alice), actor=researcher)
    alice.groups.add(*make_user(roles.ADJUDICATOR).groups.all())
    with pytest.raises(services.RoleConflict, match="has labeled items"):
        services.add_member(project, alice, ProjectMember.Role.ADJUDICATOR, actor=researcher)
    services.next_task(project, bob)  # bob holds a task now
    services.remove_member(ProjectMember.objects.get(project=project, user=bob), actor=researcher)
    ProjectMember.objects.filter(project=project, user=bob).update(is_active=False)
    from annotation.models import Task

    Task.objects.filter(annotator=bob).update(expires_at="2999-01-01T00:00:00Z")
    with pytest.raises(services.RoleConflict, match="holds a task"):
        services.add_member(project, bob, ProjectMember.Role.ADJUDICATOR, actor=researcher)


def test_an_adjudicator_cannot_become_an_annotator_of_the_same_project(make_project, researcher):
    project, _, (judith,) = make_project(annotators=1, adjudicators=1)
    with pytest.raises(services.RoleConflict, match="cannot label its items blind"):
        services.add_member(project, judith, ProjectMember.Role.ANNOTATOR, actor=researcher)
    other, _, _ = make_project(annotators=0)
    services.add_member(other, judith, ProjectMember.Role.ANNOTATOR, actor=researcher)  # another project is fine


def test_the_members_page_and_the_api_refuse_with_the_reason(make_project, researcher, api_client_for, make_user):
    project, (alice, _), _ = make_project()
    alice.groups.add(*make_user(roles.ADJUDICATOR).groups.all())
    page = Client()
    page.force_login(researcher)
    response = page.post(
        reverse("project-member-add", args=[project.pk]), {"role": "adjudicator", "adjudicator-user": alice.pk}
    )
    assert response.status_code == 409 and "cannot adjudicate the items they label" in response.content.decode()
    api = api_client_for(researcher)
    answer = api.post(
        f"/api/projects/{project.pk}/members/", {"username": alice.username, "role": "adjudicator"}, format="json"
    )
    assert answer.status_code == 409 and "cannot adjudicate" in answer.json()["detail"]
    assert not ProjectMember.objects.filter(project=project, user=alice, role="adjudicator").exists()
