"""Where webhooks may be sent: the same allow-list as LLM judges (grading), checked through `check_endpoint` alone.

A webhook's URL must be an allowed endpoint: its scheme, host and port an entry of the allow-list (no key is ever sent
with a webhook, so the entry's bound keys do not matter). It is checked when a hook is saved, and the addresses its
host resolves to just before every delivery (public, unless the entry allows private ones); the delivery then goes to
the address that was checked, so nothing resolves the name a second time.
"""

from __future__ import annotations

from grading.judges.egress import EgressRefused, split_url
from grading.models import judge_egress_policy

__all__ = ["EgressRefused", "check_endpoint"]


def check_endpoint(url: str, *, addresses: bool) -> str | None:
    """Raise EgressRefused unless the policy allows `url`; with `addresses`, return the address to connect to (one
    of those its host resolves to now, all of them allowed)."""
    policy = judge_egress_policy()
    try:
        rule = policy.check_url(url)
        if not addresses:
            return None
        _, host, port = split_url(url)
        return policy.check_addresses(rule, host, port)[0]
    except EgressRefused as refused:
        raise EgressRefused(f"{refused} (webhook endpoints share the allow-list of LLM judges)") from None
