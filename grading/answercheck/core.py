"""verify(): extract both final answers, pick the answer type, compare under a deadline."""
from __future__ import annotations

import math
import re
import time

from core.taxonomy import UnknownAnswerType, parse_answer_type
from grading.answercheck import choices, compare, strings
from grading.answercheck.deadline import ChildProcessFailed, DeadlineExceeded, remaining_budget, run_with_deadline
from grading.answercheck.detect import detect_answer_type
from grading.answercheck.extract import all_boxed_answers, boxed_spans, extract_final_answer, final_answer_span
from grading.answercheck.normalize import clean_latex, plain_text
from grading.answercheck.parsing import TooExpensive, check_cost
from grading.answercheck.verdict import CORRECT, INCONCLUSIVE, INCORRECT, Comparison, Verdict

MULTI_PART_TYPES = {"A8", "B4", "C2"}


def reference_final_answer(reference: str, *, reference_is_solution: bool) -> str | None:
    if reference_is_solution:
        return extract_final_answer(reference)
    boxed = all_boxed_answers(reference)
    if boxed:
        return boxed[-1]
    return reference.strip() or None


def _trailing_boxed_group(text: str) -> list[str]:
    """Consecutive boxed answers at the end ('\\boxed{1} and \\boxed{-2}') for multi-part types."""
    spans = boxed_spans(text)
    group = spans[-1:]
    for previous, current in zip(reversed(spans[:-1]), reversed(spans[1:])):
        gap = text[previous[1] + 1: current[0]]
        if len(gap) > 60 or "\n\n" in gap:
            break
        group.insert(0, previous)
    return [text[start:end].strip() for start, end in group]


# "(A), (C) and (E)", "A and C", "A, C & D": several option letters named together in a sentence.
_LETTER_LIST = re.compile(
    r"(?<![A-Za-z])\(?[A-J]\)?(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)\(?[A-J]\)?)+(?![A-Za-z])"
)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _widen_to_letter_list(answer: str, completion: str) -> str:
    """For multi-select answers: 'C' read from "... i.e. options (A), (C) and (E)." becomes that whole list."""
    lists = _LETTER_LIST.findall(_last_line(completion))
    if not lists:
        return answer
    named = set(re.findall(r"[A-J]", lists[-1]))
    chosen = set(re.findall(r"(?<![A-Za-z])[A-J](?![A-Za-z])", answer))
    if chosen and chosen < named:
        return lists[-1]
    return answer


def completion_final_answer(completion: str, answer_type: str | None) -> str | None:
    if answer_type in MULTI_PART_TYPES:
        group = _trailing_boxed_group(completion)
        if len(group) > 1:
            return ", ".join(group)
    answer = extract_final_answer(completion)
    if answer_type == "C2":
        if answer is None:
            lists = _LETTER_LIST.findall(_last_line(completion))
            answer = lists[-1] if lists else None
        else:
            answer = _widen_to_letter_list(answer, completion)
    if answer is None and answer_type in ("C3", "D1", "D2"):
        lines = [line.strip() for line in completion.strip().splitlines() if line.strip()]
        answer = lines[-1] if lines else None
    return answer


_ASKS_TO_ROUND = re.compile(
    r"\bround|\bnearest\b|decimal places?|\bapproximat|significant (?:figures|digits)|\bestimate|\bto \w+ decimals?\b",
    re.IGNORECASE,
)
_ASKS_FOR_EXACT = re.compile(
    r"\bexact (?:value|answer|form|expression)|simplest (?:radical )?form|lowest terms|in terms of \\?pi|common fraction",
    re.IGNORECASE,
)
_ASKS_FOR_LOWEST_TERMS = re.compile(r"lowest terms|simplest form|reduced fraction|common fraction", re.IGNORECASE)


