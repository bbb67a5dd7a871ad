"""Members and invitations: invitation links, accounts made from them, removing members."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from core import roles
from core.accounts import username_refusal
from core.identity import display_username

from ..models import (
    AnnotationProject,
    Invitation,
    ProjectChange,
    ProjectMember,
    Task,
)
from .errors import InvalidSubmission, NotAllowed, WorkflowError
from .project_settings import log_change
from .projects import add_member, is_member

INVITATION_DAYS = 7


class InvitationUnusable(WorkflowError):
    """The link is unknown, expired, used or revoked; the message says which, and nothing about the project."""

    status_code = 410


class UnknownInvitation(InvitationUnusable):
    status_code = 404


ACCOUNT_CHANGED = (
    "This link was made for choosing the account's first password, and the account has changed since (its password, "
    "its roles or its memberships). Ask the person who created the account for a new link."
)


class AlreadyMember(WorkflowError):
    """Accepting would change nothing: the link stays usable for the person it was meant for."""


def remove_member(member: ProjectMember, *, actor) -> ProjectMember:
    """End a membership without deleting anything: the member's labels stay and count, their live leases end at
    once (so they get no new task and the items go back to the pool), and the row is kept for the history."""
    with transaction.atomic():
        member = ProjectMember.objects.select_for_update().select_related("project", "user").get(pk=member.pk)
        if not member.is_active:
            raise WorkflowError(f"{member.user.get_username()} was already removed from this project")
        now = timezone.now()
        member.is_active, member.removed_at = False, now
        member.save(update_fields=["is_active", "removed_at"])
        ended = 0
        if member.role == ProjectMember.Role.ANNOTATOR:
            ended = Task.objects.filter(
                item__project=member.project, annotator=member.user, status=Task.Status.LEASED, expires_at__gt=now
            ).update(expires_at=now)
        log_change(
            member.project,
            actor,
            ProjectChange.Kind.MEMBER_REMOVED,
            f"{member.user.get_username()} removed as {member.get_role_display().lower()}"
            + (f"; {ended} live lease{'s' if ended != 1 else ''} ended" if ended else ""),
            {"username": member.user.get_username(), "role": member.role, "leases_ended": ended},
        )
    return member


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def account_digest(
    *,
    password: str,
    is_active: bool,
    is_staff: bool,
    is_superuser: bool,
    group_ids: list[int],
    permission_ids: list[int],
    memberships: list[tuple[int, str]],
) -> str:
    """A digest of everything that makes an account worth taking over; a link bound to the account is good only
    while the digest is the one it was made with."""
    parts = [
        password,
        f"{int(is_active)}{int(is_staff)}{int(is_superuser)}",
        ",".join(map(str, sorted(group_ids))),
        ",".join(map(str, sorted(permission_ids))),
        ",".join(f"{project}:{role}" for project, role in sorted(memberships)),
    ]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def account_state(user) -> str:
    """The digest of the account as it is in the database now."""
    User = get_user_model()
    row = User.objects.filter(pk=user.pk).values("password", "is_active", "is_staff", "is_superuser").first()
    if row is None:
        return ""
    return account_digest(
        **row,
        group_ids=list(User.groups.through.objects.filter(user_id=user.pk).values_list("group_id", flat=True)),
        permission_ids=list(
            User.user_permissions.through.objects.filter(user_id=user.pk).values_list("permission_id", flat=True)
        ),
        memberships=list(
            ProjectMember.objects.filter(user_id=user.pk, is_active=True).values_list("project_id", "role")
        ),
    )


def withdraw_changed_account_links(user_id: int) -> int:
    """Revoke the open links bound to an account that no longer is as it was when they were made: a password set
    or changed by any means, a role or group given or taken, a flag or permission changed, a membership added or
    ended. Returns how many were revoked. Called from the signals of every such change."""
    open_links = Invitation.objects.filter(account_id=user_id, used_at=None, revoked_at=None)
    if not open_links.exists():
        return 0
    User = get_user_model()
    user = User(pk=user_id)
    state = account_state(user)
    return open_links.exclude(account_state=state).update(revoked_at=timezone.now())


def _account_may_use_link(invitation: Invitation) -> bool:
    """A link bound to an account sets the first password of an account that holds only the link's role: it never
    hands over more than it was made for, whatever happened to the account since."""
    account = invitation.account
    if account is None:
        return True
    if not invitation.account_state or account_state(account) != invitation.account_state:
        return False
    if account.is_staff or account.is_superuser or account.has_usable_password():
        return False
    return set(account.groups.values_list("name", flat=True)) <= {invitation.role}


def _grant_role(user, role: str) -> None:
    if not roles.has_role(user, role):
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        user.__dict__.pop("_role_names", None)


def create_invitation(
    project: AnnotationProject,
    *,
    role: str = ProjectMember.Role.ANNOTATOR,
    actor,
    days: int = INVITATION_DAYS,
    account=None,
) -> tuple[Invitation, str]:
    """A one-time link to join the project with a role, valid for `days`. Returns the invitation and its token,
    which is not stored (only its hash is) and cannot be shown again."""
    if role not in ProjectMember.Role.values:
        raise InvalidSubmission(f"an invitation is for an annotator or an adjudicator, not {role!r}")
    if not 1 <= days <= 90:
        raise InvalidSubmission("an invitation is valid for 1 to 90 days")
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        invitation = Invitation(
            project=project,
            role=role,
            token_hash=_token_hash(token),
            account=account,
            account_state=account_state(account) if account is not None else "",
            created_by=actor,
            expires_at=timezone.now() + timedelta(days=days),
        )
        if account is not None and not _account_may_use_link(invitation):
            raise InvalidSubmission(
                f"{account.get_username()} already has a password or more than the {role} role; a link can only "
                "let a new account choose its first password"
            )
        invitation.save()
        for_whom = f" for {account.get_username()}" if account is not None else ""
        log_change(
            project,
            actor,
            ProjectChange.Kind.INVITATION_CREATED,
            f"{invitation.get_role_display().lower()} invitation{for_whom} created, valid {days} "
            f"day{'s' if days != 1 else ''}",
            {"invitation": invitation.pk, "role": role, "days": days},
        )
    return invitation, token


def revoke_invitation(invitation: Invitation, *, actor) -> Invitation:
    with transaction.atomic():
        invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
        status = invitation.status()
        if status != Invitation.Status.OPEN:
            raise WorkflowError(
                f"this invitation is {invitation.Status(status).label.lower()}; only an open one can be revoked"
            )
        invitation.revoked_at, invitation.revoked_by = timezone.now(), actor
        invitation.save(update_fields=["revoked_at", "revoked_by"])
        log_change(
            invitation.project,
            actor,
            ProjectChange.Kind.INVITATION_REVOKED,
            f"{invitation.get_role_display().lower()} invitation revoked",
            {"invitation": invitation.pk},
        )
    return invitation


_UNUSABLE = {
    Invitation.Status.USED: "This invitation link has already been used. Each link works once: ask the person who "
    "invited you for a new one.",
    Invitation.Status.EXPIRED: "This invitation link has expired. Ask the person who invited you for a new one.",
    Invitation.Status.REVOKED: "This invitation link was withdrawn. Ask the person who invited you for a new one.",
}
UNKNOWN_INVITATION = "This invitation link is not valid. Check that you copied all of it, or ask for a new one."


def _usable_invitation(token: str, *, lock: bool) -> Invitation:
    invitations = Invitation.objects.select_related("project", "account")
    if lock:
        invitations = invitations.select_for_update(of=("self",))
    invitation = invitations.filter(token_hash=_token_hash(token)).first() if token else None
    if invitation is None:
        raise UnknownInvitation(UNKNOWN_INVITATION)
    status = invitation.status()
    if status == Invitation.Status.REVOKED and invitation.account_id and invitation.revoked_by_id is None:
        raise InvitationUnusable(ACCOUNT_CHANGED)  # revoked by a change to the account, not by a person
    if status != Invitation.Status.OPEN:
        raise InvitationUnusable(_UNUSABLE[Invitation.Status(status)])
    if not _account_may_use_link(invitation):
        raise InvitationUnusable(ACCOUNT_CHANGED)
    return invitation


def open_invitation(token: str) -> Invitation:
    """The invitation behind a link if it can still be used; InvitationUnusable says why not otherwise."""
    return _usable_invitation(token, lock=False)


def _redeem(invitation: Invitation, user) -> ProjectMember:
    """The caller holds the invitation's row lock and has checked it is open."""
    _grant_role(user, invitation.role)
    member = add_member(invitation.project, user, invitation.role, actor=user)
    invitation.used_at, invitation.used_by = timezone.now(), user
    invitation.save(update_fields=["used_at", "used_by"])
    log_change(
        invitation.project,
        user,
        ProjectChange.Kind.INVITATION_ACCEPTED,
        f"{user.get_username()} accepted an invitation as {invitation.get_role_display().lower()}",
        {"invitation": invitation.pk, "username": user.get_username(), "role": invitation.role},
    )
    return member


