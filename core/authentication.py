"""API tokens that expire: a token older than API_TOKEN_TTL_HOURS is refused (and deleted), so a leaked token stops
working by itself; 0 keeps tokens until they are revoked."""

from __future__ import annotations

from datetime import UTC, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

from core import rows


def token_expired(token) -> bool:
    hours = settings.API_TOKEN_TTL_HOURS
    return bool(hours) and token.created < timezone.now() - timedelta(hours=hours)


def _user_with_token(key: str):
    """The token's user with the token's creation time as `token_created`, in one fixed statement: every API
    request asks, and the ORM's join of the two rows cost more CPU to build than to run."""
    if not key or "\x00" in key or len(key) > Token._meta.get_field("key").max_length:
        return None
    users = get_user_model()
    sql = (
        f"SELECT {rows.columns(users, 'u')}, t.created FROM {users._meta.db_table} u "
        f"JOIN {Token._meta.db_table} t ON t.user_id = u.{users._meta.pk.column} WHERE t.key = %s"
    )
    row = rows.fetch_one(sql, [key])
    if row is None:
        return None
    user, user.token_created = rows.split(row, users)
    return user


def _aware(moment):
    """A column read outside a model field comes back as the backend stores it (SQLite: naive UTC text)."""
    if isinstance(moment, str):
        moment = parse_datetime(moment)
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, UTC)
    return moment


class ExpiringTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key):
        user = _user_with_token(key)
        if user is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        if not user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        token = Token(key=key, user=user, created=_aware(user.token_created))
        if token_expired(token):
            Token.objects.filter(key=key).delete()
            raise exceptions.AuthenticationFailed("Token expired; ask for a new one at /api/auth/token/.")
        return user, token
