"""Verification runs: create, cancel, resume, restart, and the chunked work of one execution.

A run is a job kind of the shared runner (core.jobs.runner), which claims it, keeps its heartbeat and records how it
ended. Its work repeats: take the next `chunk_size` completions of the scope (in id order) that have no usable verdict
for the run's verifier, verify them outside any transaction, and commit their verdicts (`record_verdict`) together
with the run's progress in one transaction that first checks the execution still owns the run. A killed execution
therefore loses at most its current chunk, and whoever resumes the run finds every committed chunk done and skips it.
A verdict whose judge call failed is not usable: a resumed run tries it again. A restart verifies the whole scope
again: a verdict counts as done only once it was written after the restart (`redo_from`).

A cascade configuration (kind "cascade") is verified in the same chunks: the rules decide what they can, its judge
is asked on what they leave inconclusive and on a deterministic sample of what they decided, and what the judge
leaves inconclusive, or where the sampled check disagrees with the rules, is left to humans (grading.cascade).
Each verdict keeps the stage that decided, both stages' verdicts and the judge's tokens and cost. A failed judge
call makes the completion's verdict unusable like any judge run's, so a resume asks again.

Options (`VerificationRun.options`):
  chunk_delay  seconds to pause after each committed chunk (0 by default), so tests and demos can stop a run midway.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, replace
from datetime import timedelta
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Exists, OuterRef
from django.utils import timezone

from annotation.models import Item
from core import events, taxonomy
from core.jobs import protocol, runner
from core.jobs.runner import EventDetails, Execution, JobKind
from verifybench.models import Completion, Domain

from . import cascade
from .answercheck import BatchItem, verify_batch
from .judges.client import JudgeInput, JudgeResult
from .judges.service import judge_batch
from .models import Verdict, VerificationRun, VerifierConfig
from .selectors import answer_type_condition, cascade_figures
from .services import record_verdict

logger = logging.getLogger(__name__)

MAX_CHUNK_SIZE = 10_000
MAX_CHUNK_DELAY = 60.0
COUNT_KEYS = (Verdict.Status.CORRECT, Verdict.Status.INCORRECT, Verdict.Status.INCONCLUSIVE, "failed")


class RunRequestError(runner.JobRequestError):
    """A run request that cannot be carried out; the message says why."""


def stale_after() -> timedelta:
    return VERIFICATION_RUN.stale_after


def clean_options(options) -> dict:
    options = dict(options or {})
    unknown = sorted(set(options) - {"chunk_delay"})
    if unknown:
        raise RunRequestError(f"unknown option(s) {', '.join(unknown)}; the only option is chunk_delay")
    delay = options.get("chunk_delay", 0)
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not 0 <= delay <= MAX_CHUNK_DELAY:
        raise RunRequestError(f"chunk_delay must be a number of seconds between 0 and {MAX_CHUNK_DELAY:g}")
    return {"chunk_delay": float(delay)} if delay else {}


# -- scope ----------------------------------------------------------------------------------------------------------


def scope_completions(run: VerificationRun):
    """The completions a run covers, in id order."""
    return scope_filter(run).distinct().order_by("pk")


def scope_filter(run: VerificationRun):
    """The completions a run covers, as a plain filter (no order, no DISTINCT) to use inside a subquery."""
    if run.project_id is not None:
        subjects = Item.objects.filter(project_id=run.project_id).values("subject_id")
        completions = Completion.objects.filter(pk__in=subjects)
    else:
        assert run.dataset_id is not None  # a run has exactly one scope (a check constraint)
        completions = Completion.objects.filter(question__dataset_id=run.dataset_id)
    if run.answer_types:
        completions = completions.filter(answer_type_condition(run.answer_types))
    if run.domains:
        completions = completions.filter(question__domain__in=run.domains)
    if run.model_names:
        completions = completions.filter(model_name__in=run.model_names)
    return completions


def _usable_verdicts(run: VerificationRun):
    usable = Verdict.objects.filter(verifier_id=run.verifier_id, failed=False)
    if run.redo_from is not None:
        usable = usable.filter(updated_at__gte=run.redo_from)
    return usable


def pending_completions(run: VerificationRun):
    """Completions of the scope with no usable verdict for the run's verifier yet (since the restart, if any)."""
    usable = _usable_verdicts(run).filter(completion=OuterRef("pk"))
    return scope_completions(run).exclude(Exists(usable))


