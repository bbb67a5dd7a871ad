import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from core.jobs.models import BackgroundJob

from . import cascade
from .judges import egress, parsers, templates
from .proofs.models import (  # noqa: F401  (Django finds the app's models here)
    Competition,
    ModelInfo,
    OfficialSolution,
    ProofProblem,
    ProofSubmission,
    Rubric,
    RubricInUseError,
    anonymous_submission_id,
)

ENV_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_TIMEOUT_SECONDS = 3600.0
MAX_CONCURRENCY = 1024


class AllowedJudgeHost(models.Model):
    """An endpoint LLM judge configurations may send requests to, and the key variables that may go with them. Only
    admins change the list.

    An entry is a scheme, a host and a port (written as a base URL: `https://api.openai.com`,
    `http://10.0.0.5:8000`): another port or scheme of the same host is another endpoint. `host` is a host name, an
    IP address, or `*.domain` for every sub-domain. `key_envs` names the environment variables whose keys may be
    sent to it; a key bound to one endpoint never goes to another. Unless `allow_private` is set, the host must
    resolve to public addresses only: loopback, private ranges and link-local addresses are refused.
    """

    class Scheme(models.TextChoices):
        HTTPS = "https", "https"
        HTTP = "http", "http"

    scheme = models.CharField(max_length=5, choices=Scheme.choices, default=Scheme.HTTPS)
    host = models.CharField(max_length=255)
    port = models.PositiveIntegerField(validators=[MinValueValidator(1), MaxValueValidator(65535)])
    key_envs = models.JSONField(
        default=list,
        blank=True,
        help_text="Names of the environment variables whose keys may be sent to this endpoint (never the keys).",
    )
    allow_private = models.BooleanField(
        default=False, help_text="Allow loopback, private and link-local addresses (e.g. a model served in-house)."
    )
    note = models.CharField(max_length=500, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["host", "port", "scheme"]
        verbose_name = "allowed judge endpoint"
        constraints = [
            models.UniqueConstraint(fields=["scheme", "host", "port"], name="one_allow_list_entry_per_endpoint"),
            models.CheckConstraint(condition=models.Q(port__gte=1, port__lte=65535), name="allowed_endpoint_port"),
        ]

    def __str__(self):
        return f"{self.base_url}{' (private addresses allowed)' if self.allow_private else ''}"

    @property
    def base_url(self) -> str:
        return self.rule().base_url

    def rule(self) -> egress.EndpointRule:
        return egress.EndpointRule(
            scheme=self.scheme,
            host=self.host,
            port=self.port,
            allow_private=self.allow_private,
            key_envs=frozenset(self.key_envs or ()),
        )

    def clean(self):
        errors = {}
        try:
            self.host = egress.validate_host_pattern(self.host)
        except ValueError as error:
            errors["host"] = str(error)
        if not isinstance(self.key_envs, list) or not all(
            isinstance(name, str) and ENV_VAR_NAME.match(name) for name in self.key_envs
        ):
            errors["key_envs"] = "A list of environment variable names (letters, digits, _), never keys."
        else:
            policy = egress.EgressPolicy(key_envs=frozenset(settings.JUDGE_API_KEY_ENVS))
            refused = [name for name in self.key_envs if not policy.key_env_allowed(name)]
            if refused:
                errors["key_envs"] = (
                    f"{', '.join(refused)} may not hold a judge key: list them in JUDGE_API_KEY_ENVS or name them "
                    f"{egress.KEY_ENV_PREFIX}...; server secrets never qualify."
                )
            self.key_envs = sorted(set(self.key_envs))
        if errors:
            raise ValidationError(errors)


def judge_egress_policy() -> egress.EgressPolicy:
    """The egress policy in force: key variables from the settings, endpoints from the admins' allow-list."""
    return egress.EgressPolicy(
        key_envs=frozenset(settings.JUDGE_API_KEY_ENVS),
        endpoints=tuple(entry.rule() for entry in AllowedJudgeHost.objects.order_by("host", "port", "scheme")),
    )


class TemplateInUseError(ValidationError):
    """A prompt template version that verdicts were produced with cannot change; save a new version."""


class Contract(models.TextChoices):
    FINAL_JUDGMENT = templates.FINAL_JUDGMENT, "Final Judgment: Yes/No (VerifyBench)"
    COT_EXTRACT = templates.COT_EXTRACT, "Free judgement + extraction call (U-MATH)"
    BOXED_YES_NO = templates.BOXED_YES_NO, "\\boxed{yes}/\\boxed{no} (LiveMathBench)"


class PromptTemplate(models.Model):
    CONTENT_FIELDS = ("contract", "system_template", "user_template", "extraction_template")

    name = models.CharField(max_length=200)
    version = models.PositiveIntegerField(default=1)
    contract = models.CharField(max_length=20, choices=Contract.choices)
    system_template = models.TextField(blank=True, help_text="Placeholders: {question}, {reference}, {completion}.")
    user_template = models.TextField(help_text="Placeholders: {question}, {reference}, {completion}.")
    extraction_template = models.TextField(
        blank=True, help_text="cot_extract only: the second call; the placeholder {judgment} receives the first reply."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="prompt_template_name_version_unique"),
        ]

    def __str__(self):
        return f"{self.name} v{self.version}"

    def clean(self):
        try:
            templates.validate_template_text(
                contract=self.contract,
                system_template=self.system_template,
                user_template=self.user_template,
                extraction_template=self.extraction_template,
            )
        except templates.TemplateError as error:
            raise ValidationError(str(error)) from error

    def is_used(self) -> bool:
        return self.pk is not None and self.verdicts.exists()

    def content(self) -> tuple[str, ...]:
        return tuple(getattr(self, field) for field in self.CONTENT_FIELDS)

    def save(self, *args, **kwargs):
        if self.pk is not None and self.is_used():
            stored = (
                PromptTemplate.objects.filter(pk=self.pk).values_list("name", "version", *self.CONTENT_FIELDS).first()
            )
            if stored is not None and stored != (self.name, self.version, *self.content()):
                raise TemplateInUseError(
                    f"{self} has verdicts; save the edit as a new version (save_prompt_template_version)."
                )
        super().save(*args, **kwargs)