def numeric_wording(question: str | None) -> str | None:
    """The parts of a question that change how a number is judged ("round to ...", "exact value",
    "lowest terms"), as a short string that reads back the same way; None when there are none."""
    if not question:
        return None
    found = [match.group(0).lower() for pattern in (_ASKS_TO_ROUND, _ASKS_FOR_EXACT, _ASKS_FOR_LOWEST_TERMS) for match in pattern.finditer(question)]
    return "; ".join(sorted(set(found))) or None


def _rounding_allowed(reference: str, question: str | None) -> bool:
    """A rounded answer stands for the reference only when the question asks for rounding, or when
    the question does not demand an exact value and the reference is not itself a short decimal
    (0.375 written out is exact; 0.38 is a different number)."""
    wording = question or ""
    if _ASKS_TO_ROUND.search(wording):
        return True
    if _ASKS_FOR_EXACT.search(wording):
        return False
    return not re.fullmatch(r"\s*-?\d*\.\d{1,3}\s*%?\s*", clean_latex(reference))


_PLAIN_FRACTION = re.compile(r"^-?\s*(?:\\frac\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}|(\d+)\s*/\s*(\d+))$")


def _unreduced_fraction(predicted: str) -> bool:
    match = _PLAIN_FRACTION.match(clean_latex(predicted).replace(" ", ""))
    if not match:
        return False
    numerator, denominator = (int(group) for group in match.groups() if group is not None)
    return math.gcd(numerator, denominator) > 1


def compare_answers(predicted: str, reference: str, answer_type: str, question: str | None) -> Comparison:
    """Dispatch on the fine type code. Runs inside the deadline."""
    if answer_type in ("A1", "A2", "A3", "A4"):
        if re.fullmatch(r"\s*-?\d+\s*:\s*-?\d+(?:\s*:\s*-?\d+)+\s*", clean_latex(reference)):
            return compare.compare_collections(predicted.replace(":", ","), reference.replace(":", ","), ordered=True)
        result = compare.compare_numbers(predicted, reference, allow_rounding=_rounding_allowed(reference, question))
        if result.status == CORRECT and answer_type == "A3" and _ASKS_FOR_LOWEST_TERMS.search(question or "") and _unreduced_fraction(predicted):
            return Comparison(INCORRECT, f"{predicted!r} has the right value but is not in lowest terms, as the question asks")
        if result.status == INCONCLUSIVE and answer_type == "A2":
            return compare.compare_expressions(predicted, reference)
        return result
    if answer_type == "A5":
        return compare.compare_numbers(predicted, reference, imaginary_unit=True)
    if answer_type == "A6":
        return compare.compare_angles(predicted, reference)
    if answer_type == "A7":
        return compare.compare_bases(predicted, reference)
    if answer_type == "A8":
        return compare.compare_multiple_values(predicted, reference)
    if answer_type == "B1":
        return compare.compare_expressions(predicted, reference)
    if answer_type == "B2":
        return compare.compare_equations(predicted, reference)
    if answer_type == "B3":
        return compare.compare_intervals(predicted, reference)
    if answer_type == "B4":
        return compare.compare_collections(predicted, reference)
    if answer_type == "B5":
        return compare.compare_matrices(predicted, reference)
    if answer_type in ("C1", "C2"):
        return choices.compare_choices(predicted, reference, multiple=answer_type == "C2", question=question)
    if answer_type == "C3":
        return choices.compare_finite_states(predicted, reference)
    if answer_type == "D1":
        return _string_or_math(predicted, reference, semantic=False)
    if answer_type == "D2":
        return _string_or_math(predicted, reference, semantic=True)
    raise ValueError(f"unknown answer type code {answer_type!r}")


def _string_or_math(predicted: str, reference: str, *, semantic: bool) -> Comparison:
    result = strings.compare_strings(predicted, reference, semantic=semantic)
    if result.status != INCONCLUSIVE:
        return result
    if re.search(r"[\\^_=0-9]", plain_text(reference)):
        detected = detect_answer_type(reference)
        if detected[0] in "AB":
            return compare_answers(predicted, reference, detected, None)
    return result


