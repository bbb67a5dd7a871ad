"""Call an LLM judge on any OpenAI-compatible endpoint, with retries, a concurrency limit and a cache.

The `openai` client does the HTTP with its own retries switched off; the retry policy here is
exponential backoff with jitter on 408/429/5xx, timeouts and connection errors, honouring
Retry-After, for at most `1 + max_retries` attempts per call. The API key is read from the
environment variable the configuration names and never leaves this module: it is not logged,
not cached and is redacted from anything the endpoint sends back.

Nothing here imports Django: the cache and the egress policy are given by the caller (`grading.judges.service` gives
the database cache and the policy of the settings and the admins' host list).
"""

from __future__ import annotations

import email.utils
import logging
import os
import random
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletion

from .caching import CachedResponse, ResponseCache, judge_cache_key
from .egress import DEFAULT_PORTS, EgressPolicy, EgressRefused, EndpointRule, split_url
from .parsers import INCONCLUSIVE, ParsedVerdict, parse_output
from .stream import CallGate
from .templates import COT_EXTRACT, TemplateText, render_extraction_messages, render_messages

logger = logging.getLogger(__name__)

RETRYABLE_STATUSES = frozenset({408, 429})
MAX_BACKOFF_SECONDS = 60.0
MAX_RETRY_AFTER_SECONDS = 120.0
REDACTED = "[redacted]"
ONE_MILLION = Decimal(1_000_000)


class JudgeConfigurationError(RuntimeError):
    """A verifier configuration that cannot be used to call a judge."""


class MissingApiKeyError(JudgeConfigurationError):
    pass


class NotAChatCompletion(Exception):
    """The endpoint answered 200 with something that is not an OpenAI chat completion (text, HTML, other JSON)."""


class EndpointNotAllowedError(JudgeConfigurationError):
    """The configuration names a key variable or an endpoint that the egress policy refuses."""


class _GuardedTransport(httpx2.HTTPTransport):
    """Before each request: the endpoint must be the allowed one the client was made for, and its host must resolve
    only to allowed addresses; the request then goes to the address that was checked (the name keeps its place in
    the Host header and in TLS), so nothing resolves it a second time. Its pool holds `connections` connections."""

    def __init__(self, policy: EgressPolicy, rule: EndpointRule, *, connections: int = 100, resolve=None, **kwargs):
        kwargs.setdefault("limits", httpx2.Limits(max_connections=connections, max_keepalive_connections=connections))
        super().__init__(**kwargs)
        self._policy, self._rule = policy, rule
        self._resolve = resolve

    def handle_request(self, request):
        scheme, host = request.url.scheme, request.url.host
        port = request.url.port or DEFAULT_PORTS.get(scheme, 443)
        if not self._rule.matches(scheme, host, port):
            raise EgressRefused(f"the request to {scheme}://{host}:{port} is not to the endpoint {self._rule.base_url}")
        extra = {"resolve": self._resolve} if self._resolve is not None else {}
        address = self._policy.check_addresses(self._rule, host, port, **extra)[0]
        if address != host:
            request.url = request.url.copy_with(host=address)
            request.extensions = {**request.extensions, "sni_hostname": host}
        return super().handle_request(request)


