"""Judge configurations cannot make the server send its secrets, or any key, to a place an admin has not allowed."""

from __future__ import annotations

import json
import os
import socket

import pytest
from django.conf import settings as django_settings

from grading import runs
from grading.judges.client import EndpointNotAllowedError, JudgeClient, JudgeInput, JudgeSettings
from grading.judges.egress import EgressPolicy, EgressRefused, EndpointRule, parse_entry, validate_host_pattern
from grading.judges.templates import DEFAULT_TEMPLATES, FINAL_JUDGMENT
from grading.models import PromptTemplate, Verdict, VerificationRun, VerifierConfig
from tests.conftest import allow_judge_endpoint
from tests.fakes.openai_server import FakeOpenAIServer, Redirect
from tests.grading.test_runs import make_dataset

ALLOWED_KEY_ENV = "JUDGE_KEY_EGRESS_TEST"


def resolver_to(*addresses):
    return lambda host, port: list(addresses)


def endpoint_policy(base_url: str, *key_envs: str, allow_private: bool = True) -> EgressPolicy:
    scheme, host, port = parse_entry(base_url)
    rule = EndpointRule(
        scheme, host, port, allow_private=allow_private, key_envs=frozenset(key_envs or {ALLOWED_KEY_ENV})
    )
    return EgressPolicy(endpoints=(rule,))


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
        ("https://elsewhere.example.org/v1", "not on the list"),
        ("https://example.com/v1", "not on the list"),  # *.example.com covers sub-domains, not the domain itself
        ("http:///v1", "no host"),
        ("https://api.example.com:99999/v1", "not valid"),
        ("https://api.example.com:8443/v1", "only https://\\*.example.com is allowed"),  # another port
        ("http://api.example.com/v1", "only https://\\*.example.com is allowed"),  # another scheme
    ],
)
def test_endpoint_urls_outside_the_allow_list_are_refused(url, reason):
    policy = EgressPolicy(endpoints=(EndpointRule("https", "*.example.com", 443),))
    with pytest.raises(EgressRefused, match=reason):
        policy.check_url(url)


def test_an_entry_is_a_scheme_a_host_and_a_port():
    entry = EndpointRule("http", "127.0.0.1", 8000, allow_private=True, key_envs=frozenset({"JUDGE_KEY_A"}))
    policy = EgressPolicy(endpoints=(entry,))
    assert policy.check_request("http://127.0.0.1:8000/v1", "JUDGE_KEY_A") == entry
    for other in ("http://127.0.0.1:8001/v1", "https://127.0.0.1:8000/v1", "http://127.0.0.1/v1"):
        with pytest.raises(EgressRefused, match="only http://127.0.0.1:8000 is allowed"):
            policy.check_request(other, "JUDGE_KEY_A")


def test_a_key_goes_only_to_the_endpoints_it_is_bound_to():
    local = EndpointRule("http", "127.0.0.1", 8000, allow_private=True, key_envs=frozenset({"JUDGE_KEY_LOCAL"}))
    cloud = EndpointRule("https", "api.example.com", 443, key_envs=frozenset({"OPENAI_API_KEY"}))
    policy = EgressPolicy(key_envs=frozenset({"OPENAI_API_KEY"}), endpoints=(local, cloud))
    policy.check_request("https://api.example.com/v1", "OPENAI_API_KEY")
    with pytest.raises(EgressRefused, match="may not be sent to http://127.0.0.1:8000"):
        policy.check_request("http://127.0.0.1:8000/v1", "OPENAI_API_KEY")  # another allowed endpoint
    with pytest.raises(EgressRefused, match="may not be sent to https://api.example.com"):
        policy.check_request("https://api.example.com/v1", "JUDGE_KEY_LOCAL")
    with pytest.raises(EgressRefused, match="not allowed to hold a judge key"):
        policy.check_request("https://api.example.com/v1", "SECRET_KEY")


def test_allowed_hosts_must_resolve_to_public_addresses_unless_private_ones_are_allowed():
    public = EndpointRule("https", "api.example.com", 443)
    policy = EgressPolicy(endpoints=(public,))
    assert policy.check_addresses(public, "api.example.com", 443, resolve=resolver_to("93.184.216.34")) == [
        "93.184.216.34"
    ]
    for address in (
        "127.0.0.1",
        "10.1.2.3",
        "192.168.0.7",
        "169.254.169.254",
        "::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "0.0.0.0",
        "fd00::1",
        "100.64.0.1",
    ):
        with pytest.raises(EgressRefused, match="non-public"):
            policy.check_addresses(public, "api.example.com", 443, resolve=resolver_to("93.184.216.34", address))
    in_house = EndpointRule("http", "vllm.corp.example", 8000, allow_private=True, key_envs=frozenset({"JUDGE_KEY_V"}))
    EgressPolicy(endpoints=(in_house,)).check_endpoint(
        "http://vllm.corp.example:8000/v1", "JUDGE_KEY_V", resolve=resolver_to("10.0.0.5")
    )


