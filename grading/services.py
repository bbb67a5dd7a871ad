"""Writes and business rules of the grading app."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation import aggregates
from verifybench.label_rules import CORRECTNESS

from .judges import templates
from .models import PromptTemplate, Verdict, VerifierConfig

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


def record_verdict(completion, config: VerifierConfig, result) -> Verdict:
    """Store what a verifier said about a completion, replacing its earlier verdict for that verifier.

    `result` is a judge's JudgeResult or any object with `status`, `extracted_answer`,
    `explanation`, `reason` and `raw_output`; token, cost and cache fields default to zero.
    Verdicts are kept apart from human labels and never touch them.
    """
    if result.status not in Verdict.Status.values:
        raise ValidationError(f"Unknown verdict status {result.status!r}.")
    template_id = getattr(result, "template_id", None)
    if template_id is None and config.kind == VerifierConfig.Kind.JUDGE:
        template_id = config.template_id
    with transaction.atomic():
        # the meta-evaluation's tallies of the completion's items move with its verdicts
        tracker = aggregates.track_subjects(CORRECTNESS, [completion.pk])
        verdict = _store_verdict(completion, config, result, template_id)
        tracker.done()
    return verdict


def _store_verdict(completion, config: VerifierConfig, result, template_id) -> Verdict:
    verdict, _ = Verdict.objects.update_or_create(
        completion=completion,
        verifier=config,
        defaults={
            "prompt_template_id": template_id,
            "status": result.status,
            "extracted_answer": result.extracted_answer or "",
            "explanation": result.explanation or "",
            "reason": result.reason or "",
            "raw_output": result.raw_output or "",
            "extraction_output": getattr(result, "extraction_output", "") or "",
            "prompt_tokens": getattr(result, "prompt_tokens", 0) or 0,
            "completion_tokens": getattr(result, "completion_tokens", 0) or 0,
            "cost": getattr(result, "cost", None) or Decimal(0),
            "attempts": getattr(result, "attempts", 0) or 0,
            "cache_hit": bool(getattr(result, "cache_hit", False)),
            "failed": bool(getattr(result, "failed", False)),
            "stage": getattr(result, "stage", "") or "",
            "rule_status": getattr(result, "rule_status", "") or "",
            "judge_status": getattr(result, "judge_status", "") or "",
        },
    )
    return verdict
