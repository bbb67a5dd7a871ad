"""The rules -> judge -> humans cascade: which stage decides an item, and which rule-decided items are checked by the
judge. Pure Python, no Django imports.

A cascade verifier configuration names an LLM judge and a sample rate. Each completion goes through:

1. the rule-based verifier; a decided verdict (correct or incorrect) stands, unless the completion is one of the
   sampled checks;
2. the judge, on what the rules left inconclusive and on a sample of the rule-decided completions (`sample_rate`,
   chosen by a hash of the configuration and completion ids, so a resumed or repeated run samples the same ones);
   a decided judge verdict stands on what the rules left inconclusive;
3. humans, on what the judge left inconclusive too, and on sampled completions where rules and judge disagree
   ("disputed"). The cascade's own verdict there is inconclusive: it makes no claim a human has to correct.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

CORRECT = "correct"
INCORRECT = "incorrect"
INCONCLUSIVE = "inconclusive"
DECIDED = (CORRECT, INCORRECT)

RULES = "rules"
JUDGE = "judge"
HUMAN = "human"
STAGES = (RULES, JUDGE, HUMAN)

UNDECIDED = "undecided"
DISPUTED = "disputed"
ROUTES = (UNDECIDED, DISPUTED)

_SAMPLE_SCALE = 2**64


def is_sampled(config_id: int, completion_id: int, rate: float) -> bool:
    """Whether a rule-decided completion is also sent to the judge, at `rate` (0 none, 1 all); deterministic."""
    if rate <= 0:
        return False
    if rate >= 1:
        return True
    digest = hashlib.sha256(f"cascade-sample:{config_id}:{completion_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / _SAMPLE_SCALE < rate


def needs_judge(rule_status: str, sampled: bool) -> bool:
    """The judge sees what the rules left inconclusive and the sampled checks of what they decided."""
    return rule_status not in DECIDED or sampled


@dataclass(frozen=True)
class CascadeDecision:
    """The cascade's verdict on one completion, the stage that gave it, and why humans get it (if they do)."""

    status: str
    stage: str
    route: str = ""

    @property
    def for_humans(self) -> bool:
        return self.stage == HUMAN


def decide(rule_status: str, judge_status: str | None) -> CascadeDecision:
    """Combine the rule verdict and the judge verdict (None when the judge was not asked).

    Raises ValueError when the judge was needed (rules inconclusive) but not asked.
    """
    if rule_status in DECIDED:
        if judge_status is None or judge_status not in DECIDED or judge_status == rule_status:
            return CascadeDecision(status=rule_status, stage=RULES)
        return CascadeDecision(status=INCONCLUSIVE, stage=HUMAN, route=DISPUTED)
    if judge_status is None:
        raise ValueError("the rules left the completion inconclusive, so the judge must be asked")
    if judge_status in DECIDED:
        return CascadeDecision(status=judge_status, stage=JUDGE)
    return CascadeDecision(status=INCONCLUSIVE, stage=HUMAN, route=UNDECIDED)


def route_of(stage: str, rule_status: str, judge_status: str) -> str:
    """Why a stored verdict went to humans: disputed (rules and judge disagree) or undecided; "" when decided."""
    if stage != HUMAN:
        return ""
    if rule_status in DECIDED and judge_status in DECIDED and rule_status != judge_status:
        return DISPUTED
    return UNDECIDED