def scope_counts(run: VerificationRun) -> dict[str, int]:
    """Verdicts of the run's verifier on its scope (since the restart, if any), by status, and failed calls."""
    verdicts = Verdict.objects.filter(verifier_id=run.verifier_id, completion__in=scope_completions(run).values("pk"))
    if run.redo_from is not None:
        verdicts = verdicts.filter(updated_at__gte=run.redo_from)
    rows = verdicts.values("status", "failed").annotate(n=Count("pk"))
    counts = dict.fromkeys(COUNT_KEYS, 0)
    for row in rows:
        counts["failed" if row["failed"] else row["status"]] += row["n"]
    return counts


def cascade_report(run: VerificationRun) -> dict | None:
    """Per-stage figures of a cascade run over its scope (since the restart, if any); None for other verifiers."""
    if run.verifier.kind != VerifierConfig.Kind.CASCADE:
        return None
    return cascade_figures(run.verifier_id, scope_filter(run).values("pk"), since=run.redo_from)


# -- requests -------------------------------------------------------------------------------------------------------


def clean_scope_filters(answer_types=None, domains=None, models=None) -> dict[str, list[str]]:
    """Checked filter lists: answer types are fine codes (A1) or coarse classes (A), domains known ones."""
    cleaned = {}
    for name, values in (("answer_types", answer_types), ("domains", domains), ("models", models)):
        values = [] if values is None else values
        if isinstance(values, str) or not all(isinstance(value, str) and value.strip() for value in values):
            raise RunRequestError(f"{name} must be a list of non-empty strings")
        cleaned[name] = sorted({value.strip() for value in values})
    known_types = {answer_type.code for answer_type in taxonomy.ANSWER_TYPES} | set(taxonomy.COARSE_CLASSES)
    unknown = [code for code in cleaned["answer_types"] if code not in known_types]
    if unknown:
        raise RunRequestError(f"unknown answer type(s) {', '.join(unknown)}; use codes like A1 or classes like A")
    unknown = [domain for domain in cleaned["domains"] if domain not in Domain.values]
    if unknown:
        raise RunRequestError(f"unknown domain(s) {', '.join(unknown)}; choose from {', '.join(Domain.values)}")
    return cleaned


def create_run(
    *,
    verifier: VerifierConfig,
    dataset=None,
    project=None,
    answer_types=None,
    domains=None,
    models=None,
    chunk_size: int = 100,
    options=None,
    created_by=None,
    enqueue: bool = True,
) -> VerificationRun:
    """Validate a run request, create the run and queue `run_verification` once the transaction commits."""
    if (dataset is None) == (project is None):
        raise RunRequestError("give exactly one scope: a dataset or an annotation project")
    if project is not None and project.kind != "correctness":
        raise RunRequestError(f"project {project.pk} is a {project.kind} project; verifiers judge correctness")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or not 1 <= chunk_size <= MAX_CHUNK_SIZE:
        raise RunRequestError(f"chunk_size must be an integer between 1 and {MAX_CHUNK_SIZE}")
    for config in (verifier, verifier.cascade_judge if verifier.kind == VerifierConfig.Kind.CASCADE else None):
        if config is None:
            continue
        try:
            config.full_clean(validate_unique=False)
        except ValidationError as error:
            raise RunRequestError(f"verifier {config.name!r} is not usable: {error.messages}") from None
    filters = clean_scope_filters(answer_types, domains, models)
    run = VerificationRun.objects.create(
        verifier=verifier,
        dataset=dataset,
        project=project,
        answer_types=filters["answer_types"],
        domains=filters["domains"],
        model_names=filters["models"],
        chunk_size=chunk_size,
        options=clean_options(options),
        created_by=created_by,
    )
    if enqueue:
        _enqueue(run)
    return run


