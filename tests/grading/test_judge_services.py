"""Judge models and services: default templates, template versioning, verdict upserts, config checks."""

from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.core.exceptions import ValidationError

from grading.judges.client import JudgeConfigurationError, JudgeResult, JudgeSettings
from grading.judges.templates import DEFAULT_TEMPLATES
from grading.models import PromptTemplate, TemplateInUseError, Verdict, VerifierConfig
from grading.services import ensure_default_templates, record_verdict, save_prompt_template_version
from verifybench.models import Completion, Dataset, PriorLabel, Question

pytestmark = pytest.mark.django_db

USER = "Question: {question}\nReference: {reference}\nResponse: {completion}\nEnd with Final Judgment: Yes or No."


@pytest.fixture
def completion():
    dataset = Dataset.objects.create(name="verdict-tests")
    question = Question.objects.create(dataset=dataset, external_id="q", text="1+1?", content_hash="h")
    return Completion.objects.create(question=question, external_id="c", model_name="m", text="2", content_hash="h")


def make_judge_config(template, name="judge") -> VerifierConfig:
    return VerifierConfig.objects.create(
        name=name,
        kind=VerifierConfig.Kind.JUDGE,
        base_url="http://127.0.0.1:9/v1",
        model="m",
        api_key_env="JUDGE_KEY",
        template=template,
    )


def test_migration_created_the_default_templates_and_ensuring_them_again_is_a_no_op():
    names = {t.name for t in DEFAULT_TEMPLATES}
    assert set(PromptTemplate.objects.filter(version=1).values_list("name", flat=True)) >= names
    assert ensure_default_templates() == []
    assert PromptTemplate.objects.filter(name__in=names).count() == len(DEFAULT_TEMPLATES)


def test_an_unused_template_is_edited_in_place_and_unchanged_text_is_kept():
    first = save_prompt_template_version(
        name="custom", contract="final_judgment", system_template="", user_template=USER
    )
    same = save_prompt_template_version(
        name="custom", contract="final_judgment", system_template="", user_template=USER
    )
    edited = save_prompt_template_version(
        name="custom", contract="final_judgment", system_template="Be strict.", user_template=USER
    )
    assert first.pk == same.pk == edited.pk
    assert (edited.version, edited.system_template) == (1, "Be strict.")


def test_a_template_used_by_a_verdict_is_immutable_and_edits_make_a_new_version(completion, admin_role_user):
    template = save_prompt_template_version(
        name="custom", contract="final_judgment", system_template="", user_template=USER
    )
    config = make_judge_config(template)
    record_verdict(completion, config, JudgeResult(status="correct", template_id=template.pk))

    template.user_template = USER + "\nThink carefully."
    with pytest.raises(TemplateInUseError):
        template.save()
    template.refresh_from_db()
    assert template.user_template == USER

    second = save_prompt_template_version(
        name="custom",
        contract="final_judgment",
        system_template="",
        user_template=USER + "\nThink carefully.",
        created_by=admin_role_user,
    )
    assert (second.version, second.created_by) == (2, admin_role_user)
    assert second.pk != template.pk
    assert PromptTemplate.objects.get(pk=template.pk).user_template == USER
    unchanged_save = PromptTemplate.objects.get(pk=template.pk)
    unchanged_save.save()


def test_unusable_template_text_is_rejected_and_nothing_is_saved():
    with pytest.raises(ValidationError, match="completion"):
        save_prompt_template_version(
            name="broken", contract="final_judgment", system_template="", user_template="{question}"
        )
    assert not PromptTemplate.objects.filter(name="broken").exists()


