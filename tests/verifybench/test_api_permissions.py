"""The reusable role permissions, checked directly against requests from each role."""

import pytest
from django.contrib.auth.models import AnonymousUser
from rest_framework.test import APIRequestFactory

from core import roles
from core.permissions import IsAdminRole, IsResearcherOrAdmin, ReadOnlyOrResearcher, any_role

factory = APIRequestFactory()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def allowed(permission_class, user, method="get"):
    request = getattr(factory, method)("/anything/")
    request.user = user
    return permission_class().has_permission(request, view=None)


@pytest.fixture
def users(make_user, db):
    superuser = make_user(None, username="root")
    superuser.is_superuser = True
    superuser.save()
    return {
        "anonymous": AnonymousUser(),
        "no role": make_user(None),
        roles.ANNOTATOR: make_user(roles.ANNOTATOR),
        roles.ADJUDICATOR: make_user(roles.ADJUDICATOR),
        roles.RESEARCHER: make_user(roles.RESEARCHER),
        roles.ADMIN: make_user(roles.ADMIN),
        "superuser": superuser,
    }


def who_passes(users, permission_class, method="get"):
    return {name for name, user in users.items() if allowed(permission_class, user, method)}


def test_is_researcher_or_admin(users):
    expected = {roles.RESEARCHER, roles.ADMIN, "superuser"}
    assert who_passes(users, IsResearcherOrAdmin) == expected
    assert who_passes(users, IsResearcherOrAdmin, "post") == expected


def test_is_admin_role(users):
    assert who_passes(users, IsAdminRole) == {roles.ADMIN, "superuser"}


def test_read_only_or_researcher(users):
    assert who_passes(users, ReadOnlyOrResearcher) == {
        roles.ANNOTATOR,
        roles.ADJUDICATOR,
        roles.RESEARCHER,
        roles.ADMIN,
        "superuser",
    }
    assert who_passes(users, ReadOnlyOrResearcher, "post") == {roles.RESEARCHER, roles.ADMIN, "superuser"}


def test_any_role(users):
    annotators_or_adjudicators = any_role(roles.ANNOTATOR, roles.ADJUDICATOR)
    assert who_passes(users, annotators_or_adjudicators) == {
        roles.ANNOTATOR,
        roles.ADJUDICATOR,
        roles.ADMIN,
        "superuser",
    }
    assert who_passes(users, any_role(roles.ADJUDICATOR)) == {roles.ADJUDICATOR, roles.ADMIN, "superuser"}


def test_any_role_rejects_unknown_roles():
    with pytest.raises(ValueError, match="unknown roles: chief"):
        any_role("chief")
