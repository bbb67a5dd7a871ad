"""verify(): extract both final answers, pick the answer type, compare under a deadline."""

from __future__ import annotations

import math
import re
import time

from core.taxonomy import UnknownAnswerType, parse_answer_type
from grading.answercheck import choices, compare, strings, units
from grading.answercheck.deadline import ChildProcessFailed, DeadlineExceeded, remaining_budget, run_with_deadline
from grading.answercheck.detect import detect_answer_type
from grading.answercheck.extract import (
    answer_phrase_span,
    boxed_group,
    extract_final_answer,
    final_answer_span,
    hedged_context,
    strip_closing_remarks,
)
from grading.answercheck.normalize import clean_latex, plain_text, split_labelled, strip_labels, unescape_commands
from grading.answercheck.parsing import TooExpensive, check_cost
from grading.answercheck.verdict import CORRECT, INCONCLUSIVE, INCORRECT, CheckResult, Comparison

MULTI_PART_TYPES = {"A8", "B4", "C2"}
WORD_TYPES = {"C1", "C2", "C3", "D1", "D2"}


_SOLUTION_SENTENCES = re.compile(r"[.!?](?:\s|$)")


def reference_final_answer(
    reference: str, *, reference_is_solution: bool, answer_type: str | None = None
) -> str | None:
    """The answer a reference states. A bare answer is read whole; boxes give their contents (a
    run of boxes, "\\boxed{1}, \\boxed{2}", gives them all); a worked solution or a sentence
    ending in the answer ("... so the final answer is (B) 1.") goes through the same extraction
    as a completion."""
    text = unescape_commands(reference or "").strip()
    if not text:
        return None
    if reference_is_solution:
        return extract_final_answer(text)
    group = boxed_group(text)
    if len(group) > 1:
        return ", ".join(group)
    if group:
        return group[0]
    words = re.findall(r"[A-Za-z]{2,}", re.sub(r"\\[a-zA-Z]+|\$[^$]*\$", " ", text))
    long_solution = len(text) > 150 and len(_SOLUTION_SENTENCES.findall(text)) >= 3
    if (len(words) >= 5 and long_solution) or (len(words) >= 3 and answer_phrase_span(text) is not None):
        extracted = extract_final_answer(text, fallback=long_solution)
        if extracted:
            return extracted
    # A sentence that ends in the answer ("Since $34^2 < 1200 < 35^2$, the largest $n$ is $34$."),
    # for answers that are math rather than words.
    if len(words) >= 4 and "$" in text and re.search(r"[.!]\s*$", text) and _given_code(answer_type) not in WORD_TYPES:
        extracted = extract_final_answer(text, fallback=True)
        if extracted:
            return extracted
    opener = re.match(r"\s*\\(?:boxed|fbox)\s*\{", text)
    if opener and text.count("{") > text.count("}"):
        # A box left open in a short reference: its contents run to the end.
        return text[opener.end() :].strip().rstrip("$").strip() or None
    return text


def _given_code(answer_type: str | None) -> str | None:
    if not answer_type:
        return None
    try:
        parsed = parse_answer_type(answer_type)
    except UnknownAnswerType:
        return None
    return parsed.code if parsed else None


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


_LIST_LINE = re.compile(r"[-*\u2022]?\s*(?:\d+[.)]\s+)?\$?\s*([-+]?[^\s$:]{1,30})\s*\$?[.,;]?")


def _trailing_line_list(completion: str) -> str | None:
    """'The primes are:\n23\n29\n31': values one per line after a line ending in a colon, at the end."""
    lines = [line.strip() for line in strip_closing_remarks(completion[-2000:]).rstrip().splitlines()]
    values: list[str] = []
    for line in reversed(lines):
        match = _LIST_LINE.fullmatch(line)
        if not line or match is None or not re.search(r"\d", line):
            break
        values.insert(0, match.group(1))
    start = len(lines) - len(values) - 1
    if len(values) < 2 or start < 0 or not lines[start].endswith(":"):
        return None
    return ", ".join(values)


