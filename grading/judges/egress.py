"""Where LLM judge calls may go, and which keys may go there. Pure module, no Django.

A judge configuration is written by researchers, so neither its endpoint nor the name of its key variable is
trusted:

- the key variable must be one the operator allowed: listed in `JUDGE_API_KEY_ENVS`, or named with the prefix
  `JUDGE_KEY_`. A server secret (`SECRET_KEY`, `DATABASE_URL`, ...) never qualifies, even when listed;
- the endpoint must be on the allow-list that admins keep. An entry is a scheme, a host (a name, an IP address, or
  `*.domain` for its sub-domains) and a port: another port or scheme of an allowed host is another endpoint, and is
  refused. The URL must carry no credentials;
- each entry names the key variables that may be sent to it: a key allowed for one endpoint is never sent to
  another, even an allowed one;
- the endpoint's addresses must be public unless its entry allows private ones (loopback, private ranges,
  link-local, ...). They are checked before every request, on what the host resolves to at that moment, and the
  request then goes to the address that was checked: the name is never resolved a second time, so a DNS answer
  that changes in between cannot send the key elsewhere. Redirects are not followed.
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
        "CACHE_URL",
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
DEFAULT_PORTS = {"http": 80, "https": 443}

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
    """The canonical form of an entry's host: a host name, an IP address, or `*.domain` for its sub-domains."""
    host = _normalise_host(pattern)
    if not host:
        raise ValueError("give a host name, an IP address or *.domain")
    has_port = ":" in host and _ip_or_none(host) is None
    if has_port or any(character in host for character in "/@ "):
        raise ValueError("give a host only: no scheme, port, path or credentials")
    if "*" in host and not (host.startswith("*.") and "*" not in host[2:] and "." in host[2:]):
        raise ValueError("a wildcard is only allowed as *.domain.tld")
    return host


def split_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an endpoint URL, refused when it cannot be an endpoint."""
    try:
        parts = urlsplit(url.strip())
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
    return parts.scheme, host, port or DEFAULT_PORTS[parts.scheme]


def parse_entry(base_url: str) -> tuple[str, str, int]:
    """(scheme, host pattern, port) of an allow-list entry written as a base URL (`https://api.openai.com`,
    `http://10.0.0.5:8000/v1`, `https://*.openai.azure.com`); a path is allowed and ignored."""
    try:
        scheme, host, port = split_url(base_url)
    except EgressRefused as refused:
        raise ValueError(str(refused)) from None
    return scheme, validate_host_pattern(host), port


def _show(scheme: str, host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}" + ("" if DEFAULT_PORTS.get(scheme) == port else f":{port}")


@dataclass(frozen=True)
class EndpointRule:
    """One allow-list entry: `scheme://host:port`, where `host` is a name, an IP address, or `*.domain` (any
    sub-domain, not the domain itself); the key variables that may be sent there; whether the host may resolve to
    loopback, private or link-local addresses."""

    scheme: str
    host: str
    port: int
    allow_private: bool = False
    key_envs: frozenset[str] = frozenset()

    @property
    def base_url(self) -> str:
        return _show(self.scheme, self.host, self.port)

    def matches_host(self, host: str) -> bool:
        host = _normalise_host(host)
        pattern = _normalise_host(self.host)
        if pattern.startswith("*."):
            return host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
        host_ip, pattern_ip = _ip_or_none(host), _ip_or_none(pattern)
        if host_ip is not None or pattern_ip is not None:
            return host_ip is not None and host_ip == pattern_ip
        return host == pattern

    def matches(self, scheme: str, host: str, port: int) -> bool:
        return scheme == self.scheme and port == self.port and self.matches_host(host)


def _resolve(host: str, port: int) -> list[str]:
    return sorted({str(info[4][0]) for info in socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)})


@dataclass(frozen=True)
class EgressPolicy:
    key_envs: frozenset[str] = frozenset()
    endpoints: tuple[EndpointRule, ...] = ()

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

    def rule_for(self, scheme: str, host: str, port: int) -> EndpointRule | None:
        for rule in self.endpoints:
            if rule.matches(scheme, host, port):
                return rule
        return None

    def check_url(self, url: str) -> EndpointRule:
        """The allow-list entry an endpoint URL falls under, without resolving its host."""
        scheme, host, port = split_url(url)
        rule = self.rule_for(scheme, host, port)
        if rule is not None:
            return rule
        same_host = sorted(rule.base_url for rule in self.endpoints if rule.matches_host(host))
        if same_host:
            raise EgressRefused(
                f"the endpoint {_show(scheme, host, port)} is not on the list of allowed judge endpoints; on that "
                f"host only {', '.join(same_host)} is allowed (an entry is a scheme, a host and a port)"
            )
        raise EgressRefused(
            f"the host {host!r} is not on the list of allowed judge endpoints; an admin can add "
            f"{_show(scheme, host, port)} (Admin > Allowed judge endpoints)"
        )

    def check_key_binding(self, rule: EndpointRule, key_env: str) -> None:
        """The key in `key_env` may be sent to the entry's endpoint."""
        if key_env not in rule.key_envs:
            bound = ", ".join(sorted(rule.key_envs)) or "none"
            raise EgressRefused(
                f"the key in {key_env!r} may not be sent to {rule.base_url}; the keys bound to that endpoint are: "
                f"{bound} (an admin binds key variables to allowed endpoints)"
            )

    def check_request(self, url: str, key_env: str) -> EndpointRule:
        """Everything that can be checked without the network: the key variable, the endpoint, their binding."""
        self.check_key_env(key_env)
        rule = self.check_url(url)
        self.check_key_binding(rule, key_env)
        return rule

    def check_addresses(self, rule: EndpointRule, host: str, port: int, *, resolve: Resolver = _resolve) -> list[str]:
        """The addresses `host` resolves to now, once each is allowed: public, or its entry allows private ones."""
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
                f"private addresses for {rule.base_url}"
            )
        return addresses

    def check_endpoint(self, url: str, key_env: str, *, resolve: Resolver = _resolve) -> list[str]:
        """The whole check before a call: key variable, endpoint, binding and the addresses it resolves to now."""
        rule = self.check_request(url, key_env)
        _, host, port = split_url(url)
        return self.check_addresses(rule, host, port, resolve=resolve)
