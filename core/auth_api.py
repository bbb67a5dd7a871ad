"""POST /api/auth/token/ gives a user their API token (throttled per address, refused while the username is locked
out after failed attempts, a fresh token once the old one has expired); DELETE revokes the caller's own token.
Admins revoke anyone's on the admin's Tokens page."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import parsers, permissions, renderers, serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle

from . import login_limits
from .authentication import token_expired
from .middleware import too_many_attempts
from .parsers import BoundedJSONParser


class TokenRequestThrottle(SimpleRateThrottle):
    """API_TOKEN_THROTTLE_RATE requests per client address to the token endpoint."""

    scope = "auth-token"

    def get_rate(self):
        return settings.API_TOKEN_THROTTLE_RATE

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


def _expires(token) -> str | None:
    hours = settings.API_TOKEN_TTL_HOURS
    return (token.created + timedelta(hours=hours)).isoformat() if hours else None


class TokenView(ObtainAuthToken):
    throttle_classes = [TokenRequestThrottle]
    parser_classes = [BoundedJSONParser, parsers.FormParser, parsers.MultiPartParser]
    renderer_classes = [renderers.JSONRenderer]

    def get_permissions(self):
        if self.request.method == "DELETE":
            return [permissions.IsAuthenticated()]
        return [permissions.AllowAny()]

    def get_authenticators(self):
        # Signing in needs no credentials; a stale session or token must not turn it into a 401.
        if getattr(self, "request", None) is not None and self.request.method == "POST":
            return []
        return super().get_authenticators()

    @extend_schema(
        request=inline_serializer(
            "TokenRequest", {"username": serializers.CharField(), "password": serializers.CharField()}
        ),
        responses={
            200: inline_serializer(
                "TokenResponse",
                {"token": serializers.CharField(), "expires": serializers.DateTimeField(allow_null=True)},
            )
        },
    )
    def post(self, request, *args, **kwargs):
        data = request.data if hasattr(request.data, "get") else {}
        username = data.get("username") if isinstance(data.get("username"), str) else None
        wait = login_limits.locked_for(request, username)
        if wait:
            return too_many_attempts(request, wait)
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = serializer.validated_data["user"]
        login_limits.clear(user.get_username())
        token, _ = Token.objects.get_or_create(user=user)
        if token_expired(token):
            token.delete()
            token = Token.objects.create(user=user)
        return Response({"token": token.key, "expires": _expires(token)})

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, *args, **kwargs):
        Token.objects.filter(user=request.user).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


token_view = TokenView.as_view()