class VerifierConfig(models.Model):
    class Kind(models.TextChoices):
        RULE = "rule", "Rule-based"
        JUDGE = "judge", "LLM judge"
        CASCADE = "cascade", "Cascade: rules, then a judge, then humans"
        EXTERNAL = "external", "Imported verdicts (computed elsewhere)"

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    workspace = models.ForeignKey(
        "core.Workspace",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="verifier_configs",
        help_text="The team that keeps it; empty: shared by every workspace (only admins change it).",
    )
    base_url = models.URLField(
        max_length=500, blank=True, help_text="OpenAI-compatible endpoint, e.g. http://host:8000/v1"
    )
    model = models.CharField(max_length=200, blank=True)
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        help_text="The NAME of the environment variable that holds the API key; the key itself is never stored.",
    )
    template = models.ForeignKey(
        PromptTemplate, null=True, blank=True, on_delete=models.PROTECT, related_name="verifier_configs"
    )
    temperature = models.FloatField(default=0.0, validators=[MinValueValidator(0.0)])
    max_tokens = models.PositiveIntegerField(null=True, blank=True, default=2048)
    timeout_seconds = models.FloatField(
        default=60.0, validators=[MinValueValidator(0.001), MaxValueValidator(MAX_TIMEOUT_SECONDS)]
    )
    max_retries = models.PositiveIntegerField(default=3, help_text="Retries after the first attempt of each call.")
    backoff_base_seconds = models.FloatField(
        default=1.0, validators=[MinValueValidator(0.0)], help_text="First retry waits about this long, doubling after."
    )
    concurrency_limit = models.PositiveIntegerField(
        default=4,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_CONCURRENCY)],
        help_text="Calls in flight at once to this judge, across every worker process and machine.",
    )
    requests_per_minute = models.PositiveIntegerField(
        default=0, help_text="At most this many calls a minute, across every worker; 0 for no limit."
    )
    tokens_per_minute = models.PositiveIntegerField(
        default=0,
        help_text="At most this many prompt and completion tokens a minute, across every worker; 0 for no limit.",
    )
    price_input_per_million = models.DecimalField(max_digits=12, decimal_places=4, default=0)
    price_output_per_million = models.DecimalField(max_digits=12, decimal_places=4, default=0)
    use_reference = models.BooleanField(default=True)
    cascade_judge = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="cascades",
        limit_choices_to={"kind": "judge"},
        help_text="Cascade only: the LLM judge asked on what the rules leave inconclusive.",
    )
    cascade_sample_rate = models.FloatField(
        default=0.0,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Cascade only: the share of rule-decided completions also sent to the judge, to measure "
        "disagreement; where the two disagree, humans decide.",
    )
    provenance = models.TextField(
        blank=True, help_text="Imported verdicts: where they came from (the files, who imported them and when)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=models.Q(temperature__gte=0), name="verifier_temperature_not_negative"),
            models.CheckConstraint(condition=models.Q(timeout_seconds__gt=0), name="verifier_timeout_positive"),
            models.CheckConstraint(
                condition=models.Q(timeout_seconds__lte=MAX_TIMEOUT_SECONDS), name="verifier_timeout_at_most_an_hour"
            ),
            models.CheckConstraint(
                condition=models.Q(concurrency_limit__gte=1), name="verifier_concurrency_at_least_one"
            ),
            models.CheckConstraint(
                condition=models.Q(kind__in=["rule", "external"])
                | (models.Q(kind="cascade") & models.Q(cascade_judge__isnull=False))
                | (
                    models.Q(kind="judge")
                    & ~models.Q(base_url="")
                    & ~models.Q(model="")
                    & ~models.Q(api_key_env="")
                    & models.Q(template__isnull=False)
                ),
                name="judge_config_is_complete",
            ),
            models.CheckConstraint(
                condition=models.Q(cascade_sample_rate__gte=0) & models.Q(cascade_sample_rate__lte=1),
                name="verifier_cascade_sample_rate_is_a_share",
            ),
        ]

    def __str__(self):
        return self.name

    def clean(self):
        errors = {}
        if self.kind == self.Kind.JUDGE:
            for field in ("base_url", "model", "api_key_env"):
                if not getattr(self, field):
                    errors[field] = "Required for an LLM judge."
            if self.template_id is None:
                errors["template"] = "Required for an LLM judge."
        if self.kind == self.Kind.CASCADE:
            judge = self.cascade_judge if self.cascade_judge_id is not None else None
            if judge is None:
                errors["cascade_judge"] = "A cascade needs the LLM judge it asks after the rules."
            elif judge.kind != self.Kind.JUDGE:
                errors["cascade_judge"] = f"{judge.name} is not an LLM judge configuration."
            elif self.pk is not None and judge.pk == self.pk:
                errors["cascade_judge"] = "A cascade cannot ask itself."
        elif self.cascade_judge_id is not None:
            errors["cascade_judge"] = "Only a cascade asks another judge."
        if not 0.0 <= (self.cascade_sample_rate or 0.0) <= 1.0:
            errors["cascade_sample_rate"] = "A share between 0 and 1."
        if self.api_key_env and not ENV_VAR_NAME.match(self.api_key_env):
            errors["api_key_env"] = "Give the name of an environment variable (letters, digits, _), never the key."
        self._check_egress(errors)
        if errors:
            raise ValidationError(errors)

    def _check_egress(self, errors: dict) -> None:
        policy = judge_egress_policy()
        if self.api_key_env and "api_key_env" not in errors:
            try:
                policy.check_key_env(self.api_key_env)
            except egress.EgressRefused as refused:
                errors["api_key_env"] = str(refused)
        if self.base_url and "base_url" not in errors:
            try:
                rule = policy.check_url(self.base_url)
            except egress.EgressRefused as refused:
                errors["base_url"] = str(refused)
                return
            if self.api_key_env and "api_key_env" not in errors:
                try:
                    policy.check_key_binding(rule, self.api_key_env)
                except egress.EgressRefused as refused:
                    errors["api_key_env"] = str(refused)


