"""Rule-based final-answer verification. Pure Python, no Django imports.

verify(completion, reference, answer_type=None, question=None, reference_is_solution=False, timeout=5.0) -> CheckResult
verify_batch(items, timeout=5.0, workers=1) -> list[CheckResult]
"""

from grading.answercheck.batch import BatchItem, verify_batch
from grading.answercheck.core import verify
from grading.answercheck.extract import extract_final_answer, final_answer_span
from grading.answercheck.verdict import CORRECT, INCONCLUSIVE, INCORRECT, CheckResult

__all__ = [
    "CORRECT",
    "INCONCLUSIVE",
    "INCORRECT",
    "BatchItem",
    "CheckResult",
    "extract_final_answer",
    "final_answer_span",
    "verify",
    "verify_batch",
]
