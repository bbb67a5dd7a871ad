"""What each kind of verifier makes of a chunk's completions: the rule-based verdicts, and the cascade's decision from
the rules' and the judge's verdicts. The judge's own calls are streamed by `grading.runs.pipeline`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from .. import cascade
from ..answercheck import BatchItem, verify_batch
from ..judges.client import JudgeInput, JudgeResult
from ..models import Verdict, VerifierConfig
from .scope import CompletionRow


@dataclass(frozen=True)
class RuleOutcome:
    """A rule-based verdict in the shape `grading.verdict_writes` takes."""

    status: str
    extracted_answer: str
    explanation: str
    reason: str
    raw_output: str


def verify_with_rules(rows: Sequence[CompletionRow]) -> list[RuleOutcome]:
    """Rule-based verdicts; the batch helper decides each distinct (reference, answer, type) once."""
    items = [
        BatchItem(
            completion=row.text,
            reference=row.reference,
            answer_type=row.answer_type or None,
            question=row.question,
            reference_is_solution=row.reference_is_solution,
        )
        for row in rows
    ]
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


def judge_input(row: CompletionRow) -> JudgeInput:
    return JudgeInput(question=row.question, reference=row.reference, completion=row.text)


def asks_judge(config: VerifierConfig, row: CompletionRow, rule: RuleOutcome) -> bool:
    """Whether a cascade asks its judge about this completion: the rules left it inconclusive, or it is sampled."""
    return cascade.needs_judge(rule.status, cascade.is_sampled(config.pk, row.pk, config.cascade_sample_rate))


@dataclass(frozen=True)
class CascadeOutcome:
    """A cascade verdict in the shape `grading.verdict_writes` takes: the decision, both stages' verdicts and the
    judge's cost."""

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


def cascade_outcome(rule: RuleOutcome, judged: JudgeResult | None, judge: VerifierConfig) -> CascadeOutcome:
    """The cascade's verdict on one completion from what the rules said and, if it was asked, the judge."""
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
