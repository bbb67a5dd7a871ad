"""DRF permissions built on the role groups in `core.roles`.

Annotators and adjudicators only ever see items through the annotation workflow, so the lab-wide
data endpoints (datasets, questions, references, completions, prior labels) are for researchers
and admins. Other apps reuse these classes for their own endpoints.
"""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission

from core import roles


def _authenticated(request) -> bool:
    user = request.user
    return bool(user and user.is_authenticated)


class IsResearcherOrAdmin(BasePermission):
    """Full access for researchers and admins; everyone else is refused."""

    message = "Only researchers and admins may use this endpoint."

    def has_permission(self, request, view) -> bool:
        return _authenticated(request) and roles.is_researcher(request.user)


class IsAdminRole(BasePermission):
    """Admins only (the admin group or a superuser)."""

    message = "Only admins may use this endpoint."

    def has_permission(self, request, view) -> bool:
        return _authenticated(request) and roles.is_admin(request.user)


class ReadOnlyOrResearcher(BasePermission):
    """Any signed-in user with a role may read; only researchers and admins may write."""

    message = "Only researchers and admins may change this."

    def has_permission(self, request, view) -> bool:
        if not _authenticated(request):
            return False
        if request.method in SAFE_METHODS:
            return bool(roles.role_names(request.user))
        return roles.is_researcher(request.user)


class HasAnyRole(BasePermission):
    """Base for "one of these roles" permissions; admins always pass. Subclass or use `any_role(...)`."""

    allowed_roles: tuple[str, ...] = ()

    def has_permission(self, request, view) -> bool:
        return _authenticated(request) and roles.has_role(request.user, *self.allowed_roles)


def any_role(*allowed: str) -> type[HasAnyRole]:
    """A permission class admitting users in any of `allowed` (and admins), e.g. `any_role(ANNOTATOR, ADJUDICATOR)`."""
    unknown = set(allowed) - set(roles.ALL_ROLES)
    if unknown:
        raise ValueError(f"unknown roles: {', '.join(sorted(unknown))}")
    return type(
        "HasAnyRole_" + "_".join(allowed),
        (HasAnyRole,),
        {"allowed_roles": tuple(allowed), "message": f"This endpoint is for: {', '.join(allowed + (roles.ADMIN,))}."},
    )


class InResearchersWorkspace(BasePermission):
    """An object (a dataset, or anything made from one) may be seen and changed only by researchers of its
    workspace, and admins. Querysets already leave out other workspaces' objects; this guards an object reached
    another way (a project the researcher is a member of as an annotator, say)."""

    message = "This belongs to a workspace you are not a member of."

    def has_object_permission(self, request, view, obj) -> bool:
        from core import workspaces

        return workspaces.can_research(request.user, workspaces.owner_id(obj))


class SharedOrOwnWorkspace(BasePermission):
    """Something a workspace keeps, or shares with all (no workspace): everyone who may see it reads it; only the
    researchers of its workspace change it, and only admins change a shared one."""

    message = "Only the researchers of its workspace (or admins, for a shared one) may change this."

    def has_object_permission(self, request, view, obj) -> bool:
        if request.method in SAFE_METHODS:
            return True
        from core import workspaces

        if obj.workspace_id is None:
            return roles.is_admin(request.user)
        return workspaces.can_research(request.user, obj.workspace_id)