# Two pieces of math joined by "or" ("$5\\pi$, or possibly $10\\pi$") or an explicit hedge word.
_HEDGE = re.compile(r"\$[^$]*\bor\b[^$]*\$|\bor\s+(?:possibly|perhaps|maybe)\b", re.IGNORECASE)


def hedged(extracted: str) -> bool:
    """True when the extracted final answer names more than one candidate."""
    return _HEDGE.search(extracted) is not None


def question_for_comparison(code: str, question: str | None) -> str | None:
    """The part of the question a comparison of this type reads: the options for choices, the
    rounding / exactness wording for numbers, nothing otherwise (keeps batch results cacheable)."""
    if code in ("C1", "C2"):
        return question
    if code in ("A1", "A2", "A3", "A4"):
        return numeric_wording(question)
    return None


def resolve_answer_type(answer_type: str | None, reference: str, question: str | None) -> tuple[str, bool]:
    """(fine code, whether it was detected rather than given)."""
    if answer_type:
        try:
            parsed = parse_answer_type(answer_type)
        except UnknownAnswerType:
            parsed = None
        if parsed is not None:
            return parsed.code, False
    return detect_answer_type(reference, question), True


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
    except (RecursionError, MemoryError, ValueError, TypeError, AttributeError, ArithmeticError, NotImplementedError) as error:
        return Comparison(INCONCLUSIVE, f"comparison failed ({type(error).__name__}: {error})")


def verify(
    completion: str,
    reference: str,
    *,
    answer_type: str | None = None,
    question: str | None = None,
    reference_is_solution: bool = False,
    timeout: float = 5.0,
) -> Verdict:
    """Check the final answer of `completion` against `reference`.

    `answer_type` accepts the paper codes ("A1") and the public spellings ("C4 - Finite state
    selection"); when missing it is detected from the reference. `question` lets choice answers
    given as option text be mapped to letters. Everything, extraction included, runs under one
    deadline of `timeout` seconds.
    """
    started = time.monotonic()
    try:
        return run_with_deadline(
            _verify_within, completion or "", reference or "", answer_type, question, reference_is_solution, timeout, started,
            timeout=timeout,
        )
    except DeadlineExceeded as error:
        return Verdict(INCONCLUSIVE, None, None, None, f"verification timed out ({error})")
    except ChildProcessFailed as error:
        return Verdict(INCONCLUSIVE, None, None, None, f"verification failed ({error})")


def _verify_within(
    completion: str, reference: str, answer_type: str | None, question: str | None, reference_is_solution: bool,
    timeout: float, started: float,
) -> Verdict:
    reference_answer = reference_final_answer(reference, reference_is_solution=reference_is_solution)
    if reference_answer is None:
        return Verdict(INCONCLUSIVE, extract_final_answer(completion), None, None, "no final answer in the reference")
    code, detected = resolve_answer_type(answer_type, reference_answer, question)
    extracted = completion_final_answer(completion, code)
    type_note = f"{code} ({'detected' if detected else 'given'})"
    if extracted is None:
        return Verdict(INCONCLUSIVE, None, reference_answer, code, f"no final answer found in the completion; type {type_note}")
    if hedged(extracted):
        return Verdict(INCONCLUSIVE, extracted, reference_answer, code, f"the completion offers several candidate answers ({extracted!r}); type {type_note}")
    comparison = decide(extracted, reference_answer, code, question_for_comparison(code, question), remaining_budget(started, timeout))
    explanation = (
        f"extracted {extracted!r} from the completion and {reference_answer!r} from the reference; "
        f"compared as {type_note}: {comparison.explanation}"
    )
    return Verdict(comparison.status, extracted, reference_answer, code, explanation)


__all__ = [
    "verify", "decide", "completion_final_answer", "reference_final_answer", "resolve_answer_type", "final_answer_span",
    "hedged", "question_for_comparison", "numeric_wording",
]