@dataclass(frozen=True)
class JudgeSettings:
    """Everything the client needs from a judge VerifierConfig, as plain values."""

    config_key: str
    name: str
    base_url: str
    model: str
    api_key_env: str
    template: TemplateText
    template_id: int | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    timeout_seconds: float = 60.0
    max_retries: int = 3
    backoff_base_seconds: float = 1.0
    concurrency_limit: int = 4
    requests_per_minute: int = 0
    tokens_per_minute: int = 0
    price_input_per_million: Decimal = Decimal(0)
    price_output_per_million: Decimal = Decimal(0)
    use_reference: bool = True

    @classmethod
    def from_config(cls, config) -> JudgeSettings:
        if getattr(config, "kind", "judge") != "judge":
            raise JudgeConfigurationError(f"Verifier config {config.name!r} is not an LLM judge.")
        missing = [field for field in ("base_url", "model", "api_key_env") if not getattr(config, field, "")]
        if getattr(config, "template", None) is None:
            missing.append("template")
        if missing:
            raise JudgeConfigurationError(f"Judge config {config.name!r} lacks {', '.join(missing)}.")
        return cls(
            config_key=str(config.pk if config.pk is not None else config.name),
            name=config.name,
            base_url=config.base_url,
            model=config.model,
            api_key_env=config.api_key_env,
            template=TemplateText.from_model(config.template),
            template_id=config.template.pk,
            temperature=float(config.temperature),
            max_tokens=config.max_tokens or None,
            timeout_seconds=float(config.timeout_seconds),
            max_retries=int(config.max_retries),
            backoff_base_seconds=float(config.backoff_base_seconds),
            concurrency_limit=max(1, int(config.concurrency_limit)),
            requests_per_minute=int(getattr(config, "requests_per_minute", 0) or 0),
            tokens_per_minute=int(getattr(config, "tokens_per_minute", 0) or 0),
            price_input_per_million=Decimal(config.price_input_per_million),
            price_output_per_million=Decimal(config.price_output_per_million),
            use_reference=bool(config.use_reference),
        )


@dataclass(frozen=True)
class JudgeInput:
    question: str
    reference: str
    completion: str


@dataclass(frozen=True)
class JudgeResult:
    status: str
    extracted_answer: str = ""
    explanation: str = ""
    reason: str = ""
    raw_output: str = ""
    extraction_output: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal = Decimal(0)
    attempts: int = 0
    cache_hit: bool = False
    failed: bool = False
    template_id: int | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class CallOutcome:
    """One chat call after retries: either the reply text or the error that ended it."""

    text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 0
    finish_reason: str = ""
    error: str = ""


_GATES: dict[tuple[str, int, int, int], CallGate] = {}
_GATES_LOCK = threading.Lock()


def process_gate(settings: JudgeSettings) -> CallGate:
    """The gate every client of one configuration in this process shares when no other gate is given (its whole
    limit; a run's calls use a gate whose share of the limit is leased across processes instead)."""
    key = (
        settings.config_key,
        settings.concurrency_limit,
        settings.requests_per_minute,
        settings.tokens_per_minute,
    )
    with _GATES_LOCK:
        gate = _GATES.get(key)
        if gate is None:
            gate = _GATES[key] = CallGate(
                settings.concurrency_limit,
                requests_per_minute=settings.requests_per_minute,
                tokens_per_minute=settings.tokens_per_minute,
            )
        return gate


def retry_after_seconds(headers, *, now: datetime | None = None) -> float | None:
    """The wait a 429/503 asks for, from `retry-after-ms` or `Retry-After` (seconds or HTTP date)."""
    if headers is None:
        return None
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, min(float(milliseconds) / 1000, MAX_RETRY_AFTER_SECONDS))
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        seconds = (moment - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, min(seconds, MAX_RETRY_AFTER_SECONDS))


def backoff_seconds(attempt: int, base: float, jitter: float) -> float:
    """Exponential backoff for the wait after failed attempt `attempt` (1-based); jitter in [0, 1)."""
    ceiling = min(MAX_BACKOFF_SECONDS, base * (2 ** (attempt - 1)))
    return ceiling * (0.5 + 0.5 * jitter)


def cost_of(prompt_tokens: int, completion_tokens: int, settings: JudgeSettings) -> Decimal:
    return (
        Decimal(prompt_tokens) * settings.price_input_per_million
        + Decimal(completion_tokens) * settings.price_output_per_million
    ) / ONE_MILLION