def _enqueue(run: VerificationRun) -> None:
    runner.enqueue(run)


def cancel_run(run: VerificationRun) -> VerificationRun:
    """Ask a run to stop. A queued run is cancelled at once; a running one stops after its current chunk."""
    try:
        return runner.cancel(run)
    except runner.JobRequestError as exc:
        raise RunRequestError(str(exc)) from None


def resume_run(run: VerificationRun, *, force: bool = False, enqueue: bool = True) -> VerificationRun:
    """Queue a run again as a new attempt; it goes on from the completions still without a usable verdict.

    A running run counts as dead once its heartbeat is older than VERIFICATION_STALE_SECONDS; `force` takes it over
    anyway (for a caller who knows its worker is gone). Resuming a finished run picks up completions added to the
    scope since, and retries failed judge calls.
    """
    try:
        return runner.resume(run, force=force, enqueue_it=enqueue)
    except runner.JobRequestError as exc:
        raise RunRequestError(str(exc)) from None


def restart_run(run: VerificationRun, *, force: bool = False, enqueue: bool = True) -> VerificationRun:
    """Queue a run again as a new attempt that verifies its whole scope again (e.g. after the verifier changed)."""
    try:
        return runner.restart(run, force=force, enqueue_it=enqueue)
    except runner.JobRequestError as exc:
        raise RunRequestError(str(exc)) from None


# -- execution ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RuleOutcome:
    """A rule-based verdict in the shape `record_verdict` takes."""

    status: str
    extracted_answer: str
    explanation: str
    reason: str
    raw_output: str


def _reference_of(completion: Completion) -> tuple[str, bool]:
    """The reference text and whether it is a full solution rather than a final answer."""
    reference = completion.question.primary_reference
    if reference is None:
        return "", False
    if reference.final_answer:
        return reference.final_answer, False
    return reference.solution, True


def verify_with_rules(completions: list[Completion]) -> list[RuleOutcome]:
    """Rule-based verdicts; the batch helper decides each distinct (reference, answer, type) once."""
    items = []
    for completion in completions:
        reference, is_solution = _reference_of(completion)
        items.append(
            BatchItem(
                completion=completion.text,
                reference=reference,
                answer_type=completion.question.answer_type or None,
                question=completion.question.text,
                reference_is_solution=is_solution,
            )
        )
    outcomes = []
    for verdict in verify_batch(items):
        decided = verdict.status != Verdict.Status.INCONCLUSIVE
        outcomes.append(
            RuleOutcome(
                status=verdict.status,
                extracted_answer=verdict.extracted_answer or "",
                explanation=verdict.explanation,
                reason=f"rule-based comparison as {verdict.answer_type_used}" if decided else verdict.explanation,
                raw_output=json.dumps(verdict.as_dict(), ensure_ascii=False),
            )
        )
    return outcomes


def verify_with_judge(config: VerifierConfig, completions: list[Completion]) -> list:
    items = []
    for completion in completions:
        reference, _ = _reference_of(completion)
        items.append(JudgeInput(question=completion.question.text, reference=reference, completion=completion.text))
    return judge_batch(config, items)


@dataclass(frozen=True)
class CascadeOutcome:
    """A cascade verdict in the shape `record_verdict` takes: the decision, both stages' verdicts and the judge's
    cost."""

    status: str
    stage: str
    rule_status: str
    judge_status: str
    extracted_answer: str
    explanation: str
    reason: str
    raw_output: str
    extraction_output: str = ""
    template_id: int | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal = Decimal(0)
    attempts: int = 0
    cache_hit: bool = False
    failed: bool = False


def _with_judge_cost(outcome: CascadeOutcome, judged: JudgeResult | None, judge: VerifierConfig) -> CascadeOutcome:
    if judged is None:
        return outcome
    return replace(
        outcome,
        extraction_output=judged.extraction_output,
        template_id=judged.template_id or judge.template_id,
        prompt_tokens=judged.prompt_tokens,
        completion_tokens=judged.completion_tokens,
        cost=judged.cost,
        attempts=judged.attempts,
        cache_hit=judged.cache_hit,
    )