def accept_invitation(token: str, user) -> ProjectMember:
    """A signed-in user takes the invitation with their own account: they get the role (its group too) and the
    membership, and the link is spent. An active member with that role already is refused (AlreadyMember) and
    the link stays usable."""
    with transaction.atomic():
        invitation = _usable_invitation(token, lock=True)
        account = invitation.account
        if account is not None and account.pk != user.pk:
            raise NotAllowed(f"this link is for the account {account.get_username()}; log out to use it")
        if account is None and is_member(invitation.project, user, invitation.role):
            raise AlreadyMember(
                f"you are already an {invitation.get_role_display().lower()} on {invitation.project.name}"
            )
        return _redeem(invitation, user)


def _check_password(password: str, user) -> None:
    try:
        password_validation.validate_password(password, user)
    except DjangoValidationError as exc:
        raise InvalidSubmission(" ".join(exc.messages)) from None


def sign_up_with_invitation(token: str, *, username: str, password: str, email: str = ""):
    """Create an account from an invitation (the password must pass the configured validators), give it the role
    and the membership, and spend the link. Returns the new user."""
    User = get_user_model()
    with transaction.atomic():
        invitation = _usable_invitation(token, lock=True)
        if invitation.account_id is not None:
            raise NotAllowed("this link sets the password of an existing account; it cannot create another one")
        username = display_username(username)
        refusal = username_refusal(username)
        if refusal:
            raise InvalidSubmission(refusal)
        user = User(username=username, email=email.strip())
        _check_password(password, user)
        user.set_password(password)
        try:
            with transaction.atomic():
                user.save()
        except IntegrityError:
            raise InvalidSubmission("that username is taken; choose another one") from None
        _redeem(invitation, user)
    return user


