"""The judge client against a local OpenAI-compatible server, over real HTTP with the openai client."""

import itertools
import logging
import threading
from decimal import Decimal

import pytest

from grading.judges.client import (
    JudgeClient,
    JudgeInput,
    JudgeSettings,
    MissingApiKeyError,
)
from grading.judges.egress import EgressPolicy, EndpointRule, parse_entry
from grading.judges.service import judge_batch, judge_completion
from grading.judges.templates import DEFAULT_TEMPLATES, FINAL_JUDGMENT
from grading.models import JudgeResponseCache, PromptTemplate, Verdict, VerifierConfig
from grading.services import record_verdict
from tests.fakes.openai_server import CORRECT_MARKER, UNDECIDED_MARKER, EchoAuthorization, Raw, Reply, Slow, Status
from verifybench.models import Completion, Dataset, Question, ReferenceAnswer

KEY_ENV = "JUDGE_KEY_MATHLABEL_TEST"
_names = itertools.count(1)


def loopback_policy(base_url: str) -> EgressPolicy:
    """The judge's fake endpoint allowed, with the test key bound to it."""
    scheme, host, port = parse_entry(base_url)
    return EgressPolicy(
        endpoints=(EndpointRule(scheme, host, port, allow_private=True, key_envs=frozenset({KEY_ENV})),)
    )


@pytest.fixture
def judge_key(monkeypatch):
    key = "sk-test-4f1c9e0b7d2a6e35"
    monkeypatch.setenv(KEY_ENV, key)
    return key


@pytest.fixture
def make_judge(db, fake_openai, judge_key, local_judge_host):
    def make(template_name: str = "verifybench-final-judgment", **overrides) -> VerifierConfig:
        fields = {
            "name": f"fake-judge-{next(_names)}",
            "kind": VerifierConfig.Kind.JUDGE,
            "base_url": fake_openai.base_url,
            "model": "fake-judge-model",
            "api_key_env": KEY_ENV,
            "template": PromptTemplate.objects.get(name=template_name, version=1),
            "timeout_seconds": 5.0,
            "max_retries": 2,
            "backoff_base_seconds": 0.01,
            "concurrency_limit": 4,
            "price_input_per_million": Decimal("2.5"),
            "price_output_per_million": Decimal("10"),
            **overrides,
        }
        config = VerifierConfig(**fields)
        config.full_clean()
        config.save()
        return config

    return make


@pytest.fixture
def completion(db):
    dataset = Dataset.objects.create(name="judge-tests")
    question = Question.objects.create(dataset=dataset, external_id="q1", text="What is 1/2 + 1/4?", content_hash="h")
    ReferenceAnswer.objects.create(question=question, final_answer="3/4")
    return Completion.objects.create(
        question=question, external_id="c1", model_name="m", text=f"It is 0.75. {CORRECT_MARKER}", content_hash="h"
    )


class RecordedSleeps(list):
    def __call__(self, seconds):
        self.append(seconds)


def judge(config, text, **kwargs):
    return judge_completion(config, question="What is 1/2 + 1/4?", reference="3/4", completion=text, **kwargs)


def test_final_judgment_contract(make_judge, fake_openai, judge_key):
    config = make_judge("verifybench-final-judgment")
    right = judge(config, f"0.75 {CORRECT_MARKER}")
    wrong = judge(config, "0.5")
    assert (right.status, right.extracted_answer, right.attempts, right.cache_hit) == ("correct", "Yes", 1, False)
    assert (wrong.status, wrong.extracted_answer) == ("incorrect", "No")
    assert right.raw_output.endswith("Final Judgment: Yes")
    first = fake_openai.chat_requests[0]
    assert first.authorization == f"Bearer {judge_key}"
    assert first.body["model"] == "fake-judge-model"
    assert first.body["temperature"] == 0
    assert first.body["max_tokens"] == 2048
    assert "3/4" in first.messages[-1]["content"]
    expected_cost = (Decimal(right.prompt_tokens) * Decimal("2.5") + Decimal(right.completion_tokens) * 10) / 10**6
    assert right.prompt_tokens > 0 and right.completion_tokens > 0
    assert right.cost == expected_cost


def test_cot_extract_contract_makes_a_second_extraction_call(make_judge, fake_openai):
    config = make_judge("umath-cot-extract")
    right = judge(config, f"0.75 {CORRECT_MARKER}")
    wrong = judge(config, "0.5")
    undecided = judge(config, f"somewhere near 0.7 {UNDECIDED_MARKER}")
    assert (right.status, right.extracted_answer) == ("correct", "Yes")
    assert (wrong.status, wrong.extracted_answer) == ("incorrect", "No")
    assert (undecided.status, undecided.extracted_answer) == ("inconclusive", "Inconclusive")
    assert "Inconclusive" in undecided.reason
    assert len(fake_openai.chat_requests) == 6
    extraction_request = fake_openai.chat_requests[1]
    assert right.raw_output in extraction_request.messages[-1]["content"]
    assert right.extraction_output == "Yes"
    assert right.explanation == right.raw_output
    assert right.attempts == 2
    assert right.prompt_tokens == sum(
        len(m["content"].split()) for r in fake_openai.chat_requests[:2] for m in r.messages
    )


