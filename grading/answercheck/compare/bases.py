"""Numerals in a base other than ten ('1011_2')."""

from __future__ import annotations

import re

from grading.answercheck.compare.numeric import compare_numbers
from grading.answercheck.compare.outcomes import ok, wrong
from grading.answercheck.normalize import clean_latex, strip_assignment
from grading.answercheck.verdict import Comparison

_BASE_NUMBER = re.compile(r"^\(?\s*(?:\\text\{)?\s*([0-9A-Za-z]+)\s*\}?\s*\)?\s*_\s*\{?\s*\(?\s*(\d+)\s*\)?\s*\}?$")


def _based(text: str) -> tuple[str, int | None]:
    text = clean_latex(strip_assignment(clean_latex(text))).replace(" ", "")
    text = re.sub(r"\\text\{([^{}]*)\}", r"\1", text)
    match = _BASE_NUMBER.match(text)
    if match:
        return match.group(1).upper(), int(match.group(2))
    return text.upper(), None


def compare_bases(predicted: str, reference: str) -> Comparison:
    reference_digits, reference_base = _based(reference)
    predicted_digits, predicted_base = _based(predicted)
    if reference_base is None:
        if predicted_base is None:
            return ok("same digits") if predicted_digits == reference_digits else wrong("different digits")
        return compare_numbers(str(_value_in_base(predicted_digits, predicted_base)), reference)
    if predicted_base is not None and predicted_base != reference_base:
        return wrong(f"answer is written in base {predicted_base}, reference in base {reference_base}")
    if predicted_digits.lstrip("0") == reference_digits.lstrip("0"):
        return ok(f"same digits {reference_digits} in base {reference_base}")
    if _value_in_base(predicted_digits, reference_base) is None:
        return wrong(f"{predicted_digits!r} is not a valid base-{reference_base} numeral")
    return wrong(f"{predicted_digits}_{reference_base} differs from {reference_digits}_{reference_base}")


def _value_in_base(digits: str, base: int | None) -> int | None:
    try:
        return int(digits, base or 10)
    except (ValueError, TypeError):
        return None