def _cascade_outcome(rule: RuleOutcome, judged: JudgeResult | None, judge: VerifierConfig) -> CascadeOutcome:
    if judged is not None and judged.failed:
        return _with_judge_cost(
            CascadeOutcome(
                status=Verdict.Status.INCONCLUSIVE,
                stage="",
                rule_status=rule.status,
                judge_status="",
                extracted_answer=rule.extracted_answer,
                explanation=judged.explanation,
                reason=f"the judge {judge.name} could not be asked: {judged.reason}",
                raw_output=judged.raw_output,
                failed=True,
            ),
            judged,
            judge,
        )
    judge_status = judged.status if judged is not None else None
    decision = cascade.decide(rule.status, judge_status)
    raw = {
        "rules": json.loads(rule.raw_output) if rule.raw_output else {},
        "judge": judged.raw_output if judged is not None else None,
    }
    if decision.stage == cascade.RULES:
        checked = f"; the judge's sampled check said {judge_status}" if judged is not None else ""
        answer, explanation, reason = rule.extracted_answer, rule.explanation, f"rules: {rule.reason}{checked}"
    else:
        assert judged is not None  # the rules did not decide, so the judge was asked
        answer = judged.extracted_answer or rule.extracted_answer
        explanation = judged.explanation
        if decision.stage == cascade.JUDGE:
            reason = f"rules inconclusive ({rule.reason}); judge {judge.name}: {judged.reason or judged.status}"
        elif decision.route == cascade.DISPUTED:
            reason = f"for humans: the rules said {rule.status} but the judge {judge.name} said {judge_status}"
        else:
            reason = f"for humans: rules and judge {judge.name} both inconclusive ({judged.reason})"
    return _with_judge_cost(
        CascadeOutcome(
            status=decision.status,
            stage=decision.stage,
            rule_status=rule.status,
            judge_status=judge_status or "",
            extracted_answer=answer,
            explanation=explanation,
            reason=reason,
            raw_output=json.dumps(raw, ensure_ascii=False),
        ),
        judged,
        judge,
    )


def verify_with_cascade(config: VerifierConfig, completions: list[Completion]) -> list[CascadeOutcome]:
    """Rules on every completion; the judge on the inconclusive ones and the sampled checks; humans on the rest."""
    judge = config.cascade_judge
    assert judge is not None  # a cascade always names its judge (a check constraint)
    rules = verify_with_rules(completions)
    asked = [
        index
        for index, (completion, rule) in enumerate(zip(completions, rules, strict=True))
        if cascade.needs_judge(rule.status, cascade.is_sampled(config.pk, completion.pk, config.cascade_sample_rate))
    ]
    judged = dict(zip(asked, verify_with_judge(judge, [completions[index] for index in asked]), strict=True))
    return [_cascade_outcome(rule, judged.get(index), judge) for index, rule in enumerate(rules)]


def verify_chunk(config: VerifierConfig, completions: list[Completion]) -> list:
    if config.kind == VerifierConfig.Kind.RULE:
        return verify_with_rules(completions)
    if config.kind == VerifierConfig.Kind.CASCADE:
        return verify_with_cascade(config, completions)
    return verify_with_judge(config, completions)


def _start_fresh(run: VerificationRun, now) -> list[str]:
    run.started_at = run.started_at or now
    return ["started_at"]


def _start_over(run: VerificationRun) -> list[str]:
    run.redo_from, run.counts = timezone.now(), {}
    return ["redo_from", "counts"]


def claim(run_id: int, attempt: int | None = None) -> tuple[VerificationRun, str] | None:
    """Take the run for this execution: (run, token), or None when it is finished or someone else's."""
    return protocol.claim(VerificationRun, run_id, attempt, stale_after=stale_after(), on_claim=_start_fresh)