def test_record_verdict_upserts_per_completion_and_verifier(completion):
    template = PromptTemplate.objects.get(name="verifybench-final-judgment", version=1)
    config = make_judge_config(template)
    first = record_verdict(
        completion,
        config,
        JudgeResult(
            status="inconclusive",
            reason="HTTP 500",
            failed=True,
            attempts=3,
            template_id=template.pk,
        ),
    )
    second = record_verdict(
        completion,
        config,
        JudgeResult(
            status="correct",
            extracted_answer="Yes",
            explanation="They agree.",
            raw_output="They agree.\nFinal Judgment: Yes",
            prompt_tokens=120,
            completion_tokens=9,
            cost=Decimal("0.00039"),
            attempts=1,
            template_id=template.pk,
        ),
    )
    assert first.pk == second.pk
    assert Verdict.objects.count() == 1
    stored = Verdict.objects.get()
    assert (stored.status, stored.failed, stored.reason, stored.prompt_tokens) == ("correct", False, "", 120)
    assert stored.cost == Decimal("0.00039")
    assert stored.prompt_template == template
    other = make_judge_config(template, name="second judge")
    record_verdict(completion, other, JudgeResult(status="incorrect", template_id=template.pk))
    assert Verdict.objects.count() == 2
    assert not PriorLabel.objects.exists()


def test_record_verdict_takes_a_rule_verifier_result(completion):
    config = VerifierConfig.objects.create(name="sympy", kind=VerifierConfig.Kind.RULE, timeout_seconds=2)
    result = SimpleNamespace(status="correct", extracted_answer="2", explanation="2 == 2", reason="", raw_output="2")
    verdict = record_verdict(completion, config, result)
    assert (verdict.status, verdict.prompt_template, verdict.extracted_answer, verdict.cost) == (
        "correct",
        None,
        "2",
        0,
    )
    with pytest.raises(ValidationError):
        record_verdict(completion, config, SimpleNamespace(**{**vars(result), "status": "human-approved"}))


def test_judge_config_validation_rejects_incomplete_configs_and_pasted_keys():
    template = PromptTemplate.objects.get(name="livemathbench-boxed", version=1)
    incomplete = VerifierConfig(name="incomplete", kind=VerifierConfig.Kind.JUDGE, model="m")
    with pytest.raises(ValidationError) as error:
        incomplete.full_clean()
    assert {"base_url", "api_key_env", "template"} <= set(error.value.message_dict)
    pasted_key = VerifierConfig(
        name="pasted",
        kind=VerifierConfig.Kind.JUDGE,
        base_url="http://127.0.0.1:9/v1",
        model="m",
        api_key_env="sk-proj-abc123",
        template=template,
    )
    with pytest.raises(ValidationError) as error:
        pasted_key.full_clean()
    assert "api_key_env" in error.value.message_dict


def test_judge_settings_come_from_a_judge_config_only():
    template = PromptTemplate.objects.get(name="umath-cot-extract", version=1)
    config = make_judge_config(template)
    settings = JudgeSettings.from_config(config)
    assert (settings.template.contract, settings.template_id, settings.temperature) == ("cot_extract", template.pk, 0.0)
    assert settings.config_key == str(config.pk)
    rule = VerifierConfig.objects.create(name="rule", kind=VerifierConfig.Kind.RULE)
    with pytest.raises(JudgeConfigurationError, match="not an LLM judge"):
        JudgeSettings.from_config(rule)


def test_admin_edit_of_a_used_template_saves_a_new_version(client, django_user_model, completion):
    staff = django_user_model.objects.create_superuser("root", "root@example.com", "pass-word-123")
    client.force_login(staff)
    form = {"contract": "final_judgment", "system_template": "", "user_template": USER, "extraction_template": ""}
    response = client.post("/admin/grading/prompttemplate/add/", {"name": "admin-made", **form})
    assert response.status_code == 302
    template = PromptTemplate.objects.get(name="admin-made")
    assert (template.version, template.created_by) == (1, staff)
    record_verdict(completion, make_judge_config(template), JudgeResult(status="correct", template_id=template.pk))

    response = client.post(
        f"/admin/grading/prompttemplate/{template.pk}/change/", {**form, "system_template": "Be strict."}
    )
    assert response.status_code == 302
    versions = list(
        PromptTemplate.objects.filter(name="admin-made").order_by("version").values_list("version", "system_template")
    )
    assert versions == [(1, ""), (2, "Be strict.")]
