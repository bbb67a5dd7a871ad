"""Numerals in a base other than ten ('1011_2')."""

from __future__ import annotations

import re

from grading.answercheck.compare.numeric import compare_numbers
from grading.answercheck.compare.outcomes import ok, wrong
from grading.answercheck.normalize import clean_latex, strip_assignment
from grading.answercheck.verdict import Comparison

_BASE_NUMBER = re.compile(r"^\(?\s*(?:\\text\{)?\s*([0-9A-Za-z]+)\s*\}?\s*\)?\s*_\s*\{?\s*\(?\s*(\d+)\s*\)?\s*\}?$")


# Programming notation: '0xFF', '0b1011', '0o17'.
_PREFIXED_NUMBER = re.compile(r"^0([xbo])([0-9A-Fa-f]+)$")
_PREFIX_BASES = {"x": 16, "b": 2, "o": 8}


def _based(text: str, expected_base: int | None = None) -> tuple[str, int | None]:
    """(digits, base) of a numeral; a programming prefix counts only where it can name the
    reference's base (in base 12, '0b1' is digits, not a binary numeral)."""
    text = clean_latex(strip_assignment(clean_latex(text))).replace(" ", "")
    text = re.sub(r"\\text\{([^{}]*)\}", r"\1", text)
    match = _BASE_NUMBER.match(text)
    if match:
        return match.group(1).upper(), int(match.group(2))
    prefixed = _PREFIXED_NUMBER.match(text)
    if prefixed:
        base = _PREFIX_BASES[prefixed.group(1)]
        if expected_base in (None, base) and _value_in_base(prefixed.group(2), base) is not None:
            return prefixed.group(2).upper(), base
    return text.upper(), None


def compare_bases(predicted: str, reference: str) -> Comparison:
    reference_digits, reference_base = _based(reference)
    predicted_digits, predicted_base = _based(predicted, reference_base)
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