def _commit_chunk(execution: Execution, chunk: list[Completion], results: list) -> None:
    run = execution.job
    ids = [completion.pk for completion in chunk]
    with transaction.atomic():
        # A chunk already verified is kept; a cancel acts after it.
        locked = execution.owned(honour_cancel=False)
        previously_failed = set(
            Verdict.objects.filter(verifier_id=run.verifier_id, completion_id__in=ids, failed=True).values_list(
                "completion_id", flat=True
            )
        )
        counts = {key: int(locked.counts.get(key, 0)) for key in COUNT_KEYS}
        done = locked.progress_done
        for completion, result in zip(chunk, results, strict=True):
            record_verdict(completion, run.verifier, result)
            was_failed = completion.pk in previously_failed
            if getattr(result, "failed", False):
                counts["failed"] += 0 if was_failed else 1
                continue
            counts[result.status] += 1
            counts["failed"] -= 1 if was_failed else 0
            done += 1
        locked.counts, locked.progress_done, locked.heartbeat_at = counts, done, timezone.now()
        locked.save(update_fields=["counts", "progress_done", "heartbeat_at"])
    execution.beat(done=done)


def _execute(execution: Execution) -> None:
    run = execution.job
    with transaction.atomic():
        locked = execution.owned()
        counts = scope_counts(run)
        locked.progress_total = scope_completions(run).count()
        locked.counts = counts
        locked.progress_done = sum(counts[key] for key in COUNT_KEYS if key != "failed")
        locked.save(update_fields=["progress_total", "counts", "progress_done"])
    execution.beat(done=locked.progress_done, total=locked.progress_total)
    delay = clean_options(run.options).get("chunk_delay", 0.0)
    pending = pending_completions(run).select_related("question").prefetch_related("question__references")
    verifier = VerifierConfig.objects.select_related("cascade_judge__template").get(pk=run.verifier_id)
    last_id = 0
    while True:
        execution.check()
        chunk = list(pending.filter(pk__gt=last_id)[: run.chunk_size])
        if not chunk:
            break
        results = verify_chunk(verifier, chunk)
        _commit_chunk(execution, chunk, results)
        last_id = chunk[-1].pk
        if delay:
            time.sleep(delay)
    with transaction.atomic():
        failed = int(execution.owned().counts.get("failed", 0))
        if failed:
            raise runner.JobFailed(f"{failed} judge call(s) failed; resume the run to try them again")
        execution.succeed()


def execute_run(run_id: int, attempt: int | None = None) -> VerificationRun | None:
    """Run a queued (or dead) run to its end in this process; returns it as it ended. Safe to call twice."""
    return runner.run(VERIFICATION_RUN.name, run_id, attempt)


RUN_FINISHED = events.declare("run.finished", "A verification run verified every completion in its scope")
RUN_FAILED = events.declare("run.failed", "A verification run stopped on an error (resume it to go on)")


def _describe(run: VerificationRun) -> EventDetails:
    dataset_id = run.dataset_id if run.dataset_id is not None else (run.project.dataset_id if run.project else None)
    data = {
        "run": {
            "id": run.pk,
            "url": f"/api/grading/runs/{run.pk}/",
            "verifier": {"id": run.verifier_id, "name": run.verifier.name, "kind": run.verifier.kind},
            "dataset": dataset_id,
            "project": run.project_id,
            "total": run.total,
            "done": run.done,
            "counts": {str(key): int(run.counts.get(key, 0)) for key in COUNT_KEYS},
        }
    }
    return EventDetails(data, project_id=run.project_id, dataset_id=dataset_id)


VERIFICATION_RUN = runner.register(
    JobKind(
        name="verification-run",
        title="Verification run",
        noun="run",
        model=VerificationRun,
        execute=_execute,
        resumable=True,
        on_start=_start_fresh,
        reset=_start_over,
        stale_setting="VERIFICATION_STALE_SECONDS",
        events={VerificationRun.Status.SUCCEEDED: RUN_FINISHED, VerificationRun.Status.FAILED: RUN_FAILED},
        describe=_describe,
    )
)
