"""Signals that keep one-time links honest: any change to an account revokes the open links bound to it."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models.signals import m2m_changed, post_delete, post_save

from .models import ProjectMember

# Saving only these fields changes nothing a link is bound to (a sign-in writes last_login).
_HARMLESS_FIELDS = frozenset({"last_login"})


def _withdraw(user_id: int) -> None:
    from .services.members import withdraw_changed_account_links

    withdraw_changed_account_links(user_id)


def _user_saved(sender, instance, created, update_fields=None, raw=False, **kwargs) -> None:
    if created or raw or (update_fields is not None and set(update_fields) <= _HARMLESS_FIELDS):
        return
    _withdraw(instance.pk)


def _user_relations_changed(sender, instance, action, reverse, model, pk_set, **kwargs) -> None:
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    User = get_user_model()
    if not reverse:
        _withdraw(instance.pk)
    elif model is User:
        for user_id in pk_set or ():
            _withdraw(user_id)
    else:  # group.user_set.clear(): the users are unknown afterwards, so check every open account link
        from .models import Invitation

        for user_id in Invitation.objects.filter(used_at=None, revoked_at=None).values_list("account_id", flat=True):
            if user_id is not None:
                _withdraw(user_id)


def _membership_changed(sender, instance, raw=False, **kwargs) -> None:
    if not raw:
        _withdraw(instance.user_id)


def connect() -> None:
    User = get_user_model()
    post_save.connect(_user_saved, sender=User, dispatch_uid="annotation.account_links.user")
    m2m_changed.connect(
        _user_relations_changed, sender=User.groups.through, dispatch_uid="annotation.account_links.groups"
    )
    m2m_changed.connect(
        _user_relations_changed, sender=User.user_permissions.through, dispatch_uid="annotation.account_links.perms"
    )
    post_save.connect(_membership_changed, sender=ProjectMember, dispatch_uid="annotation.account_links.member")
    post_delete.connect(_membership_changed, sender=ProjectMember, dispatch_uid="annotation.account_links.member_gone")