class CascadeStage(models.TextChoices):
    RULES = cascade.RULES, "Rules"
    JUDGE = cascade.JUDGE, "LLM judge"
    HUMAN = cascade.HUMAN, "Humans"


class Verdict(models.Model):
    """What an automatic verifier said about one completion. Never a human label."""

    class Status(models.TextChoices):
        CORRECT = parsers.CORRECT, "Correct"
        INCORRECT = parsers.INCORRECT, "Incorrect"
        INCONCLUSIVE = parsers.INCONCLUSIVE, "Inconclusive"

    # The unique (completion, verifier) and the (verifier, ...) indexes serve these keys' lookups: a verdict table of
    # millions of rows keeps no index of its own per key (each one slows every chunk a run writes).
    completion = models.ForeignKey(
        "verifybench.Completion", on_delete=models.CASCADE, related_name="verdicts", db_index=False
    )
    verifier = models.ForeignKey(VerifierConfig, on_delete=models.PROTECT, related_name="verdicts", db_index=False)
    prompt_template = models.ForeignKey(
        PromptTemplate,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="verdicts",
        db_index=False,
        help_text="The template version the judge used; empty for rule-based verifiers.",
    )
    status = models.CharField(max_length=12, choices=Status.choices)
    extracted_answer = models.TextField(blank=True)
    explanation = models.TextField(blank=True)
    reason = models.TextField(blank=True, help_text="Why the verdict is inconclusive, or how it was decided.")
    raw_output = models.TextField(blank=True)
    extraction_output = models.TextField(blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(
        max_digits=14, decimal_places=8, default=0, help_text="Spent on this run; 0 on a cache hit."
    )
    attempts = models.PositiveIntegerField(default=0)
    cache_hit = models.BooleanField(default=False)
    failed = models.BooleanField(default=False, help_text="The endpoint could not be reached or kept failing.")
    stage = models.CharField(
        max_length=10,
        blank=True,
        choices=CascadeStage.choices,
        help_text="Cascade verdicts only: the stage that decided, or humans when the cascade left it to them.",
    )
    rule_status = models.CharField(max_length=12, blank=True, help_text="Cascade verdicts only: what the rules said.")
    judge_status = models.CharField(
        max_length=12, blank=True, help_text="Cascade verdicts only: what the judge said; empty when not asked."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["completion_id", "verifier_id"]
        constraints = [
            models.UniqueConstraint(fields=["completion", "verifier"], name="one_verdict_per_completion_and_verifier"),
        ]
        indexes = [
            models.Index(fields=["verifier", "status"]),
            models.Index(fields=["verifier", "stage"], name="verdict_verifier_stage"),
            # rule-based verdicts have no template: only the judges' verdicts are indexed by it
            models.Index(
                fields=["prompt_template"],
                name="verdict_prompt_template",
                condition=models.Q(prompt_template__isnull=False),
            ),
        ]

    def __str__(self):
        return f"{self.verifier} on {self.completion_id}: {self.status}"

    @property
    def route(self) -> str:
        """Why a cascade left this completion to humans: disputed or undecided; "" otherwise."""
        return cascade.route_of(self.stage, self.rule_status, self.judge_status)


class JudgeResponseCache(models.Model):
    key = models.CharField(max_length=64, unique=True)
    template_name = models.CharField(max_length=200)
    template_version = models.PositiveIntegerField()
    model = models.CharField(max_length=200)
    raw_output = models.TextField()
    extraction_output = models.TextField(blank=True)
    status = models.CharField(max_length=12, choices=Verdict.Status.choices)
    extracted_answer = models.TextField(blank=True)
    reason = models.TextField(blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "judge response cache entry"
        verbose_name_plural = "judge response cache"

    def __str__(self):
        return f"{self.template_name} v{self.template_version} / {self.model} / {self.key[:12]}"


# ---------------------------------------------------------------- verification runs and selections


class VerificationRun(BackgroundJob):
    """One verifier configuration applied to a scope of completions, as a Celery job (grading.tasks).

    The scope is a dataset or an annotation project's completions, narrowed by optional filters. Completions are
    taken in id order, in chunks; each chunk's verdicts and the run's progress are committed together, so a run that
    dies loses at most its current chunk, and a resumed run goes on from the completions that still have no usable
    verdict for this configuration.
    """

    verifier = models.ForeignKey(VerifierConfig, on_delete=models.PROTECT, related_name="runs")
    dataset = models.ForeignKey(
        "verifybench.Dataset", null=True, blank=True, on_delete=models.CASCADE, related_name="verification_runs"
    )
    project = models.ForeignKey(
        "annotation.AnnotationProject",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="verification_runs",
    )
    answer_types = models.JSONField(default=list, blank=True, help_text="Fine codes (A1) or coarse classes (A).")
    domains = models.JSONField(default=list, blank=True)
    model_names = models.JSONField(default=list, blank=True, help_text="Completion model names.")
    chunk_size = models.PositiveIntegerField(default=100, validators=[MinValueValidator(1)])
    options = models.JSONField(
        default=dict, blank=True, help_text="chunk_delay: seconds to pause after each chunk (for tests and demos)."
    )
    counts = models.JSONField(default=dict, blank=True, help_text="Verdicts in scope by status, and failed calls.")
    redo_from = models.DateTimeField(
        null=True, blank=True, help_text="Set by a restart: only verdicts written since count as done."
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(dataset__isnull=False) & models.Q(project__isnull=True))
                | (models.Q(dataset__isnull=True) & models.Q(project__isnull=False)),
                name="verification_run_has_one_scope",
            ),
            models.CheckConstraint(condition=models.Q(chunk_size__gte=1), name="verification_run_chunk_positive"),
        ]
        indexes = [models.Index(fields=["status", "created_at"], name="verificationrun_status_created")]

    def __str__(self):
        return f"run {self.pk} of {self.verifier} ({self.status})"

    @property
    def total(self) -> int:
        """Completions in scope."""
        return self.progress_total

    @property
    def done(self) -> int:
        """Completions in scope with a usable verdict."""
        return self.progress_done


class RunChunk(models.Model):
    """A stretch of a run's pending completions, by id, that one worker process verifies and commits whole.

    A run's execution plans its chunks when it starts; any worker process then claims one (`token`), keeps its
    heartbeat fresh while it works, and commits its verdicts, the chunk's end and the run's progress in one
    transaction that checks the token. A chunk whose heartbeat went stale (its worker died) is claimed again."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    run = models.ForeignKey(VerificationRun, on_delete=models.CASCADE, related_name="chunks")
    first_id = models.BigIntegerField(help_text="The first completion id of the stretch.")
    last_id = models.BigIntegerField(help_text="The last completion id of the stretch.")
    size = models.PositiveIntegerField(help_text="Pending completions in the stretch when it was planned.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    token = models.CharField(max_length=32, blank=True, help_text="Identifies the worker that holds the chunk.")
    holder = models.CharField(max_length=200, blank=True, help_text="host:pid of the worker that last claimed it.")
    claims = models.PositiveIntegerField(default=0, help_text="How many times a worker took it.")
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    verified = models.PositiveIntegerField(default=0, help_text="Usable verdicts its commit wrote.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run_id", "first_id"]
        indexes = [models.Index(fields=["run", "status", "first_id"], name="runchunk_run_status_first")]
        constraints = [
            models.CheckConstraint(condition=models.Q(first_id__lte=models.F("last_id")), name="runchunk_range")
        ]

    def __str__(self):
        return f"chunk {self.first_id}-{self.last_id} of run {self.run_id} ({self.status})"


class JudgeCallLease(models.Model):
    """One worker process's share of a judge configuration's concurrency limit.

    The shares of the live holders never add up to more than the limit: a holder raises its own only under a lock
    on the configuration, within what the others leave, and uses no more than its share at any moment. A holder
    that stops renewing is forgotten after `grading.judges.limits.LEASE_SECONDS`; one that cannot renew in time
    stops starting calls (it fences itself) before anyone forgets it."""

    verifier = models.ForeignKey(VerifierConfig, on_delete=models.CASCADE, related_name="call_leases")
    holder = models.CharField(max_length=200)
    granted = models.PositiveIntegerField(default=0, help_text="Calls it may have in flight.")
    wanted = models.PositiveIntegerField(default=0, help_text="Calls it has in flight or waiting.")
    paused_until = models.DateTimeField(
        null=True, blank=True, help_text="The endpoint asked to slow down (429): nobody starts a call before this."
    )
    renewed_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["verifier", "holder"], name="one_call_lease_per_holder")]

    def __str__(self):
        return f"{self.holder}: {self.granted} of {self.verifier}"


class SelectionRecord(models.Model):
    """How the completions of an annotation project were picked: strategy, parameters and the full report."""

    project = models.OneToOneField(
        "annotation.AnnotationProject", on_delete=models.CASCADE, related_name="selection_record"
    )
    dataset = models.ForeignKey("verifybench.Dataset", on_delete=models.CASCADE, related_name="selection_records")
    strategy = models.CharField(max_length=30)
    verifiers = models.ManyToManyField(VerifierConfig, related_name="selection_records")
    seed = models.BigIntegerField(null=True, blank=True)
    parameters = models.JSONField(default=dict, blank=True)
    report = models.JSONField(default=dict, blank=True)
    picked = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.strategy} selection for {self.project}"
