"""The egress policy in force: key variables from the settings, endpoint hosts from the admins' allow-list."""
from __future__ import annotations

from django.conf import settings

from .egress import EgressPolicy, HostRule


def egress_policy() -> EgressPolicy:
    from grading.models import AllowedJudgeHost

    hosts = tuple(
        HostRule(pattern, allow_private)
        for pattern, allow_private in AllowedJudgeHost.objects.order_by("host").values_list("host", "allow_private")
    )
    return EgressPolicy(key_envs=frozenset(settings.JUDGE_API_KEY_ENVS), hosts=hosts)
