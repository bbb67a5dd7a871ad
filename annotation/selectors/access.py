"""Who may see which project, its members, invitations, guidelines and change log."""

from __future__ import annotations

from django.db.models import Count, Q
from django.utils import timezone

from core import roles, workspaces

from .. import workflow
from ..models import (
    AnnotationProject,
    GuidelinesVersion,
    Invitation,
    Item,
    Label,
    ProjectChange,
    ProjectMember,
    Task,
)


def projects_for(user):
    """Admins see every project, researchers those of their workspaces, and everyone the projects they are members
    of."""
    projects = AnnotationProject.objects.select_related("dataset")
    if roles.is_admin(user):
        return projects
    membership = Q(pk__in=ProjectMember.objects.filter(user=user, is_active=True).values("project_id"))
    if roles.is_researcher(user):
        return projects.filter(workspaces.condition(user, "dataset__workspace") | membership)
    return projects.filter(membership)


def researches(project: AnnotationProject, user) -> bool:
    """Whether `user` is a researcher of the project's workspace (or an admin): they configure and review it."""
    return roles.is_researcher(user) and workspaces.can_research(user, project.dataset.workspace_id)


def visible_project(user, project_id: int) -> AnnotationProject | None:
    return projects_for(user).filter(pk=project_id).first()


def member_roles(project: AnnotationProject, user) -> set[str]:
    return set(ProjectMember.objects.filter(project=project, user=user, is_active=True).values_list("role", flat=True))


def can_adjudicate(project: AnnotationProject, user) -> bool:
    if roles.is_admin(user):
        return True
    return roles.is_adjudicator(user) and (
        ProjectMember.Role.ADJUDICATOR in member_roles(project, user) or researches(project, user)
    )


def can_review(project: AnnotationProject, user) -> bool:
    """The researchers of the project's workspace and its adjudicators see all labels, history and verdicts."""
    return researches(project, user) or can_adjudicate(project, user)


def guidelines_for(project: AnnotationProject, user) -> dict:
    """The guidelines as a member sees them: the current version and whether it is newer than the last one they
    acknowledged (then the page opens it for them)."""
    seen = (
        ProjectMember.objects.filter(project=project, user=user, is_active=True)
        .order_by("-guidelines_seen_version")
        .values_list("guidelines_seen_version", flat=True)
        .first()
    ) or 0
    return {
        "version": project.guidelines_version,
        "text": project.guidelines,
        "description": project.description,
        "seen_version": seen,
        "unseen": bool(project.guidelines) and project.guidelines_version > seen,
    }


def guidelines_history(project: AnnotationProject, limit: int = 20):
    return GuidelinesVersion.objects.filter(project=project).select_related("created_by").order_by("-version")[:limit]


def recent_changes(project: AnnotationProject, limit: int = 30, kinds=None):
    rows = ProjectChange.objects.filter(project=project)
    if kinds is not None:
        rows = rows.filter(kind__in=kinds)
    return rows.select_related("actor").order_by("-created_at", "-id")[:limit]


def label_counts(project: AnnotationProject) -> dict[int, int]:
    """{annotator id: labels they gave in the project}, gold items left out."""
    return dict(
        Label.objects.filter(item__project=project, item__is_gold=False)
        .values_list("annotator_id")
        .annotate(n=Count("pk"))
        .order_by()
    )


def member_rows(project: AnnotationProject) -> list[dict]:
    """Every membership of the project, active ones first, with the labels each person gave in it (gold
    excluded) and the live leases they hold."""
    now = timezone.now()
    labels_given = label_counts(project)
    lease_counts = dict(
        Task.objects.filter(item__project=project, status=Task.Status.LEASED, expires_at__gt=now)
        .values_list("annotator_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    memberships = (
        ProjectMember.objects.filter(project=project)
        .select_related("user")
        .order_by("-is_active", "role", "user__username")
    )
    return [
        {
            "member": member,
            "labels": labels_given.get(member.user_id, 0),
            "live_leases": lease_counts.get(member.user_id, 0),
            "password_set": member.user.has_usable_password(),
            "guidelines_current": member.guidelines_seen_version >= project.guidelines_version,
        }
        for member in memberships
    ]


def active_members(project: AnnotationProject):
    return (
        ProjectMember.objects.filter(project=project, is_active=True)
        .select_related("user")
        .order_by("role", "user__username")
    )


def invitations(project: AnnotationProject, limit: int = 50) -> list[dict]:
    now = timezone.now()
    rows = (
        Invitation.objects.filter(project=project)
        .select_related("created_by", "used_by", "account", "revoked_by")
        .order_by("-created_at", "-id")[:limit]
    )
    return [{"invitation": invitation, "status": invitation.status(now)} for invitation in rows]


def policy_situation(project: AnnotationProject) -> dict:
    """What decides whether labels per item and tie-break annotators can change now (see
    services.update_project): items waiting for a tie-break, and the most labels any first-round item has."""
    open_items = Item.objects.filter(project=project, is_gold=False, state__in=workflow.OPEN_STATES)
    counts = open_items.aggregate(
        waiting_tiebreak=Count("pk", filter=Q(state=workflow.NEEDS_TIEBREAK)),
        first_round_started=Count(
            "pk", filter=Q(state__in=[workflow.PENDING, workflow.IN_PROGRESS], label_count__gt=0)
        ),
    )
    return counts
