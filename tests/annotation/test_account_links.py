"""One-time links bound to an account die with any change to the account: a set-password link can never take over
an account that has since chosen a password, been given a role or flag, or joined another project."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.urls import reverse

from annotation import services
from annotation.models import Invitation
from core import roles

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-passphrase-1"
ADMIN_PASSWORD = "the-admins-own-passphrase"


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def created_account(make_project, researcher):
    project, _, _ = make_project(annotators=0)
    user, invitation, token = services.create_account(project, username="carol", actor=researcher)
    return project, user, invitation, token


def promote_to_admin(user):
    user.groups.add(Group.objects.get_or_create(name=roles.ADMIN)[0])


def set_password_elsewhere(user):
    user.set_password(ADMIN_PASSWORD)
    user.save()


CHANGES = {
    "password set elsewhere": set_password_elsewhere,
    "promoted to admin": promote_to_admin,
    "given the researcher role": lambda user: user.groups.add(Group.objects.get_or_create(name=roles.RESEARCHER)[0]),
    "role taken away": lambda user: user.groups.clear(),
    "made staff": lambda user: User.objects.filter(pk=user.pk).update(is_staff=True),  # no signal: checked on use
    "made superuser": lambda user: (setattr(user, "is_superuser", True), user.save()),
    "given a permission": lambda user: user.user_permissions.add(Permission.objects.first()),
    "deactivated": lambda user: (setattr(user, "is_active", False), user.save()),
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_any_change_to_the_account_kills_its_link(created_account, change):
    _, user, invitation, token = created_account
    change(User.objects.get(pk=user.pk))
    for attempt in (
        lambda: services.open_invitation(token),
        lambda: services.set_password_with_invitation(token, password=PASSWORD),
    ):
        with pytest.raises(services.InvitationUnusable, match="account has changed"):
            attempt()
    assert not User.objects.get(pk=user.pk).check_password(PASSWORD)


def test_a_change_made_through_the_models_revokes_the_link_in_the_members_list(created_account):
    _, user, invitation, _ = created_account
    promote_to_admin(user)
    invitation.refresh_from_db()
    assert invitation.status() == Invitation.Status.REVOKED


def test_joining_another_project_kills_the_link(created_account, make_project, researcher):
    _, user, invitation, token = created_account
    other, _, _ = make_project(annotators=0)
    services.add_member(other, user, "annotator", actor=researcher)
    with pytest.raises(services.InvitationUnusable, match="account has changed"):
        services.set_password_with_invitation(token, password=PASSWORD)
    invitation.refresh_from_db()
    assert invitation.status() == Invitation.Status.REVOKED


def test_the_link_works_once_for_the_untouched_account_and_never_again(created_account):
    project, user, invitation, token = created_account
    services.set_password_with_invitation(token, password=PASSWORD)
    assert User.objects.get(pk=user.pk).check_password(PASSWORD)
    invitation.refresh_from_db()
    assert invitation.status() == Invitation.Status.USED
    with pytest.raises(services.InvitationUnusable, match="already been used"):
        services.set_password_with_invitation(token, password="another-long-passphrase")


def test_a_link_for_an_account_with_more_than_the_role_is_refused_at_creation(make_project, researcher, make_user):
    project, _, _ = make_project(annotators=0)
    admin = make_user(roles.ADMIN)
    with pytest.raises(services.InvalidSubmission, match="first password"):
        services.create_invitation(project, actor=researcher, account=admin)


def test_an_invitation_without_an_account_still_grants_only_its_role(make_project, researcher, make_user):
    project, _, _ = make_project(annotators=0)
    _, token = services.create_invitation(project, role="annotator", actor=researcher)
    newcomer = services.sign_up_with_invitation(token, username="newbie", password=PASSWORD)
    assert roles.role_names(User.objects.get(pk=newcomer.pk)) == {roles.ANNOTATOR}


def test_the_reported_takeover_fails_through_the_pages(client, created_account):
    """The researcher who created the account keeps its link; an admin later promotes the account, which meanwhile
    chose a password some other way. The link no longer sets a password, and the account's own password still
    works."""
    project, user, invitation, token = created_account
    set_password_elsewhere(user)
    promote_to_admin(user)
    link = reverse("invitation", args=[token])
    page = client.get(link)
    assert page.status_code == 410 and "account has changed" in page.content.decode()
    taken = client.post(link, {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert taken.status_code == 410
    assert User.objects.get(pk=user.pk).check_password(ADMIN_PASSWORD)
    assert not User.objects.get(pk=user.pk).check_password(PASSWORD)
    assert client.get("/api/grading/judge-hosts/").status_code in (401, 403)


def test_the_migration_computes_the_digest_as_the_service_does(created_account):
    import importlib

    migration = importlib.import_module("annotation.migrations.0013_invitation_account_state")
    _, user, invitation, _ = created_account
    values = {
        "password": user.password,
        "is_active": True,
        "is_staff": False,
        "is_superuser": False,
        "group_ids": [7, 3],
        "permission_ids": [],
        "memberships": [(2, "annotator"), (1, "adjudicator")],
    }
    assert migration.account_digest(**values) == services.members.account_digest(**values)
    assert services.members.account_state(user) == invitation.account_state
