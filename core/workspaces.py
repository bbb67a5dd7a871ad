"""Who may see and change what a workspace holds.

A researcher works in the workspaces they are a member of; an admin in all of them; annotators, graders and
adjudicators see only the projects they are members of, whatever workspace holds them. Every query of what
researchers see goes through `visible_ids` (None: everything), and every write through `can_research`.
"""

from __future__ import annotations

from django.db.models import Q

from . import roles
from .models import Workspace, WorkspaceMember


def visible_ids(user) -> set[int] | None:
    """The workspaces whose contents `user` sees as a researcher: None for every one (an admin), else a set."""
    if user is None or not getattr(user, "is_authenticated", False):
        return set()
    if roles.is_admin(user):
        return None
    if not roles.is_researcher(user):
        return set()
    cached = getattr(user, "_workspace_ids", None)
    if cached is None:
        cached = set(WorkspaceMember.objects.filter(user=user).values_list("workspace_id", flat=True))
        user._workspace_ids = cached
    return cached


def condition(user, path: str = "workspace") -> Q:
    """A filter for what `user` sees as a researcher, `path` leading from the model to its workspace."""
    ids = visible_ids(user)
    if ids is None:
        return Q()
    return Q(**{f"{path}__in": ids}) if ids else Q(pk__in=[])


def can_research(user, workspace_id: int | None) -> bool:
    """Whether `user` may see and change what the workspace holds."""
    ids = visible_ids(user)
    return ids is None or (workspace_id is not None and workspace_id in ids)


def workspaces_for(user):
    ids = visible_ids(user)
    workspaces = Workspace.objects.all()
    return workspaces if ids is None else workspaces.filter(pk__in=ids)


def default_for(user) -> Workspace | None:
    """Where something a user makes goes when they name no workspace: their only one (None when they have several
    or none, and must choose)."""
    available = list(workspaces_for(user)[:2])
    return available[0] if len(available) == 1 else None


DEFAULT_NAME = "Default"


def default_workspace() -> Workspace:
    """The workspace of a lab that has made no other: where the command line and anything that names no workspace
    put what they create."""
    return Workspace.objects.get_or_create(
        name=DEFAULT_NAME, defaults={"description": "Where datasets go when no other workspace is named."}
    )[0]


def default_workspace_id() -> int:
    return default_workspace().pk


def add_member(workspace: Workspace, user) -> WorkspaceMember:
    member, _ = WorkspaceMember.objects.get_or_create(workspace=workspace, user=user)
    user.__dict__.pop("_workspace_ids", None)
    return member


_OWNER_PATHS = ("dataset", "project", "question", "completion", "competition", "problem", "item", "run")


def owner_id(obj) -> int | None:
    """The workspace an object belongs to: its own, or that of the dataset (project, question...) it was made from.
    None for something shared by every workspace (a verifier configuration without one)."""
    for _ in range(6):
        if obj is None:
            return None
        if hasattr(obj, "workspace_id"):
            return obj.workspace_id
        obj = next((getattr(obj, path) for path in _OWNER_PATHS if getattr(obj, path, None) is not None), None)
    return None
