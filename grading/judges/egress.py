"""Where LLM judge calls may go and which environment variables may hold their keys. Pure module, no Django.

A judge configuration is written by researchers, so neither its endpoint nor the name of its key variable is
trusted:

- the key variable must be one the operator allowed: listed in `JUDGE_API_KEY_ENVS`, or named with the prefix
  `JUDGE_KEY_`. A server secret (`SECRET_KEY`, `DATABASE_URL`, ...) never qualifies, even when listed;
- the endpoint must be `http` or `https`, carry no credentials, and its host must be on the allow-list that admins
  keep. Its addresses must be public unless that entry allows private ones (loopback, private ranges, link-local,
  ...). The names are checked when a configuration is saved; the addresses again before every request, on what the
  host resolves to at that moment. Redirects are not followed.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

KEY_ENV_PREFIX = "JUDGE_KEY_"
# Variables the server itself reads secrets from: never a judge key, whatever the operator lists.
SERVER_SECRET_ENVS = frozenset(
    {
        "SECRET_KEY",
        "DJANGO_SECRET_KEY",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "CELERY_RESULT_BACKEND",
        "REDIS_URL",
        "EMAIL_HOST_PASSWORD",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "AZURE_CLIENT_SECRET",
        "PGPASSWORD",
    }
)
ALLOWED_SCHEMES = ("http", "https")

Resolver = Callable[[str, int], Iterable[str]]


class EgressRefused(Exception):
    """A judge call that would send a key to an unapproved place, or read an unapproved variable."""


def _normalise_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _ip_or_none(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_public_address(address: str) -> bool:
    """Whether an IP address is routable on the public internet (not loopback, private, link-local, reserved...)."""
    parsed = _ip_or_none(_normalise_host(address))
    return parsed is not None and parsed.is_global and not parsed.is_multicast


def validate_host_pattern(pattern: str) -> str:
    """The canonical form of an allow-list entry: a host name, an IP address, or `*.domain` for its sub-domains."""
    host = _normalise_host(pattern)
    if not host:
        raise ValueError("give a host name, an IP address or *.domain")
    has_port = ":" in host and _ip_or_none(host) is None
    if has_port or any(character in host for character in "/@ "):
        raise ValueError("give a host only: no scheme, port, path or credentials")
    if "*" in host and not (host.startswith("*.") and "*" not in host[2:] and "." in host[2:]):
        raise ValueError("a wildcard is only allowed as *.domain.tld")
    return host


@dataclass(frozen=True)
class HostRule:
    """One allow-list entry. `pattern` is a host name, an IP address, or `*.domain` (any sub-domain, not the domain
    itself). `allow_private` lets the host resolve to loopback, private or link-local addresses."""

    pattern: str
    allow_private: bool = False

    def matches(self, host: str) -> bool:
        host = _normalise_host(host)
        pattern = _normalise_host(self.pattern)
        if pattern.startswith("*."):
            return host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
        host_ip, pattern_ip = _ip_or_none(host), _ip_or_none(pattern)
        if host_ip is not None or pattern_ip is not None:
            return host_ip is not None and host_ip == pattern_ip
        return host == pattern


def _resolve(host: str, port: int) -> list[str]:
    return sorted({str(info[4][0]) for info in socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)})


@dataclass(frozen=True)
class EgressPolicy:
    key_envs: frozenset[str] = frozenset()
    hosts: tuple[HostRule, ...] = ()

    # -- key variables

    def key_env_allowed(self, name: str) -> bool:
        if not name or name in SERVER_SECRET_ENVS:
            return False
        return name in self.key_envs or (name.startswith(KEY_ENV_PREFIX) and len(name) > len(KEY_ENV_PREFIX))

    def check_key_env(self, name: str) -> None:
        if not self.key_env_allowed(name):
            allowed = ", ".join(sorted(self.key_envs - SERVER_SECRET_ENVS)) or "none listed"
            raise EgressRefused(
                f"the environment variable {name!r} is not allowed to hold a judge key; use one of "
                f"JUDGE_API_KEY_ENVS ({allowed}) or a name starting with {KEY_ENV_PREFIX}"
            )

    # -- endpoints

    def rule_for(self, host: str) -> HostRule | None:
        for rule in self.hosts:
            if rule.matches(host):
                return rule
        return None

    def check_url(self, url: str) -> tuple[str, int, HostRule]:
        """(host, port, the matching rule) of an allowed endpoint URL, without resolving the host."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as error:
            raise EgressRefused(f"the endpoint URL is not valid: {error}") from None
        if parts.scheme not in ALLOWED_SCHEMES:
            raise EgressRefused("the endpoint URL must start with http:// or https://")
        if parts.username is not None or parts.password is not None:
            raise EgressRefused("the endpoint URL must not carry credentials")
        host = _normalise_host(parts.hostname or "")
        if not host:
            raise EgressRefused("the endpoint URL has no host")
        rule = self.rule_for(host)
        if rule is None:
            raise EgressRefused(
                f"the host {host!r} is not on the list of allowed judge endpoints; an admin can add it "
                "(Admin > Allowed judge hosts)"
            )
        return host, port or (443 if parts.scheme == "https" else 80), rule

    def check_addresses(self, host: str, port: int, *, resolve: Resolver = _resolve) -> list[str]:
        """The addresses `host` resolves to, once each is allowed: public, or the host's rule allows private ones."""
        rule = self.rule_for(host)
        if rule is None:
            raise EgressRefused(f"the host {host!r} is not on the list of allowed judge endpoints")
        literal = _ip_or_none(_normalise_host(host))
        try:
            addresses = [str(literal)] if literal is not None else list(resolve(host, port))
        except OSError as error:
            raise EgressRefused(f"the host {host!r} cannot be resolved: {error}") from None
        if not addresses:
            raise EgressRefused(f"the host {host!r} resolves to no address")
        private = [address for address in addresses if not is_public_address(address)]
        if private and not rule.allow_private:
            raise EgressRefused(
                f"the host {host!r} resolves to a non-public address ({', '.join(private)}); an admin must allow "
                "private addresses for it"
            )
        return addresses

    def check_endpoint(self, url: str, *, resolve: Resolver = _resolve) -> None:
        host, port, _ = self.check_url(url)
        self.check_addresses(host, port, resolve=resolve)