def set_password_with_invitation(token: str, *, password: str):
    """The account an invitation was made for chooses its password; the link is spent. Returns the user."""
    with transaction.atomic():
        invitation = _usable_invitation(token, lock=True)
        user = invitation.account
        if user is None:
            raise NotAllowed("this link invites a new member; it does not belong to an account")
        _check_password(password, user)
        _redeem(invitation, user)  # spent before the password changes, so the change cannot revoke it
        user.set_password(password)
        user.save(update_fields=["password"])
    return user


def create_account(
    project: AnnotationProject,
    *,
    username: str,
    email: str = "",
    actor,
    role: str = ProjectMember.Role.ANNOTATOR,
    days: int = INVITATION_DAYS,
) -> tuple[Any, Invitation, str]:
    """Create an account (without a usable password) with the role, make it a member, and return it with a
    one-time link through which its owner chooses a password."""
    User = get_user_model()
    username = display_username(username)
    with transaction.atomic():
        refusal = username_refusal(username)
        if refusal:
            if refusal.startswith("choose"):
                raise InvalidSubmission(refusal)
            raise InvalidSubmission(f"{refusal}, or add the existing account as a member")
        user = User(username=username, email=email.strip())
        user.set_unusable_password()
        try:
            with transaction.atomic():
                user.save()
        except IntegrityError:
            raise InvalidSubmission(f"the username {username} is taken; choose another one") from None
        _grant_role(user, role)
        log_change(
            project,
            actor,
            ProjectChange.Kind.ACCOUNT_CREATED,
            f"account {username} created for this project",
            {"username": username, "role": role},
        )
        add_member(project, user, role, actor=actor)
        invitation, token = create_invitation(project, role=role, actor=actor, days=days, account=user)
    return user, invitation, token