def test_an_ip_entry_matches_that_address_in_any_spelling_and_nothing_else():
    rule = EndpointRule("http", "127.0.0.1", 80, allow_private=True)
    assert rule.matches("http", "127.0.0.1", 80) and rule.matches("http", "[::ffff:127.0.0.1]", 80)
    assert not rule.matches("http", "localhost", 80) and not rule.matches("http", "127.0.0.2", 80)
    assert not rule.matches("http", "2130706433", 80) and not rule.matches("http", "127.0.0.1", 81)


@pytest.mark.parametrize("pattern", ["http://h/", "h:8000", "a@b", "*", "*.com", "a.*.com", "", "  "])
def test_host_patterns_are_hosts_only(pattern):
    with pytest.raises(ValueError):
        validate_host_pattern(pattern)


@pytest.mark.parametrize(
    "base_url, entry",
    [
        (" https://API.Example.COM./v1 ", ("https", "api.example.com", 443)),
        ("http://10.0.0.5:8000", ("http", "10.0.0.5", 8000)),
        ("https://*.Example.com", ("https", "*.example.com", 443)),
        ("http://[::1]:9000/", ("http", "::1", 9000)),
    ],
)
def test_entries_are_written_as_base_urls_and_kept_in_canonical_form(base_url, entry):
    assert parse_entry(base_url) == entry


