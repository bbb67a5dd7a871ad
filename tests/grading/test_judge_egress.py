"""Judge configurations cannot make the server send its secrets, or any key, to a place an admin has not allowed."""

from __future__ import annotations

import json
import os

import pytest
from django.conf import settings as django_settings

from grading import runs
from grading.judges.client import EndpointNotAllowedError, JudgeClient, JudgeSettings
from grading.judges.egress import EgressPolicy, EgressRefused, HostRule, validate_host_pattern
from grading.judges.templates import DEFAULT_TEMPLATES, FINAL_JUDGMENT
from grading.models import AllowedJudgeHost, PromptTemplate, Verdict, VerificationRun, VerifierConfig
from tests.fakes.openai_server import FakeOpenAIServer, Redirect
from tests.grading.test_runs import make_dataset

ALLOWED_KEY_ENV = "JUDGE_KEY_EGRESS_TEST"


def resolver_to(*addresses):
    return lambda host, port: list(addresses)


# -- the pure policy ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "SECRET_KEY",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "PGPASSWORD",
        "HOME",
        "SOME_CLOUD_TOKEN",
        "JUDGE_KEY_",
        "",
        "OPENAI_API_KEY_2",
    ],
)
def test_only_listed_or_prefixed_variables_may_hold_a_judge_key(name):
    policy = EgressPolicy(key_envs=frozenset({"OPENAI_API_KEY"}))
    assert not policy.key_env_allowed(name)
    with pytest.raises(EgressRefused):
        policy.check_key_env(name)


def test_server_secrets_are_refused_even_when_an_operator_lists_them():
    policy = EgressPolicy(key_envs=frozenset({"SECRET_KEY", "DATABASE_URL", "OPENAI_API_KEY"}))
    assert not policy.key_env_allowed("SECRET_KEY") and not policy.key_env_allowed("DATABASE_URL")
    assert policy.key_env_allowed("OPENAI_API_KEY") and policy.key_env_allowed("JUDGE_KEY_QWEN")


@pytest.mark.parametrize(
    "url, reason",
    [
        ("ftp://api.example.com/v1", "http"),
        ("http://user:pw@api.example.com/v1", "credentials"),
        ("http://elsewhere.example.org/v1", "not on the list"),
        ("http://example.com/v1", "not on the list"),  # *.example.com covers sub-domains, not the domain itself
        ("http:///v1", "no host"),
        ("http://api.example.com:99999/v1", "not valid"),
    ],
)
def test_endpoint_urls_outside_the_allow_list_are_refused(url, reason):
    policy = EgressPolicy(hosts=(HostRule("*.example.com"),))
    with pytest.raises(EgressRefused, match=reason):
        policy.check_url(url)


def test_allowed_hosts_must_resolve_to_public_addresses_unless_private_ones_are_allowed():
    public = EgressPolicy(hosts=(HostRule("api.example.com"), HostRule("*.corp.example")))
    assert public.check_addresses("api.example.com", 443, resolve=resolver_to("93.184.216.34")) == ["93.184.216.34"]
    for address in (
        "127.0.0.1",
        "10.1.2.3",
        "192.168.0.7",
        "169.254.169.254",
        "::1",
        "::ffff:127.0.0.1",
        "0.0.0.0",
        "fd00::1",
        "100.64.0.1",
    ):
        with pytest.raises(EgressRefused, match="non-public"):
            public.check_addresses("api.example.com", 443, resolve=resolver_to("93.184.216.34", address))
    with pytest.raises(EgressRefused, match="non-public"):
        public.check_endpoint(
            "http://127.0.0.1:8000/v1".replace("127.0.0.1", "vllm.corp.example"), resolve=resolver_to("10.0.0.5")
        )
    in_house = EgressPolicy(hosts=(HostRule("vllm.corp.example", allow_private=True),))
    in_house.check_endpoint("http://vllm.corp.example:8000/v1", resolve=resolver_to("10.0.0.5"))


def test_an_ip_entry_matches_that_address_in_any_spelling_and_nothing_else():
    rule = HostRule("127.0.0.1", allow_private=True)
    assert rule.matches("127.0.0.1") and rule.matches("[::ffff:127.0.0.1]")
    assert not rule.matches("localhost") and not rule.matches("127.0.0.2") and not rule.matches("2130706433")


