"""System checks of the grading app."""

from django.conf import settings
from django.core.checks import Error, register

from .judges.egress import SERVER_SECRET_ENVS


@register()
def judge_key_envs_are_not_server_secrets(app_configs, **kwargs):
    listed = sorted(set(getattr(settings, "JUDGE_API_KEY_ENVS", ())) & SERVER_SECRET_ENVS)
    if not listed:
        return []
    return [
        Error(
            f"JUDGE_API_KEY_ENVS lists server secrets ({', '.join(listed)}); judge configurations would be able to "
            "send them to their endpoints. They are refused anyway; remove them from the setting.",
            id="grading.E001",
        )
    ]
