"""verify(): extract both final answers, pick the answer type, compare under a deadline.

The steps live beside it: `stated_answers` (the answer each side states), `question_wording` (what the
question asks of a number), `dispatch` (the comparison by type); this module runs them in order under one
deadline and turns failures into inconclusive verdicts.
"""

from __future__ import annotations

import time

from core.taxonomy import UnknownAnswerType, parse_answer_type
from grading.answercheck.deadline import ChildProcessFailed, DeadlineExceeded, remaining_budget, run_with_deadline
from grading.answercheck.detect import detect_answer_type
from grading.answercheck.dispatch import compare_answers
from grading.answercheck.extract import extract_final_answer, final_answer_span
from grading.answercheck.normalize import clean_latex, strip_labels
from grading.answercheck.parsing import TooExpensive, check_cost
from grading.answercheck.question_wording import numeric_wording, question_for_comparison
from grading.answercheck.stated_answers import completion_final_answer, hedged, reference_final_answer
from grading.answercheck.verdict import INCONCLUSIVE, CheckResult, Comparison


def resolve_answer_type(answer_type: str | None, reference: str, question: str | None) -> tuple[str, bool]:
    """(fine code, whether it was detected rather than given)."""
    if answer_type:
        try:
            parsed = parse_answer_type(answer_type)
        except UnknownAnswerType:
            parsed = None
        if parsed is not None:
            return parsed.code, False
    return detect_answer_type(strip_labels(clean_latex(reference)) or reference, question), True


def _guarded_compare(predicted: str, reference: str, answer_type: str, question: str | None) -> Comparison:
    try:
        check_cost(predicted)
        check_cost(reference)
    except TooExpensive as error:
        return Comparison(INCONCLUSIVE, f"not evaluated: {error}")
    return compare_answers(predicted, reference, answer_type, question)


def decide(predicted: str, reference: str, answer_type: str, question: str | None, timeout: float) -> Comparison:
    """compare_answers with the hard deadline and with errors turned into inconclusive verdicts."""
    try:
        return run_with_deadline(_guarded_compare, predicted, reference, answer_type, question, timeout=timeout)
    except DeadlineExceeded as error:
        return Comparison(INCONCLUSIVE, f"comparison timed out ({error})")
    except ChildProcessFailed as error:
        return Comparison(INCONCLUSIVE, f"comparison failed ({error})")
    except (
        RecursionError,
        MemoryError,
        ValueError,
        TypeError,
        AttributeError,
        ArithmeticError,
        NotImplementedError,
    ) as error:
        return Comparison(INCONCLUSIVE, f"comparison failed ({type(error).__name__}: {error})")


def verify(
    completion: str,
    reference: str,
    *,
    answer_type: str | None = None,
    question: str | None = None,
    reference_is_solution: bool = False,
    timeout: float = 5.0,
) -> CheckResult:
    """Check the final answer of `completion` against `reference`.

    `answer_type` accepts the paper codes ("A1") and the public spellings ("C4 - Finite state
    selection"); when missing it is detected from the reference. `question` lets choice answers
    given as option text be mapped to letters. Everything, extraction included, runs under one
    deadline of `timeout` seconds.
    """
    started = time.monotonic()
    try:
        return run_with_deadline(
            _verify_within,
            completion or "",
            reference or "",
            answer_type,
            question,
            reference_is_solution,
            timeout,
            started,
            timeout=timeout,
        )
    except DeadlineExceeded as error:
        return CheckResult(INCONCLUSIVE, None, None, None, f"verification timed out ({error})")
    except ChildProcessFailed as error:
        return CheckResult(INCONCLUSIVE, None, None, None, f"verification failed ({error})")


def _verify_within(
    completion: str,
    reference: str,
    answer_type: str | None,
    question: str | None,
    reference_is_solution: bool,
    timeout: float,
    started: float,
) -> CheckResult:
    reference_answer = reference_final_answer(
        reference, reference_is_solution=reference_is_solution, answer_type=answer_type
    )
    if reference_answer is None:
        return CheckResult(
            INCONCLUSIVE, extract_final_answer(completion), None, None, "no final answer in the reference"
        )
    code, detected = resolve_answer_type(answer_type, reference_answer, question)
    extracted = completion_final_answer(completion, code)
    type_note = f"{code} ({'detected' if detected else 'given'})"
    if extracted is None:
        return CheckResult(
            INCONCLUSIVE, None, reference_answer, code, f"no final answer found in the completion; type {type_note}"
        )
    if hedged(extracted, code):
        return CheckResult(
            INCONCLUSIVE,
            extracted,
            reference_answer,
            code,
            f"the completion offers several candidate answers ({extracted!r}); type {type_note}",
        )
    comparison = decide(
        extracted,
        reference_answer,
        code,
        question_for_comparison(code, question, extracted, reference_answer),
        remaining_budget(started, timeout),
    )
    explanation = (
        f"extracted {extracted!r} from the completion and {reference_answer!r} from the reference; "
        f"compared as {type_note}: {comparison.explanation}"
    )
    return CheckResult(comparison.status, extracted, reference_answer, code, explanation)


__all__ = [
    "verify",
    "decide",
    "completion_final_answer",
    "reference_final_answer",
    "resolve_answer_type",
    "final_answer_span",
    "hedged",
    "question_for_comparison",
    "numeric_wording",
]
