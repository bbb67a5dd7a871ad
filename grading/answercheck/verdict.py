"""The outcome of one rule-based check."""

from __future__ import annotations

from dataclasses import dataclass

CORRECT = "correct"
INCORRECT = "incorrect"
INCONCLUSIVE = "inconclusive"
STATUSES = (CORRECT, INCORRECT, INCONCLUSIVE)


@dataclass(frozen=True)
class CheckResult:
    status: str
    extracted_answer: str | None
    reference_answer: str | None
    answer_type_used: str | None
    explanation: str

    @property
    def predicted_correct(self) -> bool | None:
        """True/False for a decided verdict, None when inconclusive."""
        if self.status == INCONCLUSIVE:
            return None
        return self.status == CORRECT

    def as_dict(self) -> dict:
        # the fields are strings and None: a flat dict, without asdict's deep copy (a run makes one per completion)
        return {
            "status": self.status,
            "extracted_answer": self.extracted_answer,
            "reference_answer": self.reference_answer,
            "answer_type_used": self.answer_type_used,
            "explanation": self.explanation,
        }


@dataclass(frozen=True)
class Comparison:
    """What a type-specific comparison found, before the extracted strings are attached."""

    status: str
    explanation: str
