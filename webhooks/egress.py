"""Where webhooks may be sent: the same allow-list as LLM judges (grading), checked through `check_endpoint` alone.

The URL is checked when a hook is saved (scheme, no credentials, an allowed host) and the addresses it resolves to
before every delivery (public, unless the allow-list entry allows private ones). Everything here reaches the policy
through `check_endpoint`, so a change in how the policy's entries are written (a host, a base URL with a port) is
adapted in one place.
"""

from __future__ import annotations

from grading.judges.egress import EgressRefused
from grading.models import judge_egress_policy

__all__ = ["EgressRefused", "check_endpoint"]


def check_endpoint(url: str, *, addresses: bool) -> None:
    """Raise EgressRefused unless the policy allows `url` (and, with `addresses`, what its host resolves to now)."""
    policy = judge_egress_policy()
    try:
        host, port, _ = policy.check_url(url)
        if addresses:
            policy.check_addresses(host, port)
    except EgressRefused as refused:
        raise EgressRefused(f"{refused} (webhook endpoints share the allow-list of LLM judges)") from None
