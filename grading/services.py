"""Writes and business rules of the grading app."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from .judges import templates
from .models import PromptTemplate
from .verdict_writes import record_verdict, write_verdicts

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "ensure_default_templates",
    "judge_config_defaults",
    "record_verdict",
    "save_prompt_template_version",
    "write_verdicts",
]

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


def judge_config_defaults() -> dict:
    """What a new LLM judge configuration starts from: the endpoint in OPENAI_BASE_URL and the key in the
    environment variable OPENAI_API_KEY, unless the configuration says otherwise."""
    return {"base_url": settings.OPENAI_BASE_URL, "api_key_env": DEFAULT_API_KEY_ENV}


def ensure_default_templates() -> list:
    """Create version 1 of each default judge template when missing; idempotent."""
    created = []
    for default in templates.DEFAULT_TEMPLATES:
        template, was_created = PromptTemplate.objects.get_or_create(
            name=default.name,
            version=default.version,
            defaults={
                "contract": default.contract,
                "system_template": default.system_template,
                "user_template": default.user_template,
                "extraction_template": default.extraction_template,
            },
        )
        if was_created:
            created.append(template)
    return created


def save_prompt_template_version(
    *,
    name: str,
    contract: str,
    system_template: str,
    user_template: str,
    extraction_template: str = "",
    created_by=None,
) -> PromptTemplate:
    """Save a template's text under `name`, never changing a version that verdicts were produced with.

    Unchanged text returns the latest version as it is; the latest version is edited in place
    only while no verdict uses it; otherwise a new version (latest + 1) is created.
    """
    try:
        templates.validate_template_text(
            contract=contract,
            system_template=system_template,
            user_template=user_template,
            extraction_template=extraction_template,
        )
    except templates.TemplateError as error:
        raise ValidationError(str(error)) from error
    content = (contract, system_template, user_template, extraction_template)
    with transaction.atomic():
        latest = PromptTemplate.objects.select_for_update().filter(name=name).order_by("-version").first()
        if latest is not None and latest.content() == content:
            return latest
        if latest is not None and not latest.is_used():
            latest.contract, latest.system_template, latest.user_template, latest.extraction_template = content
            latest.save()
            return latest
        return PromptTemplate.objects.create(
            name=name,
            version=latest.version + 1 if latest is not None else 1,
            contract=contract,
            system_template=system_template,
            user_template=user_template,
            extraction_template=extraction_template,
            created_by=created_by,
        )