def completion_final_answer(completion: str, answer_type: str | None) -> str | None:
    if answer_type in MULTI_PART_TYPES:
        listed = _trailing_line_list(completion)
        if listed is not None:
            return listed
        group = boxed_group(completion)
        if len(group) > 1:
            return ", ".join(group)
    # Choices, states and words are not read off the last expression of the text.
    span = final_answer_span(completion, fallback=answer_type not in WORD_TYPES)
    answer = completion[span[0] : span[1]].strip() or None if span is not None else None
    if span is not None:
        # "The answer is probably 4, though it could also be 2.": the whole guess is the answer.
        guess = hedged_context(completion, span)
        if guess is not None:
            return guess
    if answer is None and answer_type in ("C1", "C2"):
        answer = choices.letter_in_short_text(completion)
    if answer_type == "C2":
        if answer is None:
            lists = _LETTER_LIST.findall(_last_line(completion))
            answer = lists[-1] if lists else None
        else:
            answer = _widen_to_letter_list(answer, completion)
    if answer is None and answer_type in ("C3", "D1", "D2"):
        lines = [line.strip() for line in strip_closing_remarks(completion).strip().splitlines() if line.strip()]
        answer = lines[-1] if lines else None
        if answer_type == "C3":
            # The last of the closing lines that states something ("Hence the statement is true."),
            # past remarks that state nothing ("This matches the check above.").
            stating = [line for line in lines[-3:] if choices.states_something(line)]
            if stating:
                answer = stating[-1]
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
_PLACES_ASKED = re.compile(
    r"\b(\d|one|two|three|four|five|six)\s+decimal\s+places?\b|\bnearest\s+(tenth|hundredth|thousandth)\b",
    re.IGNORECASE,
)
_PLACE_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "tenth": 1,
    "hundredth": 2,
    "thousandth": 3,
}


def places_asked(question: str | None) -> int | None:
    """The number of decimal places a question asks for ("to three decimal places", "nearest tenth")."""
    match = _PLACES_ASKED.search(question or "")
    if not match:
        return None
    word = (match.group(1) or match.group(2)).lower()
    return int(word) if word.isdigit() else _PLACE_WORDS[word]


def numeric_wording(question: str | None) -> str | None:
    """The parts of a question that change how a number is judged ("round to ...", "exact value",
    "lowest terms"), as a short string that reads back the same way; None when there are none."""
    if not question:
        return None
    found = [
        match.group(0).lower()
        for pattern in (_ASKS_TO_ROUND, _ASKS_FOR_EXACT, _ASKS_FOR_LOWEST_TERMS, _PLACES_ASKED)
        for match in pattern.finditer(question)
    ]
    unit = units.asked_phrase(question)
    if unit:
        found.append(unit)
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


def _same_text(predicted: str, reference: str) -> bool:
    """Identical once presentation is removed ('12:00' and '12:00', 'f(y) = y' and 'f(y)=y',
    '\\text{e}' and 'e'). Text wrappers around digits are kept: '\\text{13}' is not read as 13."""

    def key(text: str) -> str:
        text = clean_latex(text)
        text = re.sub(r"\\(?:text|mathrm|textrm|mathit|textit|operatorname)\s*\{([^{}0-9]*)\}", r"\1", text)
        return re.sub(r"\s+|\\left|\\right|\\,|\\;|\\!", "", text)

    return key(predicted) == key(reference) != ""


def _labelled_in_reference_order(predicted: str, reference: str) -> tuple[str, str] | None:
    """Both sides name the same labels ('a_3 = 2, a_{37} = 19' against 'a_{37} = 19, a_3 = 2'):
    the values in the reference's label order, as two ordered lists."""
    reference_items, predicted_items = split_labelled(clean_latex(reference)), split_labelled(clean_latex(predicted))
    if len(reference_items) < 2 or any(label is None for label, _ in reference_items + predicted_items):
        return None
    reference_labels = [label for label, _ in reference_items]
    predicted_values = dict(predicted_items)
    if len(set(reference_labels)) != len(reference_labels) or sorted(reference_labels) != sorted(predicted_values):
        return None
    if len(predicted_values) != len(predicted_items):
        return None
    ordered = [predicted_values[label] for label in reference_labels]
    return "(" + ", ".join(ordered) + ")", "(" + ", ".join(value for _, value in reference_items) + ")"


def compare_answers(predicted: str, reference: str, answer_type: str, question: str | None) -> Comparison:
    """Identical answers, labelled values and option letters first, then the comparison of the type."""
    if _same_text(predicted, reference):
        return Comparison(CORRECT, "identical after removing presentation")
    if answer_type not in ("C1", "C2"):
        labelled_option = choices.resolve_option_labels(predicted, reference)
        if isinstance(labelled_option, Comparison):
            return labelled_option
        if labelled_option is not None:
            predicted, reference = labelled_option
            if _same_text(predicted, reference):
                return Comparison(CORRECT, "the same option value")
    if answer_type in ("A1", "A2", "A3", "A4"):
        conflict = units.unit_conflict(predicted, reference, question)
        if conflict is not None:
            return Comparison(INCONCLUSIVE, conflict)
    mapped = choices.map_option_letters(predicted, reference, answer_type, question)
    if mapped is not None:
        predicted, reference = mapped
        if _same_text(predicted, reference):
            return Comparison(CORRECT, "the option letter names the same value")
    if answer_type != "B2":
        labelled = _labelled_in_reference_order(predicted, reference)
        if labelled is not None:
            return compare.compare_collections(labelled[0], labelled[1], ordered=True)
        predicted_value, reference_value = strip_labels(clean_latex(predicted)), strip_labels(clean_latex(reference))
        if (predicted_value, reference_value) != (clean_latex(predicted), clean_latex(reference)):
            if _same_text(predicted_value, reference_value):
                return Comparison(CORRECT, "the same value once labels are removed")
            named = [label for label, _ in split_labelled(clean_latex(reference)) if label is not None]
            bases = {re.sub(r"_.*", "", label) for label in named}
            # x_1, x_2 name the roots of one unknown, in no particular order.
            if len(named) > 1 and len(set(named)) == len(named) and len(bases) > 1 and answer_type in ("A8", "B4"):
                # Values named by distinct labels ('AB=4, CD=5') have an order: a match only
                # in another order is not certain.
                in_order = compare.compare_collections(f"({predicted_value})", f"({reference_value})", ordered=True)
                if in_order.status == CORRECT:
                    return in_order
                any_order = _compare_by_type(predicted_value, reference_value, answer_type, question)
                if any_order.status == CORRECT:
                    return Comparison(INCONCLUSIVE, "the labelled values match only in another order")
                return any_order
            predicted, reference = predicted_value, reference_value
    return _compare_by_type(predicted, reference, answer_type, question)