def test_boxed_contract(make_judge):
    config = make_judge("livemathbench-boxed")
    assert judge(config, f"0.75 {CORRECT_MARKER}").status == "correct"
    wrong = judge(config, "0.5")
    assert (wrong.status, wrong.extracted_answer) == ("incorrect", "no")


@pytest.mark.parametrize(
    "template_name, replies",
    [
        ("verifybench-final-judgment", ["The response is right."]),
        ("livemathbench-boxed", ["yes"]),
        ("umath-cot-extract", ["It is right.", "Probably, I guess, it depends on the reading"]),
    ],
)
def test_malformed_outputs_are_inconclusive_with_a_reason(make_judge, fake_openai, template_name, replies):
    config = make_judge(template_name)
    fake_openai.script(*(Reply(text) for text in replies))
    result = judge(config, f"0.75 {CORRECT_MARKER}")
    assert result.status == "inconclusive"
    assert result.reason
    assert not result.failed


def test_truncated_reply_says_it_was_cut_off(make_judge, fake_openai):
    fake_openai.script(Reply("The answers agree because", finish_reason="length"))
    result = judge(make_judge(), "0.75")
    assert result.status == "inconclusive"
    assert "cut off at max_tokens" in result.reason


def test_rate_limits_are_retried_after_the_requested_wait(make_judge, fake_openai):
    config = make_judge(max_retries=3)
    fake_openai.script(Status(429, retry_after="2"), Status(429, retry_after="1"))
    sleeps = RecordedSleeps()
    result = judge(config, f"0.75 {CORRECT_MARKER}", sleep=sleeps)
    assert (result.status, result.attempts, result.failed) == ("correct", 3, False)
    assert sleeps == [2.0, 1.0]
    assert len(fake_openai.chat_requests) == 3


def test_server_errors_until_giving_up_become_an_inconclusive_verdict(make_judge, fake_openai, completion):
    config = make_judge(max_retries=2, backoff_base_seconds=0.5)
    fake_openai.always(Status(500, message="upstream exploded"))
    sleeps = RecordedSleeps()
    result = judge(config, completion.text, sleep=sleeps)
    assert (result.status, result.failed, result.attempts) == ("inconclusive", True, 3)
    assert "HTTP 500" in result.reason and "upstream exploded" in result.reason and "3 attempt" in result.reason
    assert len(fake_openai.chat_requests) == 3
    assert 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0
    assert JudgeResponseCache.objects.count() == 0
    verdict = record_verdict(completion, config, result)
    assert (verdict.status, verdict.failed, verdict.attempts) == ("inconclusive", True, 3)
    assert "HTTP 500" in verdict.reason


@pytest.mark.parametrize(
    "answer",
    [
        Raw("OK"),
        Raw("<html><body>Bad gateway</body></html>", "text/html"),
        Raw('{"result": "yes"}', "application/json"),
    ],
    ids=["plain text", "html", "other json"],
)
def test_a_reply_that_is_not_a_chat_completion_is_a_failed_call(make_judge, fake_openai, answer):
    fake_openai.script(answer)
    result = judge(make_judge(max_retries=2), "0.75")
    assert (result.status, result.failed) == ("inconclusive", True)
    assert "not a chat completion" in result.reason
    assert len(fake_openai.chat_requests) == 1  # not retried: the endpoint answered, with the wrong thing
    assert JudgeResponseCache.objects.count() == 0


def test_client_errors_are_not_retried(make_judge, fake_openai):
    fake_openai.script(Status(400, message="model does not exist"))
    result = judge(make_judge(), "0.75", sleep=RecordedSleeps())
    assert (result.status, result.failed, result.attempts) == ("inconclusive", True, 1)
    assert "HTTP 400" in result.reason


def test_slow_replies_time_out_and_are_retried_then_inconclusive(make_judge, fake_openai):
    config = make_judge(timeout_seconds=0.3, max_retries=1)
    fake_openai.always(Slow(5.0))
    result = judge(config, f"0.75 {CORRECT_MARKER}")
    assert (result.status, result.failed, result.attempts) == ("inconclusive", True, 2)
    assert "no reply within 0.3 s" in result.reason
    assert len(fake_openai.chat_requests) == 2


