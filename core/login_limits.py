"""A limit on password guessing, counted in the cache.

Every failed sign-in (Django's `user_login_failed` signal: the login page, the admin's, and the API token endpoint)
counts against its username and against the client's address for LOGIN_LOCKOUT_SECONDS. Once a username has
LOGIN_MAX_FAILURES failures, or an address five times as many, further attempts are refused with 429 and
`Retry-After` before any password is checked, so the right password does not help a guesser either. A username is
counted as the identity it stands for (`core.identity`: full-width, other look-alike forms and case fold to one), so
another spelling neither escapes the count nor resets it. A successful sign-in clears its identity's count.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import cache
from django.dispatch import receiver

from .identity import canonical_username

ADDRESS_FACTOR = 5


def client_address(request) -> str:
    meta = getattr(request, "META", None) or {}
    return str(meta.get("REMOTE_ADDR") or "unknown")


def _user_key(username: str) -> str:
    # One counter per identity, however the name is spelled (core.identity); hashed, since a username is whatever
    # the client typed and a cache key must be short and plain.
    digest = hashlib.sha256(canonical_username(username).encode("utf-8", "surrogatepass")).hexdigest()
    return f"login-failures:user:{digest}"


def _address_key(address: str) -> str:
    return f"login-failures:address:{hashlib.sha256(address.encode('utf-8', 'surrogatepass')).hexdigest()}"


def _increment(key: str) -> None:
    cache.add(key, 0, timeout=settings.LOGIN_LOCKOUT_SECONDS)
    try:
        cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=settings.LOGIN_LOCKOUT_SECONDS)


def record_failure(request, username: str | None) -> None:
    _increment(_address_key(client_address(request)))
    if username:
        _increment(_user_key(username))


def clear(username: str | None) -> None:
    if username:
        cache.delete(_user_key(username))


def locked_for(request, username: str | None) -> int:
    """Seconds to wait before trying again (0: go ahead)."""
    limit = settings.LOGIN_MAX_FAILURES
    if limit <= 0:
        return 0
    if (cache.get(_address_key(client_address(request))) or 0) >= limit * ADDRESS_FACTOR:
        return settings.LOGIN_LOCKOUT_SECONDS
    if username and (cache.get(_user_key(username)) or 0) >= limit:
        return settings.LOGIN_LOCKOUT_SECONDS
    return 0


@receiver(user_login_failed, dispatch_uid="core.login_limits.failed")
def _on_failure(sender, credentials, request=None, **kwargs):
    record_failure(request, (credentials or {}).get("username"))


@receiver(user_logged_in, dispatch_uid="core.login_limits.succeeded")
def _on_success(sender, request, user, **kwargs):
    clear(user.get_username())