@pytest.mark.parametrize("pattern", ["http://h/", "h:8000", "a@b", "*", "*.com", "a.*.com", "", "  "])
def test_host_entries_are_hosts_only(pattern):
    with pytest.raises(ValueError):
        validate_host_pattern(pattern)


def test_host_entries_are_stored_in_canonical_form():
    assert validate_host_pattern(" API.Example.COM. ") == "api.example.com"
    assert validate_host_pattern("*.Example.com") == "*.example.com"
    assert validate_host_pattern("[::1]") == "::1"


# -- configurations through the API -----------------------------------------------------------------------------------


def judge_payload(**overrides) -> dict:
    template = PromptTemplate.objects.get(name="verifybench-final-judgment", version=1)
    return {
        "name": "judge",
        "kind": "judge",
        "base_url": "http://127.0.0.1:8000/v1",
        "model": "m",
        "api_key_env": ALLOWED_KEY_ENV,
        "template": template.pk,
        **overrides,
    }


@pytest.mark.django_db
@pytest.mark.parametrize("variable", ["SECRET_KEY", "DATABASE_URL", "SOME_CLOUD_TOKEN"])
def test_a_configuration_naming_a_server_secret_or_an_unlisted_variable_is_refused(
    researcher, api_client_for, local_judge_host, variable
):
    response = api_client_for(researcher).post(
        "/api/grading/verifiers/", judge_payload(api_key_env=variable), format="json"
    )
    assert response.status_code == 400 and "api_key_env" in response.json()
    assert not VerifierConfig.objects.exists()


@pytest.mark.django_db
def test_a_configuration_pointing_at_an_unlisted_host_is_refused(researcher, api_client_for):
    response = api_client_for(researcher).post("/api/grading/verifiers/", judge_payload(), format="json")
    assert response.status_code == 400 and "not on the list" in response.json()["base_url"][0]


@pytest.mark.django_db
def test_only_admins_change_the_host_allow_list(researcher, admin_role_user, annotator, api_client_for):
    for user in (researcher, annotator):
        client = api_client_for(user)
        assert client.get("/api/grading/judge-hosts/").status_code == 403
        assert client.post("/api/grading/judge-hosts/", {"host": "evil.example"}, format="json").status_code == 403
    admin = api_client_for(admin_role_user)
    created = admin.post(
        "/api/grading/judge-hosts/", {"host": "API.example.com", "allow_private": False}, format="json"
    )
    assert created.status_code == 201, created.content
    assert created.json()["host"] == "api.example.com" and created.json()["created_by"] == admin_role_user.username
    assert admin.post("/api/grading/judge-hosts/", {"host": "http://x/"}, format="json").status_code == 400
    twin = admin.post("/api/grading/judge-hosts/", {"host": "Api.Example.COM"}, format="json")
    assert twin.status_code == 400 and "already allowed" in twin.json()["host"][0]  # the same host in other case
    other = admin.post("/api/grading/judge-hosts/", {"host": "other.example.com"}, format="json").json()
    renamed = admin.put(f"/api/grading/judge-hosts/{other['id']}/", {"host": "API.example.com"}, format="json")
    assert renamed.status_code == 400
    assert (
        admin.put(
            f"/api/grading/judge-hosts/{other['id']}/", {"host": "OTHER.example.com", "note": "n"}, format="json"
        ).status_code
        == 200
    )  # its own host again
    assert admin.delete(f"/api/grading/judge-hosts/{created.json()['id']}/").status_code == 204


@pytest.mark.django_db
def test_researchers_cannot_edit_the_allow_list_in_the_django_admin(client, make_user):
    staff_researcher = make_user("researcher")
    staff_researcher.is_staff = True
    staff_researcher.save()
    client.force_login(staff_researcher)
    assert client.get("/admin/grading/allowedjudgehost/add/").status_code == 403


# -- runs: nothing is ever sent -------------------------------------------------------------------------------------


@pytest.fixture
def listener():
    """A local endpoint that records every request and the Authorization header it carried."""
    server = FakeOpenAIServer().start()
    yield server
    server.stop()


def legacy_config(listener, api_key_env: str) -> VerifierConfig:
    """A configuration stored without validation, as a row written before the checks existed would be."""
    return VerifierConfig.objects.create(
        name=f"legacy-{api_key_env.lower()}",
        kind=VerifierConfig.Kind.JUDGE,
        base_url=listener.base_url,
        model="m",
        api_key_env=api_key_env,
        max_retries=0,
        template=PromptTemplate.objects.get(name="verifybench-final-judgment", version=1),
    )


