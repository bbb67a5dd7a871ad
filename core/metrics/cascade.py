"""Per-stage figures of a rules -> judge -> humans cascade: what each stage decided, how precise it was against human
labels, what share of the items it covered, and what it cost. Pure Python, no Django.

Each row is one completion the cascade verified:

    {"stage": "rules" | "judge" | "human", "status": the cascade's verdict,
     "rule_status": ..., "judge_status": ... ("" when the judge was not asked),
     "prompt_tokens": int, "completion_tokens": int, "cost": Decimal | float | str,
     "human_correct": True | False | None (no human label),
     "n": how many verdicts the row stands for (1 when absent; tokens and cost are then their sums)}

- **decided**: items whose verdict came from the stage (for "human": the items left to annotators).
- **coverage**: decided / all items.
- **precision**: among the stage's decided items that have a human label, the share whose verdict equals the label
  (None for the human stage, which is the reference, and when nothing is labeled).
- **tokens and money**: the rules cost nothing; the judge stage carries every judge call the cascade made, including
  the sampled checks of rule-decided items and the calls that ended with humans; the human stage lists no tokens.
- **sampled checks**: rule-decided items also sent to the judge; **disputed**: those where the two disagree, which
  go to humans.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

RULES, JUDGE, HUMAN = "rules", "judge", "human"
STAGES = (RULES, JUDGE, HUMAN)
DECIDED = ("correct", "incorrect")


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@dataclass
class StageFigures:
    stage: str
    decided: int = 0
    labeled: int = 0
    agreeing: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal = Decimal(0)
    undecided: int = 0
    disputed: int = 0

    def as_dict(self, total: int) -> dict[str, Any]:
        figures: dict[str, Any] = {
            "stage": self.stage,
            "decided": self.decided,
            "coverage": _ratio(self.decided, total),
            "labeled": self.labeled,
            "precision": None if self.stage == HUMAN else _ratio(self.agreeing, self.labeled),
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "tokens": self.prompt_tokens + self.completion_tokens,
            "cost": float(self.cost),
        }
        if self.stage == HUMAN:
            figures.update(undecided=self.undecided, disputed=self.disputed)
        return figures


@dataclass
class CascadeReport:
    stages: dict[str, StageFigures] = field(default_factory=lambda: {stage: StageFigures(stage) for stage in STAGES})
    total: int = 0
    sampled_checks: int = 0

    @property
    def automatic(self) -> StageFigures:
        """Rules and judge together: what the cascade decided without humans."""
        combined = StageFigures("automatic")
        for stage in (RULES, JUDGE):
            figures = self.stages[stage]
            combined.decided += figures.decided
            combined.labeled += figures.labeled
            combined.agreeing += figures.agreeing
        return combined

    @property
    def disputed(self) -> int:
        return self.stages[HUMAN].disputed

    def as_dict(self) -> dict[str, Any]:
        automatic = self.automatic
        judge = self.stages[JUDGE]
        return {
            "total": self.total,
            "stages": [self.stages[stage].as_dict(self.total) for stage in STAGES],
            "automatic": {
                "decided": automatic.decided,
                "coverage": _ratio(automatic.decided, self.total),
                "labeled": automatic.labeled,
                "precision": _ratio(automatic.agreeing, automatic.labeled),
            },
            "sampled_checks": self.sampled_checks,
            "disputed": self.disputed,
            "disagreement_rate": _ratio(self.disputed, self.sampled_checks),
            "tokens": judge.prompt_tokens + judge.completion_tokens,
            "cost": float(judge.cost),
            "cost_per_decided_item": float(judge.cost / automatic.decided) if automatic.decided else None,
        }


def _cost(value: Any) -> Decimal:
    if value is None or value == "":
        return Decimal(0)
    return value if isinstance(value, Decimal) else Decimal(str(value))


def cascade_report(rows: Iterable[Mapping[str, Any]]) -> CascadeReport:
    """Per-stage figures of cascade verdicts; raises ValueError naming the row for an unknown stage or status."""
    report = CascadeReport()
    for position, row in enumerate(rows, start=1):
        stage = row.get("stage")
        if stage not in STAGES:
            raise ValueError(f"row {position}: stage must be one of {', '.join(STAGES)}, got {stage!r}")
        status = row.get("status")
        if stage != HUMAN and status not in DECIDED:
            raise ValueError(
                f"row {position}: a verdict decided by {stage} must be correct or incorrect, got {status!r}"
            )
        rule_status, judge_status = row.get("rule_status") or "", row.get("judge_status") or ""
        weight = row.get("n", 1)
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
            raise ValueError(f"row {position}: n must be a count, got {weight!r}")
        report.total += weight
        figures = report.stages[stage]
        figures.decided += weight
        human_correct = row.get("human_correct")
        if isinstance(human_correct, bool):
            figures.labeled += weight
            if stage != HUMAN and (status == "correct") == human_correct:
                figures.agreeing += weight
        if stage == HUMAN:
            if rule_status in DECIDED and judge_status in DECIDED and rule_status != judge_status:
                figures.disputed += weight
            else:
                figures.undecided += weight
        if rule_status in DECIDED and judge_status:
            report.sampled_checks += weight
        judge = report.stages[JUDGE]
        if judge_status:
            judge.calls += weight
        judge.prompt_tokens += int(row.get("prompt_tokens") or 0)
        judge.completion_tokens += int(row.get("completion_tokens") or 0)
        judge.cost += _cost(row.get("cost"))
    return report
