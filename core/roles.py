"""Roles are Django groups, created by a data migration."""

from __future__ import annotations

ANNOTATOR = "annotator"
ADJUDICATOR = "adjudicator"
RESEARCHER = "researcher"
ADMIN = "admin"
ALL_ROLES = (ANNOTATOR, ADJUDICATOR, RESEARCHER, ADMIN)


def role_names(user) -> set[str]:
    if user is None or not user.is_authenticated:
        return set()
    cached = getattr(user, "_role_names", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True))
        if user.is_superuser:
            cached.add(ADMIN)
        user._role_names = cached
    return cached


def has_role(user, *roles: str) -> bool:
    names = role_names(user)
    return ADMIN in names or any(role in names for role in roles)


def is_researcher(user) -> bool:
    return has_role(user, RESEARCHER)


def is_adjudicator(user) -> bool:
    return has_role(user, ADJUDICATOR)


def is_admin(user) -> bool:
    return ADMIN in role_names(user)