def queued_run(config, dataset) -> VerificationRun:
    """A run queued before the checks existed (create_run refuses such a configuration today)."""
    with pytest.raises(runs.RunRequestError, match="cannot run"):
        runs.create_run(verifier=config, dataset=dataset, enqueue=False)
    return VerificationRun.objects.create(verifier=config, dataset=dataset)


def stored_text() -> str:
    rows = [list(model.objects.values()) for model in (VerifierConfig, Verdict, VerificationRun)]
    return json.dumps(rows, default=str)


@pytest.mark.django_db
@pytest.mark.parametrize("variable", ["SECRET_KEY", "DATABASE_URL", "SOME_CLOUD_TOKEN"])
def test_a_run_never_sends_a_server_secret_or_an_unlisted_variable(listener, local_judge_host, monkeypatch, variable):
    secret = {"SECRET_KEY": django_settings.SECRET_KEY}.get(variable, f"value-of-{variable.lower()}-0123456789")
    monkeypatch.setenv(variable, secret)
    dataset = make_dataset("egress", questions=2, per_question=2)
    run = runs.execute_run(queued_run(legacy_config(listener, variable), dataset).pk)
    assert run.status == VerificationRun.Status.FAILED and "not allowed to hold a judge key" in run.error
    assert listener.requests == []
    assert secret not in stored_text()


@pytest.mark.django_db
def test_a_run_sends_nothing_to_a_host_the_admins_have_not_allowed(listener, monkeypatch):
    monkeypatch.setenv(ALLOWED_KEY_ENV, "sk-egress-test-key")
    dataset = make_dataset("egress-host", questions=1, per_question=2)
    run = runs.execute_run(queued_run(legacy_config(listener, ALLOWED_KEY_ENV), dataset).pk)
    assert run.status == VerificationRun.Status.FAILED and "not on the list" in run.error
    AllowedJudgeHost.objects.create(host="127.0.0.1", allow_private=False)  # listed, but loopback not allowed
    run = runs.execute_run(runs.resume_run(run, enqueue=False).pk)
    assert run.status == VerificationRun.Status.FAILED and "non-public" in run.error
    assert listener.requests == []


def test_redirects_are_not_followed(fake_openai, listener, monkeypatch):
    monkeypatch.setenv(ALLOWED_KEY_ENV, "sk-redirect-test-key")
    fake_openai.always(Redirect(listener.base_url.replace("127.0.0.1", "localhost") + "/chat/completions"))
    template = next(t for t in DEFAULT_TEMPLATES if t.contract == FINAL_JUDGMENT)
    settings = JudgeSettings(
        config_key="redirect",
        name="redirect",
        base_url=fake_openai.base_url,
        model="m",
        api_key_env=ALLOWED_KEY_ENV,
        template=template,
        max_retries=0,
    )
    policy = EgressPolicy(hosts=(HostRule("127.0.0.1", allow_private=True),))
    with JudgeClient(settings, policy=policy) as client:
        result = client.judge_many([])  # nothing to judge: nothing sent
        assert result == []
        from grading.judges.client import JudgeInput

        (outcome,) = client.judge_many([JudgeInput("Q", "R", "A")])
    assert outcome.failed and "307" in outcome.reason
    assert len(fake_openai.chat_requests) == 1 and listener.requests == []


def test_the_client_refuses_before_reading_the_key(monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "never-read")
    template = next(t for t in DEFAULT_TEMPLATES if t.contract == FINAL_JUDGMENT)
    settings = JudgeSettings(
        config_key="k",
        name="k",
        base_url="http://127.0.0.1:9/v1",
        model="m",
        api_key_env="SECRET_KEY",
        template=template,
    )
    read = []
    real_get = os.environ.get
    monkeypatch.setattr(os.environ, "get", lambda name, default=None: read.append(name) or real_get(name, default))
    with pytest.raises(EndpointNotAllowedError, match="SECRET_KEY"):
        JudgeClient(settings, policy=EgressPolicy(hosts=(HostRule("127.0.0.1", allow_private=True),)))
    assert "SECRET_KEY" not in read