class JudgeClient:
    """One judge configuration, calling it through `openai.OpenAI` clients (one per calling thread); safe to share
    between threads."""

    def __init__(
        self,
        settings: JudgeSettings,
        *,
        policy: EgressPolicy,
        cache: ResponseCache | None = None,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[], float] = random.random,
        gate: CallGate | None = None,
        resolve=None,
    ):
        # Every check comes before the key is read: a refused variable is never even looked at.
        try:
            self._rule = policy.check_request(settings.base_url, settings.api_key_env)
            _, host, port = split_url(settings.base_url)
            policy.check_addresses(self._rule, host, port, **({"resolve": resolve} if resolve is not None else {}))
        except EgressRefused as refused:
            raise EndpointNotAllowedError(f"Judge config {settings.name!r}: {refused}") from None
        api_key = os.environ.get(settings.api_key_env, "")
        if not api_key.strip():
            raise MissingApiKeyError(
                f"The environment variable {settings.api_key_env} is not set; judge config "
                f"{settings.name!r} reads its API key from it. Export the key under that name."
            )
        self.settings = settings
        self.cache = cache
        self._api_key = api_key
        self._sleep = sleep
        self._jitter = jitter
        self.gate = gate if gate is not None else process_gate(settings)
        self._policy = policy
        self._resolve = resolve
        self._tls = ssl.create_default_context()
        self._local = threading.local()
        self._clients: list[openai.OpenAI] = []
        self._clients_lock = threading.Lock()

    @property
    def _openai(self) -> openai.OpenAI:
        """The calling thread's HTTP client: one keep-alive connection each, so the calls in flight (one per thread,
        at most the limit) hold at most the limit's connections, and no call scans a shared pool for a free one."""
        client = getattr(self._local, "client", None)
        if client is None:
            client = openai.OpenAI(
                base_url=self.settings.base_url,
                api_key=self._api_key,
                max_retries=0,
                timeout=self.settings.timeout_seconds,
                http_client=openai.DefaultHttpxClient(
                    follow_redirects=False,
                    transport=_GuardedTransport(
                        self._policy, self._rule, connections=1, resolve=self._resolve, verify=self._tls
                    ),
                ),
            )
            self._local.client = client
            with self._clients_lock:
                self._clients.append(client)
        return client

    def close(self) -> None:
        with self._clients_lock:
            clients, self._clients = self._clients, []
        for client in clients:
            client.close()

    def __enter__(self) -> JudgeClient:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def judge(self, item: JudgeInput) -> JudgeResult:
        return self.judge_many([item])[0]

    def judge_many(self, items: Sequence[JudgeInput]) -> list[JudgeResult]:
        """Judge items in order. Cache reads and writes happen in the calling thread; only the HTTP
        calls run in the pool, at most `concurrency_limit` at a time."""
        keyed = [(self.first_messages(item), item) for item in items]
        keys = [self.cache_key(messages) for messages, _ in keyed]
        results: dict[str, JudgeResult] = {}
        pending: dict[str, list[dict[str, str]]] = {}
        for key, (messages, _) in zip(keys, keyed):
            if key in results or key in pending:
                continue
            cached = self.cache.get(key) if self.cache is not None else None
            if cached is not None:
                results[key] = self.result_from_cache(cached)
            else:
                pending[key] = messages
        if pending:
            workers = min(self.settings.concurrency_limit, len(pending))
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judge") as pool:
                fresh = dict(zip(pending, pool.map(self.judge_uncached, pending.values())))
            for key, (result, cacheable) in fresh.items():
                results[key] = result
                if cacheable and self.cache is not None:
                    self.cache.put(
                        key,
                        self.cache_entry(result),
                        template_name=self.settings.template.name,
                        template_version=self.settings.template.version,
                        model=self.settings.model,
                    )
        ordered, seen = [], set()
        for key in keys:
            result = results[key]
            if key in seen and not result.cache_hit:
                result = replace(result, cache_hit=True, cost=Decimal(0), attempts=0)
            seen.add(key)
            ordered.append(result)
        return ordered

    def first_messages(self, item: JudgeInput) -> list[dict[str, str]]:
        return render_messages(
            self.settings.template,
            question=item.question,
            reference=item.reference,
            completion=item.completion,
            use_reference=self.settings.use_reference,
        )

    def cache_key(self, messages: list[dict[str, str]]) -> str:
        return judge_cache_key(
            template_name=self.settings.template.name,
            template_version=self.settings.template.version,
            model=self.settings.model,
            base_url=self.settings.base_url,
            messages=messages,
            temperature=self.settings.temperature,
            max_tokens=self.settings.max_tokens,
        )

    def result_from_cache(self, cached: CachedResponse) -> JudgeResult:
        parsed = parse_output(
            self.settings.template.contract, cached.raw_output, extraction_raw=cached.extraction_output
        )
        return JudgeResult(
            status=parsed.status,
            extracted_answer=parsed.answer,
            explanation=parsed.explanation,
            reason=parsed.reason,
            raw_output=cached.raw_output,
            extraction_output=cached.extraction_output,
            prompt_tokens=cached.prompt_tokens,
            completion_tokens=cached.completion_tokens,
            cost=Decimal(0),
            attempts=0,
            cache_hit=True,
            template_id=self.settings.template_id,
        )

    @staticmethod
    def cache_entry(result: JudgeResult) -> CachedResponse:
        return CachedResponse(
            raw_output=result.raw_output,
            extraction_output=result.extraction_output,
            status=result.status,
            extracted_answer=result.extracted_answer,
            reason=result.reason,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
        )

    def judge_uncached(self, messages: list[dict[str, str]]) -> tuple[JudgeResult, bool]:
        """One judgement over HTTP (two calls for cot_extract); returns the result and whether to cache it."""
        template = self.settings.template
        first = self._chat(messages)
        if first.error:
            return self._failure(first.error, [first]), False
        extraction = CallOutcome()
        if template.contract == COT_EXTRACT:
            extraction = self._chat(render_extraction_messages(template, judgment=first.text))
            if extraction.error:
                return self._failure(extraction.error, [first, extraction], raw_output=first.text), False
        parsed = parse_output(template.contract, first.text, extraction_raw=extraction.text)
        parsed = self._explain_truncation(parsed, [first, extraction])
        calls = [first, extraction]
        prompt_tokens = sum(call.prompt_tokens for call in calls)
        completion_tokens = sum(call.completion_tokens for call in calls)
        result = JudgeResult(
            status=parsed.status,
            extracted_answer=parsed.answer,
            explanation=parsed.explanation,
            reason=parsed.reason,
            raw_output=first.text,
            extraction_output=extraction.text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost=cost_of(prompt_tokens, completion_tokens, self.settings),
            attempts=sum(call.attempts for call in calls),
            template_id=self.settings.template_id,
        )
        cacheable = bool(first.text.strip()) and (template.contract != COT_EXTRACT or bool(extraction.text.strip()))
        return result, cacheable

    @staticmethod
    def _explain_truncation(parsed: ParsedVerdict, calls: list[CallOutcome]) -> ParsedVerdict:
        if parsed.status == INCONCLUSIVE and any(call.finish_reason == "length" for call in calls):
            return replace(parsed, reason=f"{parsed.reason} The reply was cut off at max_tokens.".strip())
        return parsed

    def _failure(self, error: str, calls: list[CallOutcome], raw_output: str = "") -> JudgeResult:
        prompt_tokens = sum(call.prompt_tokens for call in calls)
        completion_tokens = sum(call.completion_tokens for call in calls)
        return JudgeResult(
            status=INCONCLUSIVE,
            reason=f"The judge endpoint failed: {error}",
            raw_output=raw_output,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost=cost_of(prompt_tokens, completion_tokens, self.settings),
            attempts=sum(call.attempts for call in calls),
            failed=True,
            template_id=self.settings.template_id,
        )

    def _chat(self, messages: list[dict[str, str]]) -> CallOutcome:
        max_attempts = self.settings.max_retries + 1
        request: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": self.settings.temperature,
        }
        if self.settings.max_tokens:
            request["max_tokens"] = self.settings.max_tokens
        attempt = 0
        while True:
            attempt += 1
            retry_after = None
            try:
                with self.gate.call() as ticket:
                    try:
                        # The request is plain JSON already: posted as it is, without the typed-parameter
                        # transform of chat.completions.create (a quarter of a call's CPU at hundreds a second).
                        response = self._openai.post("/chat/completions", body=request, cast_to=ChatCompletion)
                    except openai.APIStatusError as error:
                        if error.status_code == 429:
                            ticket.throttled_for = retry_after_seconds(error.response.headers) or 0.0
                        raise
                    outcome = self._outcome(response, attempt)
                    ticket.tokens = outcome.prompt_tokens + outcome.completion_tokens
            except openai.APIStatusError as error:
                description = self._redact(f"HTTP {error.status_code}: {error.message}")[:500]
                retryable = error.status_code in RETRYABLE_STATUSES or error.status_code >= 500
                retry_after = retry_after_seconds(error.response.headers)
            except openai.APITimeoutError:
                description = f"no reply within {self.settings.timeout_seconds:g} s"
                retryable = True
            except openai.APIConnectionError as error:
                description = self._redact(f"connection error: {error.__cause__ or error}")[:500]
                retryable = not isinstance(error.__cause__, EgressRefused)
            except NotAChatCompletion as error:
                description = self._redact(str(error))[:500]
                retryable = False
            except EgressRefused as refused:
                description = f"refused before sending: {refused}"
                retryable = False
            else:
                return outcome
            if not retryable or attempt >= max_attempts:
                return CallOutcome(attempts=attempt, error=f"{description} (after {attempt} attempt(s))")
            delay = (
                retry_after
                if retry_after is not None
                else backoff_seconds(attempt, self.settings.backoff_base_seconds, self._jitter())
            )
            logger.warning(
                "Judge %s: attempt %d of %d failed (%s); retrying in %.2f s",
                self.settings.name,
                attempt,
                max_attempts,
                description,
                delay,
            )
            self._sleep(delay)

    def _outcome(self, response, attempt: int) -> CallOutcome:
        try:
            if not isinstance(response.choices, list):
                raise TypeError("no list of choices")
            choice = response.choices[0] if response.choices else None
            text = (choice.message.content or "") if choice is not None and choice.message is not None else ""
            usage = response.usage
            return CallOutcome(
                text=self._redact(str(text)),
                prompt_tokens=int(usage.prompt_tokens or 0) if usage else 0,
                completion_tokens=int(usage.completion_tokens or 0) if usage else 0,
                attempts=attempt,
                finish_reason=str(choice.finish_reason or "") if choice is not None else "",
            )
        except (AttributeError, TypeError, ValueError, IndexError, KeyError) as error:
            shown = response if isinstance(response, str) else type(response).__name__
            raise NotAChatCompletion(
                f"the endpoint's reply is not a chat completion ({type(error).__name__}); it began: {str(shown)[:200]!r}"
            ) from None

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, REDACTED) if self._api_key in text else text


def judge_completion(
    config,
    *,
    question: str,
    reference: str,
    completion: str,
    policy: EgressPolicy,
    cache: ResponseCache | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> JudgeResult:
    """Judge one completion with a judge VerifierConfig (or JudgeSettings), within the egress policy."""
    return judge_batch(config, [JudgeInput(question, reference, completion)], policy=policy, cache=cache, sleep=sleep)[
        0
    ]


def judge_batch(
    config,
    items: Sequence[JudgeInput],
    *,
    policy: EgressPolicy,
    cache: ResponseCache | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[JudgeResult]:
    """Judge many completions in parallel, bounded by the configuration's concurrency limit."""
    settings = config if isinstance(config, JudgeSettings) else JudgeSettings.from_config(config)
    with JudgeClient(settings, policy=policy, cache=cache, sleep=sleep) as client:
        return client.judge_many(items)