_EQUALITY_CHAIN_TYPES = {"A1", "A2", "A3", "A4", "A5", "B1"}


def _last_side(text: str) -> str:
    """'\\frac{100\\cdot 101}{2} = 5050' -> '5050': a value stated at the end of an equality chain."""
    parts = compare.split_top_level(text, "=")
    return parts[-1].strip() if len(parts) > 1 and parts[-1].strip() else text


def _compare_by_type(predicted: str, reference: str, answer_type: str, question: str | None) -> Comparison:
    """Dispatch on the fine type code. Runs inside the deadline."""
    relation = re.compile(r"[<>]=?|!=|\\(?:n?eq|ne|[lg]eq?|neq)(?![a-zA-Z])|\\(?:lt|gt)(?![a-zA-Z])")
    if (
        answer_type in _EQUALITY_CHAIN_TYPES
        and "=" in predicted
        and "=" not in reference
        and not relation.search(predicted + reference)
    ):
        predicted = _last_side(predicted)
    if answer_type in ("A1", "A2", "A3", "A4"):
        # "a:b:c", and a clock time or a ratio with a zero part ("12:00"), compare part by part.
        if re.fullmatch(r"\s*-?\d+\s*:\s*-?\d+(?:\s*:\s*-?\d+)+\s*|\s*-?\d+\s*:\s*0+\s*", clean_latex(reference)):
            return compare.compare_collections(predicted.replace(":", ","), reference.replace(":", ","), ordered=True)
        result = compare.compare_numbers(
            predicted, reference, allow_rounding=_rounding_allowed(reference, question), places=places_asked(question)
        )
        if (
            result.status == CORRECT
            and answer_type == "A3"
            and _ASKS_FOR_LOWEST_TERMS.search(question or "")
            and _unreduced_fraction(predicted)
        ):
            return Comparison(
                INCORRECT, f"{predicted!r} has the right value but is not in lowest terms, as the question asks"
            )
        if result.status == INCONCLUSIVE and answer_type == "A2":
            return compare.compare_expressions(predicted, reference)
        return result
    if answer_type == "A5":
        # Several complex values ("2i, -2i", "\\pm 2i") compare as an unordered list.
        if any(
            len(compare.split_top_level(clean_latex(side))) > 1 or "\\pm" in side for side in (predicted, reference)
        ):
            return compare.compare_multiple_values(predicted, reference)
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


_HEDGE_WORDS = re.compile(
    r"\b(?:probably|possibly|perhaps|maybe|(?:might|could|may)\s+also\s+be|either|not\s+(?:sure|certain)|unsure|cannot\s+decide)\b",
    re.IGNORECASE,
)
_INEQUALITY = re.compile(r"<|>|\\(?:lt|gt|leq?|geq?|leqslant|geqslant)(?![a-zA-Z])")


def hedged(extracted: str, answer_type: str | None = None) -> bool:
    """True when the extracted final answer names more than one candidate. For an interval answer,
    inequalities joined by "or" ("$x<-2$ or $x \\ge 3$") are a union, not a guess."""
    if _HEDGE_WORDS.search(extracted):
        return True
    if _HEDGE.search(extracted) is None:
        return False
    if answer_type == "B3":
        parts = re.split(r"\bor\b", extracted)
        return not all(_INEQUALITY.search(part) for part in parts)
    return True


def question_for_comparison(
    code: str, question: str | None, extracted: str | None = None, reference: str | None = None
) -> str | None:
    """The part of the question a comparison of this type reads: the options for choices (and for
    any answer given as an option letter), the rounding / exactness wording for numbers, nothing
    otherwise (keeps batch results cacheable)."""
    if code in ("C1", "C2"):
        return question
    if (
        question
        and any(text and choices.bare_letter(text) for text in (extracted, reference))
        and choices.question_options(question)
    ):
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
