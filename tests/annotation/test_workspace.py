"""A project's own workspace through the services: settings and how they reach the items, guidelines and their
versions, members that are removed without losing their labels, one-time invitations, the change log."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.utils import timezone

from annotation import selectors, services, workflow
from annotation.models import (
    GuidelinesVersion,
    Invitation,
    Item,
    Label,
    ProjectChange,
    ProjectMember,
    Task,
)
from core import roles

from .conftest import build_dataset, label_item, only_item_project


def changes(project, kind=None):
    rows = ProjectChange.objects.filter(project=project).order_by("id")
    if kind:
        rows = rows.filter(kind=kind)
    return list(rows)


def member(project, user, role=ProjectMember.Role.ANNOTATOR):
    return ProjectMember.objects.get(project=project, user=user, role=role)


def item_waiting_for_tiebreak(make_project, annotators=3, **settings):
    project, people, _ = only_item_project(make_project, annotators, **settings)
    item = project.items.get()
    label_item(item, people[:2], [True, False])
    assert item.state == workflow.NEEDS_TIEBREAK
    return project, people, item


class TestSettings:
    def test_a_change_is_saved_and_logged_with_who_and_what(self, make_project, researcher):
        project, _, _ = make_project(annotators=0)
        updated = services.update_project(
            project,
            actor=researcher,
            name="Round two",
            lease_minutes=45,
            show_model_names=True,
            verdict_visibility="everyone",
        )
        project.refresh_from_db()
        assert (project.name, project.lease_minutes, project.show_model_names, project.verdict_visibility) == (
            "Round two",
            45,
            True,
            "everyone",
        )
        assert updated.name == "Round two"
        [entry] = changes(project)
        assert entry.actor == researcher and entry.kind == ProjectChange.Kind.SETTINGS
        assert entry.details["changes"]["lease_minutes"] == [30, 45]
        assert "lease minutes: 30 → 45" in entry.summary and "show model names: no → yes" in entry.summary

    def test_saving_the_same_values_logs_nothing(self, make_project, researcher):
        project, _, _ = make_project(annotators=0)
        services.update_project(project, actor=researcher, name=project.name, lease_minutes=project.lease_minutes)
        assert changes(project) == []

    @pytest.mark.parametrize(
        "values",
        [
            {"labels_per_item": 0},
            {"gold_rate": 1.5},
            {"lease_minutes": 0},
            {"verdict_visibility": "sometimes"},
            {"name": "  "},
            {"kind": "answer_type"},
        ],
    )
    def test_bad_values_are_refused_and_change_nothing(self, make_project, researcher, values):
        project, _, _ = make_project(annotators=0)
        with pytest.raises(services.InvalidSubmission):
            services.update_project(project, actor=researcher, **values)
        assert changes(project) == []

    def test_the_change_log_is_append_only(self, make_project, researcher):
        project, _, _ = make_project(annotators=0)
        services.update_project(project, actor=researcher, lease_minutes=5)
        entry = changes(project)[0]
        with pytest.raises(ValidationError):
            entry.save()
        with pytest.raises(ValidationError):
            entry.delete()
        with pytest.raises(ValidationError):
            ProjectChange.objects.filter(project=project).update(summary="rewritten")


class TestLabelsPerItem:
    def test_raising_it_reaches_the_items_in_their_first_round_only(self, make_project, researcher):
        project, people, _ = make_project(annotators=3)
        resolved = project.items.order_by("random_key").first()
        label_item(resolved, people[:2], [True, True])
        started = services.next_task(project, people[2])  # in progress: a live lease, no label yet
        services.update_project(project, actor=researcher, labels_per_item=3)
        resolved.refresh_from_db()
        assert (resolved.state, resolved.required_labels) == (workflow.RESOLVED, 2)
        assert set(
            Item.objects.filter(project=project).exclude(pk=resolved.pk).values_list("required_labels", flat=True)
        ) == {3}
        assert started.item.pk != resolved.pk

    def test_an_item_then_waits_for_the_new_number_of_labels(self, make_project, researcher):
        project, people, _ = only_item_project(make_project, 3)
        item = project.items.get()
        label_item(item, people[:1], [True])
        services.update_project(project, actor=researcher, labels_per_item=3)
        label_item(item, people[1:2], [True])
        assert (item.state, item.required_labels) == (workflow.IN_PROGRESS, 3)
        label_item(item, people[2:], [True])
        assert (item.state, item.resolution, item.label_count) == (workflow.RESOLVED, workflow.BY_AGREEMENT, 3)

    def test_it_cannot_change_while_an_item_waits_for_a_tiebreak(self, make_project, researcher):
        project, _, item = item_waiting_for_tiebreak(make_project)
        for value in (1, 3):
            with pytest.raises(services.SettingRefused, match="1 item waits for a tie-break"):
                services.update_project(project, actor=researcher, labels_per_item=value, lease_minutes=9)
        project.refresh_from_db()
        item.refresh_from_db()
        assert (project.labels_per_item, project.lease_minutes, item.required_labels) == (2, 30, 3)
        assert changes(project, ProjectChange.Kind.SETTINGS) == []

    def test_lowering_it_is_refused_once_an_item_has_that_many_labels(self, make_project, researcher):
        project, people, _ = only_item_project(make_project, 3, labels_per_item=3)
        item = project.items.get()
        label_item(item, people[:1], [True])
        with pytest.raises(services.SettingRefused, match="cannot go down to 1"):
            services.update_project(project, actor=researcher, labels_per_item=1)
        services.update_project(project, actor=researcher, labels_per_item=2)
        item.refresh_from_db()
        assert item.required_labels == 2
        label_item(item, people[1:2], [True])
        assert (item.state, item.label_count) == (workflow.RESOLVED, 2)

    def test_lowering_it_is_refused_when_live_leases_would_overfill_an_item(self, make_project, researcher):
        project, people, _ = only_item_project(make_project, 3, labels_per_item=3)
        for person in people[:2]:
            services.next_task(project, person)
        with pytest.raises(services.SettingRefused, match="live leases"):
            services.update_project(project, actor=researcher, labels_per_item=1)
        services.update_project(project, actor=researcher, labels_per_item=2)
        item = project.items.get()
        assert item.required_labels == 2


class TestTiebreakAnnotators:
    def test_raising_it_asks_more_of_the_items_waiting_for_a_tiebreak(self, make_project, researcher):
        project, people, item = item_waiting_for_tiebreak(make_project, annotators=4)
        services.update_project(project, actor=researcher, tiebreak_annotators=2)
        item.refresh_from_db()
        assert item.required_labels == 4
        label_item(item, people[2:3], [True])
        assert (item.state, item.required_labels) == (workflow.NEEDS_TIEBREAK, 4)
        label_item(item, people[3:], [True])
        assert (item.state, item.resolution, item.final_value) == (workflow.RESOLVED, workflow.BY_MAJORITY, True)

    def test_lowering_it_to_zero_is_refused_while_items_wait_for_a_tiebreak(self, make_project, researcher):
        project, _, item = item_waiting_for_tiebreak(make_project)
        with pytest.raises(services.SettingRefused, match="cannot go down to 0"):
            services.update_project(project, actor=researcher, tiebreak_annotators=0)
        item.refresh_from_db()
        assert (item.state, item.required_labels) == (workflow.NEEDS_TIEBREAK, 3)

    def test_lowering_it_applies_when_no_item_is_past_the_new_total(self, make_project, researcher):
        project, people, item = item_waiting_for_tiebreak(make_project, tiebreak_annotators=3)
        assert item.required_labels == 5
        services.update_project(project, actor=researcher, tiebreak_annotators=1)
        item.refresh_from_db()
        assert item.required_labels == 3
        label_item(item, people[2:], [True])
        assert (item.state, item.resolution) == (workflow.RESOLVED, workflow.BY_MAJORITY)

    def test_the_threshold_and_display_settings_change_at_any_time(self, make_project, researcher):
        project, _, _ = item_waiting_for_tiebreak(make_project)
        services.update_project(
            project,
            actor=researcher,
            agreement_threshold=0.5,
            lease_minutes=10,
            verdict_visibility="nobody",
            is_active=False,
        )
        project.refresh_from_db()
        assert (project.agreement_threshold, project.is_active) == (0.5, False)


class TestGuidelines:
    def test_each_changed_text_is_a_new_version_and_every_version_is_kept(self, make_project, researcher):
        project, _, _ = make_project(annotators=0)
        services.update_project(project, actor=researcher, guidelines="Mark **unsuitable** when unreadable.")
        services.update_project(project, actor=researcher, guidelines="Mark **unsuitable** when unreadable.  \r\n")
        services.update_project(project, actor=researcher, guidelines="Check $x^2$ forms too.")
        project.refresh_from_db()
        assert (project.guidelines_version, project.guidelines) == (2, "Check $x^2$ forms too.")
        versions = list(
            GuidelinesVersion.objects.filter(project=project)
            .order_by("version")
            .values_list("version", "text", "created_by")
        )
        assert versions == [
            (1, "Mark **unsuitable** when unreadable.", researcher.pk),
            (2, "Check $x^2$ forms too.", researcher.pk),
        ]
        assert [entry.summary for entry in changes(project, ProjectChange.Kind.GUIDELINES)] == [
            "guidelines version 1",
            "guidelines version 2",
        ]
        with pytest.raises(ValidationError):
            GuidelinesVersion.objects.filter(project=project).update(text="")

    def test_members_see_each_new_version_until_they_acknowledge_it(self, make_project, researcher):
        project, (alice, bob), _ = make_project()
        assert selectors.guidelines_for(project, alice)["unseen"] is False  # nothing written yet
        project = services.update_project(project, actor=researcher, guidelines="Version one.")
        assert selectors.guidelines_for(project, alice) | {"text": None} == {
            "version": 1,
            "text": None,
            "description": "",
            "seen_version": 0,
            "unseen": True,
        }
        assert services.guidelines_seen(project, alice, 1) == 1
        assert selectors.guidelines_for(project, alice)["unseen"] is False
        assert selectors.guidelines_for(project, bob)["unseen"] is True
        assert services.guidelines_seen(project, alice, 99) == 1  # never beyond the current version
        project = services.update_project(project, actor=researcher, guidelines="Version two.")
        assert selectors.guidelines_for(project, alice)["unseen"] is True
        services.guidelines_seen(project, alice, 2)
        services.guidelines_seen(project, alice, 1)  # a stale page never moves it back
        assert member(project, alice).guidelines_seen_version == 2


class TestRemoval:
    def test_a_removed_annotator_keeps_their_labels_and_gets_no_new_task(self, make_project, researcher):
        project, (alice, bob), _ = make_project()
        item = project.items.order_by("random_key").first()
        label_item(item, [alice], [True])
        held = services.next_task(project, alice)  # a live lease on a second item
        services.remove_member(member(project, alice), actor=researcher)

        removed = member(project, alice)
        assert (removed.is_active, removed.removed_at is not None) == (False, True)
        assert Label.objects.filter(annotator=alice).count() == 1
        held.refresh_from_db()
        assert held.expires_at <= timezone.now()
        with pytest.raises(services.NotAllowed):
            services.next_task(project, alice)
        with pytest.raises(services.NotAllowed, match="no longer an annotator"):
            services.submit_label(held, alice, value=True)
        assert not services.is_member(project, alice, ProjectMember.Role.ANNOTATOR)
        assert project not in selectors.projects_for(alice)

        label_item(item, [bob], [True])  # the removed annotator's label still counts towards the decision
        assert (item.state, item.resolution, item.label_count) == (workflow.RESOLVED, workflow.BY_AGREEMENT, 2)
        assert selectors.annotator_table(project)[0]["labels"] == 1
        [entry] = changes(project, ProjectChange.Kind.MEMBER_REMOVED)
        assert entry.actor == researcher and "1 live lease ended" in entry.summary

    def test_the_ended_lease_goes_back_to_the_pool(self, make_project, researcher):
        project, (alice, bob), _ = only_item_project(make_project, 2, labels_per_item=1)
        held = services.next_task(project, alice)
        assert services.next_task(project, bob) is None  # the only slot is held
        services.remove_member(member(project, alice), actor=researcher)
        assert services.next_task(project, bob).item_id == held.item_id

    def test_removing_twice_is_refused_and_adding_again_reactivates(self, make_project, researcher):
        project, (alice, _), _ = make_project()
        services.remove_member(member(project, alice), actor=researcher)
        with pytest.raises(services.WorkflowError, match="already removed"):
            services.remove_member(member(project, alice), actor=researcher)
        services.add_member(project, alice, ProjectMember.Role.ANNOTATOR, actor=researcher)
        assert member(project, alice).is_active and member(project, alice).removed_at is None
        assert ProjectMember.objects.filter(project=project, user=alice).count() == 1
        assert services.next_task(project, alice) is not None
        assert changes(project, ProjectChange.Kind.MEMBER_ADDED)[-1].summary.endswith("added again as annotator")

    def test_a_removed_annotator_cannot_change_a_label(self, make_project, researcher):
        project, (alice, _), _ = make_project()
        task = services.next_task(project, alice)
        services.submit_label(task, alice, value=True)
        services.remove_member(member(project, alice), actor=researcher)
        assert services.submit_label(task, alice, value=True).created is False  # a retry still answers
        with pytest.raises(services.NotAllowed):
            services.submit_label(task, alice, value=False)


class TestInvitations:
    def test_a_link_makes_a_new_account_a_member_with_the_role_once(self, make_project, researcher):
        project, _, _ = make_project(annotators=0)
        invitation, token = services.create_invitation(project, role="annotator", actor=researcher)
        assert invitation.token_hash != token and token not in invitation.token_hash
        assert invitation.expires_at - timezone.now() > timedelta(days=6, hours=23)
        user = services.sign_up_with_invitation(token, username="newbie", password="a-long-passphrase")
        assert user.check_password("a-long-passphrase")
        assert roles.role_names(User.objects.get(pk=user.pk)) == {roles.ANNOTATOR}
        assert services.is_member(project, user, ProjectMember.Role.ANNOTATOR)
        assert services.next_task(project, user) is not None
        invitation.refresh_from_db()
        assert (invitation.used_by, invitation.status()) == (user, Invitation.Status.USED)
        with pytest.raises(services.InvitationUnusable, match="already been used"):
            services.sign_up_with_invitation(token, username="second", password="a-long-passphrase")
        with pytest.raises(services.InvitationUnusable, match="already been used"):
            services.accept_invitation(token, researcher)
        assert not User.objects.filter(username="second").exists()
        assert [entry.kind for entry in changes(project)] == [
            ProjectChange.Kind.INVITATION_CREATED,
            ProjectChange.Kind.MEMBER_ADDED,
            ProjectChange.Kind.INVITATION_ACCEPTED,
        ]

    def test_expired_revoked_and_wrong_tokens_are_refused_with_a_reason(self, make_project, researcher):
        project, _, _ = make_project(annotators=0)
        expired, expired_token = services.create_invitation(project, actor=researcher)
        Invitation.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        revoked, revoked_token = services.create_invitation(project, actor=researcher)
        services.revoke_invitation(revoked, actor=researcher)
        for token, reason in (
            (expired_token, "expired"),
            (revoked_token, "withdrawn"),
            ("not-a-token", "not valid"),
            ("", "not valid"),
            (expired_token[:-1], "not valid"),
        ):
            with pytest.raises(services.InvitationUnusable, match=reason):
                services.sign_up_with_invitation(token, username="late", password="a-long-passphrase")
            with pytest.raises(services.InvitationUnusable, match=reason) as refused:
                services.open_invitation(token)
            assert project.name not in str(refused.value)
        assert not User.objects.filter(username="late").exists()
        with pytest.raises(services.WorkflowError, match="only an open one"):
            services.revoke_invitation(revoked, actor=researcher)

    def test_a_signed_in_user_accepts_with_their_account_and_gets_the_role(self, make_project, researcher, make_user):
        project, _, _ = make_project(annotators=0)
        judge = make_user()  # no role yet
        _, token = services.create_invitation(project, role="adjudicator", actor=researcher)
        membership = services.accept_invitation(token, judge)
        assert membership.role == ProjectMember.Role.ADJUDICATOR
        assert roles.is_adjudicator(User.objects.get(pk=judge.pk))
        assert selectors.can_adjudicate(project, User.objects.get(pk=judge.pk))

    def test_an_existing_member_leaves_the_link_for_whom_it_was_meant(self, make_project, researcher):
        project, (alice, _), _ = make_project()
        _, token = services.create_invitation(project, role="annotator", actor=researcher)
        with pytest.raises(services.AlreadyMember, match="already an annotator"):
            services.accept_invitation(token, alice)
        assert services.open_invitation(token).status() == Invitation.Status.OPEN
        services.remove_member(member(project, alice), actor=researcher)
        services.accept_invitation(token, alice)  # a removed member comes back through a link
        assert member(project, alice).is_active

    def test_passwords_must_pass_the_validators_and_usernames_be_free(self, make_project, researcher, make_user):
        project, _, _ = make_project(annotators=0)
        make_user(username="taken")
        _, token = services.create_invitation(project, actor=researcher)
        with pytest.raises(services.InvalidSubmission, match="too short"):
            services.sign_up_with_invitation(token, username="fresh", password="short")
        with pytest.raises(services.InvalidSubmission, match="taken"):
            services.sign_up_with_invitation(token, username="TAKEN", password="a-long-passphrase")
        assert services.open_invitation(token).status() == Invitation.Status.OPEN

    @pytest.mark.parametrize("arguments", [{"role": "researcher"}, {"days": 0}, {"days": 365}])
    def test_only_annotator_and_adjudicator_links_of_sensible_length(self, make_project, researcher, arguments):
        project, _, _ = make_project(annotators=0)
        with pytest.raises(services.InvalidSubmission):
            services.create_invitation(project, actor=researcher, **arguments)


class TestAccounts:
    def test_a_created_account_is_a_member_and_chooses_its_password_through_its_link(self, make_project, researcher):
        project, _, _ = make_project(annotators=0)
        user, invitation, token = services.create_account(
            project, username="carol", email="c@example.org", actor=researcher
        )
        assert not user.has_usable_password() and user.email == "c@example.org"
        assert services.is_member(project, user, ProjectMember.Role.ANNOTATOR)
        assert invitation.account == user
        with pytest.raises(services.NotAllowed, match="existing account"):
            services.sign_up_with_invitation(token, username="other", password="a-long-passphrase")
        with pytest.raises(services.NotAllowed, match="for the account carol"):
            services.accept_invitation(token, researcher)
        services.set_password_with_invitation(token, password="a-long-passphrase")
        assert User.objects.get(pk=user.pk).check_password("a-long-passphrase")
        with pytest.raises(services.InvitationUnusable):
            services.set_password_with_invitation(token, password="another-long-one")
        assert [entry.kind for entry in changes(project)] == [
            ProjectChange.Kind.ACCOUNT_CREATED,
            ProjectChange.Kind.MEMBER_ADDED,
            ProjectChange.Kind.INVITATION_CREATED,
            ProjectChange.Kind.INVITATION_ACCEPTED,
        ]

    def test_an_account_name_in_use_is_refused(self, make_project, researcher, make_user):
        project, _, _ = make_project(annotators=0)
        make_user(username="dave")
        with pytest.raises(services.InvalidSubmission, match="taken"):
            services.create_account(project, username="Dave", actor=researcher)


def test_the_member_table_counts_labels_and_leases(make_project, researcher):
    dataset = build_dataset(questions=2, completions_per_question=1)
    project, (alice, bob), _ = make_project(dataset=dataset)
    label_item(project.items.order_by("random_key").first(), [alice], [True])
    services.next_task(project, bob)
    services.remove_member(member(project, bob), actor=researcher)
    rows = {row["member"].user.username: row for row in selectors.member_rows(project)}
    assert (rows[alice.username]["labels"], rows[alice.username]["member"].is_active) == (1, True)
    assert (rows[bob.username]["labels"], rows[bob.username]["live_leases"]) == (0, 0)
    assert [row["member"].is_active for row in selectors.member_rows(project)] == [True, False]
    assert Task.objects.filter(annotator=bob).count() == 1