def test_a_slow_first_reply_then_a_prompt_one_succeeds(make_judge, fake_openai):
    config = make_judge(timeout_seconds=0.3, max_retries=1)
    fake_openai.script(Slow(5.0))
    result = judge(config, f"0.75 {CORRECT_MARKER}")
    assert (result.status, result.attempts) == ("correct", 2)


def test_rerun_is_served_from_the_cache_without_a_request(make_judge, fake_openai):
    config = make_judge("umath-cot-extract")
    first = judge(config, f"0.75 {CORRECT_MARKER}")
    requests_after_first = len(fake_openai.chat_requests)
    again = judge(config, f"0.75 {CORRECT_MARKER}")
    assert len(fake_openai.chat_requests) == requests_after_first == 2
    assert (again.cache_hit, again.cost, again.attempts) == (True, Decimal(0), 0)
    assert (again.status, again.raw_output, again.extraction_output) == (
        first.status,
        first.raw_output,
        first.extraction_output,
    )
    assert again.prompt_tokens == first.prompt_tokens
    assert JudgeResponseCache.objects.count() == 1
    judge(config, "0.5")
    assert len(fake_openai.chat_requests) == 4


def test_a_different_model_misses_the_cache(make_judge, fake_openai):
    judge(make_judge(), "0.75")
    judge(make_judge(model="another-model"), "0.75")
    assert len(fake_openai.chat_requests) == 2


def test_batch_keeps_order_and_calls_once_per_distinct_prompt(make_judge, fake_openai):
    config = make_judge()
    items = [
        JudgeInput("Q", "3/4", f"a {CORRECT_MARKER}"),
        JudgeInput("Q", "3/4", "b"),
        JudgeInput("Q", "3/4", f"a {CORRECT_MARKER}"),
    ]
    results = judge_batch(config, items)
    assert [r.status for r in results] == ["correct", "incorrect", "correct"]
    assert [r.cache_hit for r in results] == [False, False, True]
    assert len(fake_openai.chat_requests) == 2


def test_concurrency_limit_is_honoured_by_a_batch(make_judge, fake_openai):
    config = make_judge(concurrency_limit=3)
    fake_openai.hold_in_groups_of(3)
    items = [JudgeInput("Q", "3/4", f"answer {n} {CORRECT_MARKER if n % 2 else ''}") for n in range(9)]
    results = judge_batch(config, items)
    assert [r.status for r in results] == ["incorrect", "correct"] * 4 + ["incorrect"]
    assert fake_openai.max_in_flight == 3
    assert len(fake_openai.chat_requests) == 9


def test_concurrency_limit_is_shared_by_clients_of_one_configuration(fake_openai, judge_key):
    template = next(t for t in DEFAULT_TEMPLATES if t.contract == FINAL_JUDGMENT)
    settings = JudgeSettings(
        config_key="shared-limit-test",
        name="shared",
        base_url=fake_openai.base_url,
        model="m",
        api_key_env=KEY_ENV,
        template=template,
        timeout_seconds=10,
        concurrency_limit=2,
    )
    fake_openai.hold_in_groups_of(2)
    outcomes = []

    def run(prefix):
        with JudgeClient(settings, policy=loopback_policy(fake_openai.base_url)) as client:
            outcomes.extend(client.judge_many([JudgeInput("Q", "R", f"{prefix}{n}") for n in range(4)]))

    threads = [threading.Thread(target=run, args=(prefix,)) for prefix in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(outcomes) == 8 and all(o.status == "incorrect" for o in outcomes)
    assert fake_openai.max_in_flight == 2


def test_missing_api_key_variable_is_a_clear_error(make_judge, fake_openai, monkeypatch):
    config = make_judge()
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(MissingApiKeyError, match=KEY_ENV):
        judge(config, "0.75")
    assert fake_openai.chat_requests == []


def test_api_key_is_never_stored_logged_or_echoed(make_judge, fake_openai, judge_key, completion, caplog):
    caplog.set_level(logging.DEBUG)
    config = make_judge(max_retries=1)
    fake_openai.script(
        Status(429, retry_after="0", message=f"Key {judge_key} is over its quota"),
        EchoAuthorization(),
        Status(401, message=f"Incorrect API key provided: {judge_key}"),
    )
    echoed = judge(config, completion.text)
    rejected = judge(config, "another answer")
    assert fake_openai.chat_requests[0].authorization == f"Bearer {judge_key}"
    assert "Bearer [redacted]" in echoed.raw_output
    assert "[redacted]" in rejected.reason
    record_verdict(completion, config, echoed)
    assert judge_key not in caplog.text
    assert all(judge_key not in repr(vars(result)) for result in (echoed, rejected))
    for model in (VerifierConfig, PromptTemplate, Verdict, JudgeResponseCache):
        for row in model.objects.values():
            assert all(judge_key not in str(value) for value in row.values()), model.__name__
