"""Accounts: one identity per username however it is spelled, and API tokens that end with the password they were
issued under."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models.signals import post_save, pre_save

from .identity import canonical_username, display_username


def username_in_use(name: str, *, exclude_pk: int | None = None) -> str | None:
    """The existing username that `name` would be the same identity as, or None."""
    wanted = canonical_username(name)
    users = get_user_model().objects.all()
    if exclude_pk is not None:
        users = users.exclude(pk=exclude_pk)
    for existing in users.values_list("username", flat=True).iterator():
        if canonical_username(existing) == wanted:
            return existing
    return None


def username_refusal(name: str) -> str | None:
    """Why `name` cannot be a new username (empty, or the same identity as an existing one), or None."""
    name = display_username(name)
    if not name:
        return "choose a username"
    existing = username_in_use(name)
    if existing is not None:
        same = "" if existing == name else f" (it is the same name as the existing account {existing})"
        return f"the username {name} is taken{same}; choose another one"
    return None


def _remember_password(sender, instance, raw=False, update_fields=None, **kwargs) -> None:
    if raw or instance.pk is None or (update_fields is not None and "password" not in update_fields):
        instance._stored_password = None
        return
    instance._stored_password = type(instance).objects.filter(pk=instance.pk).values_list("password", flat=True).first()


def _revoke_tokens_on_new_password(sender, instance, created=False, raw=False, **kwargs) -> None:
    stored = getattr(instance, "_stored_password", None)
    if raw or created or stored is None or stored == instance.password:
        return
    from rest_framework.authtoken.models import Token

    Token.objects.filter(user=instance).delete()


def connect() -> None:
    User = get_user_model()
    pre_save.connect(_remember_password, sender=User, dispatch_uid="core.accounts.remember_password")
    post_save.connect(_revoke_tokens_on_new_password, sender=User, dispatch_uid="core.accounts.revoke_tokens")
