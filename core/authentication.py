"""API tokens that expire: a token older than API_TOKEN_TTL_HOURS is refused (and deleted), so a leaked token stops
working by itself; 0 keeps tokens until they are revoked."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication


def token_expired(token) -> bool:
    hours = settings.API_TOKEN_TTL_HOURS
    return bool(hours) and token.created < timezone.now() - timedelta(hours=hours)


class ExpiringTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key):
        user, token = super().authenticate_credentials(key)
        if token_expired(token):
            token.delete()
            raise exceptions.AuthenticationFailed("Token expired; ask for a new one at /api/auth/token/.")
        return user, token