@pytest.mark.parametrize(
    "base_url", ["api.example.com", "ftp://a.example.com", "https://u:p@a.example.com", "https://*"]
)
def test_an_entry_that_is_not_a_base_url_is_refused(base_url):
    with pytest.raises(ValueError):
        parse_entry(base_url)


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
def test_only_admins_change_the_allow_list(researcher, admin_role_user, annotator, api_client_for):
    entry = {"base_url": "https://API.example.com/v1", "key_envs": [ALLOWED_KEY_ENV]}
    for user in (researcher, annotator):
        client = api_client_for(user)
        assert client.get("/api/grading/judge-hosts/").status_code == 403
        assert client.post("/api/grading/judge-hosts/", entry, format="json").status_code == 403
    admin = api_client_for(admin_role_user)
    created = admin.post("/api/grading/judge-hosts/", entry, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["base_url"], body["scheme"], body["host"], body["port"]) == (
        "https://api.example.com",
        "https",
        "api.example.com",
        443,
    )
    assert body["key_envs"] == [ALLOWED_KEY_ENV] and body["created_by"] == admin_role_user.username
    for bad in ({"base_url": "api.example.com"}, {"base_url": "ftp://x.example"}, {"base_url": "https://*"}):
        assert admin.post("/api/grading/judge-hosts/", bad, format="json").status_code == 400
    secret = admin.post(
        "/api/grading/judge-hosts/", {"base_url": "https://b.example.com", "key_envs": ["SECRET_KEY"]}, format="json"
    )
    assert secret.status_code == 400 and "SECRET_KEY" in secret.json()["key_envs"][0]
    twin = admin.post("/api/grading/judge-hosts/", {"base_url": "https://Api.Example.COM:443"}, format="json")
    assert twin.status_code == 400 and "already allowed" in twin.json()["base_url"][0]
    other_port = admin.post("/api/grading/judge-hosts/", {"base_url": "https://api.example.com:8443"}, format="json")
    assert other_port.status_code == 201  # another port of the host is another endpoint
    other = admin.post("/api/grading/judge-hosts/", {"base_url": "https://other.example.com"}, format="json").json()
    moved = admin.put(
        f"/api/grading/judge-hosts/{other['id']}/", {"base_url": "https://api.example.com"}, format="json"
    )
    assert moved.status_code == 400
    renamed = admin.patch(f"/api/grading/judge-hosts/{other['id']}/", {"note": "n"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["note"] == "n"
    assert admin.delete(f"/api/grading/judge-hosts/{body['id']}/").status_code == 204


@pytest.mark.django_db
def test_a_configuration_whose_key_is_not_bound_to_its_endpoint_is_refused(researcher, api_client_for):
    allow_judge_endpoint("http://127.0.0.1:8000", "JUDGE_KEY_OTHER")
    response = api_client_for(researcher).post("/api/grading/verifiers/", judge_payload(), format="json")
    assert response.status_code == 400
    assert "may not be sent to http://127.0.0.1:8000" in response.json()["api_key_env"][0]
    allow_judge_endpoint("http://127.0.0.1:8001", ALLOWED_KEY_ENV)  # the key is bound to another port only
    response = api_client_for(researcher).post("/api/grading/verifiers/", judge_payload(), format="json")
    assert response.status_code == 400 and "api_key_env" in response.json()


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
    allow_judge_endpoint(listener.base_url, ALLOWED_KEY_ENV, allow_private=False)  # listed, loopback not allowed
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
    with JudgeClient(settings, policy=endpoint_policy(fake_openai.base_url)) as client:
        result = client.judge_many([])  # nothing to judge: nothing sent
        assert result == []
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
        JudgeClient(settings, policy=endpoint_policy("http://127.0.0.1:9", "SECRET_KEY"))
    assert "SECRET_KEY" not in read


# -- the address that was checked is the address called ---------------------------------------------------------------


@pytest.fixture
def rebinding_dns(monkeypatch):
    """A resolver for `judge.test` whose answers follow a script (the last one repeats); addresses pass through."""
    real = socket.getaddrinfo
    answers: list[str] = []
    asked: list[str] = []

    def getaddrinfo(host, port, *args, **kwargs):
        if host == "judge.test":
            address = answers[min(len(asked), len(answers) - 1)]
            asked.append(address)
            return real(address, port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers, asked


def named_judge(fake_openai, **overrides) -> JudgeSettings:
    port = fake_openai.base_url.split(":")[2].split("/")[0]
    template = next(t for t in DEFAULT_TEMPLATES if t.contract == FINAL_JUDGMENT)
    fields = {
        "config_key": "named",
        "name": "named",
        "base_url": f"http://judge.test:{port}/v1",
        "model": "m",
        "api_key_env": ALLOWED_KEY_ENV,
        "template": template,
        "max_retries": 0,
        "timeout_seconds": 2,
    }
    return JudgeSettings(**{**fields, **overrides})


def test_the_request_goes_to_the_address_that_was_checked(fake_openai, rebinding_dns, monkeypatch):
    monkeypatch.setenv(ALLOWED_KEY_ENV, "sk-named")
    answers, asked = rebinding_dns
    answers.append("127.0.0.1")
    settings = named_judge(fake_openai)
    with JudgeClient(settings, policy=endpoint_policy(settings.base_url)) as client:
        (outcome,) = client.judge_many([JudgeInput("Q", "R", "A")])
    assert not outcome.failed, outcome.reason
    (request,) = fake_openai.chat_requests
    assert request.headers["host"] == settings.base_url.split("//")[1].split("/")[0]  # the name, not the address
    assert len(asked) == 2  # once when the client is made, once for the request: never again to connect


def test_a_name_that_rebinds_to_a_private_address_after_the_check_reaches_nothing(
    fake_openai, rebinding_dns, monkeypatch
):
    """The answer checked is public; asked again, the name would point at a loopback service. The request goes to
    the public address it checked (unreachable here), so the loopback service never hears of it, or of the key."""
    monkeypatch.setenv(ALLOWED_KEY_ENV, "sk-rebinding")
    answers, asked = rebinding_dns
    answers.extend(["93.184.216.34", "93.184.216.34", "127.0.0.1"])
    settings = named_judge(fake_openai)
    with JudgeClient(settings, policy=endpoint_policy(settings.base_url, allow_private=False)) as client:
        (outcome,) = client.judge_many([JudgeInput("Q", "R", "A")])
    assert outcome.failed and fake_openai.chat_requests == []
    assert asked == ["93.184.216.34", "93.184.216.34"]


def test_a_name_that_resolves_to_a_private_address_at_call_time_is_refused(fake_openai, rebinding_dns, monkeypatch):
    monkeypatch.setenv(ALLOWED_KEY_ENV, "sk-rebinding")
    answers, _ = rebinding_dns
    answers.extend(["93.184.216.34", "::ffff:127.0.0.1"])
    settings = named_judge(fake_openai)
    with JudgeClient(settings, policy=endpoint_policy(settings.base_url, allow_private=False)) as client:
        (outcome,) = client.judge_many([JudgeInput("Q", "R", "A")])
    assert outcome.failed and "non-public" in outcome.reason and fake_openai.chat_requests == []


@pytest.mark.django_db
def test_another_port_of_an_allowed_host_never_receives_a_key(listener, fake_openai, monkeypatch, researcher):
    """127.0.0.1 is allowed for one judge's port; a configuration pointing at another port of it is refused when
    saved, and a run of one stored before the rule existed sends nothing there."""
    monkeypatch.setenv(ALLOWED_KEY_ENV, "sk-one-port")
    allow_judge_endpoint(fake_openai.base_url, ALLOWED_KEY_ENV)
    payload = judge_payload(base_url=listener.base_url)
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(researcher)
    response = client.post("/api/grading/verifiers/", payload, format="json")
    assert response.status_code == 400 and "only http://127.0.0.1:" in response.json()["base_url"][0]
    dataset = make_dataset("other-port", questions=1, per_question=2)
    run = runs.execute_run(queued_run(legacy_config(listener, ALLOWED_KEY_ENV), dataset).pk)
    assert run.status == VerificationRun.Status.FAILED and "not on the list" in run.error
    assert listener.requests == []
