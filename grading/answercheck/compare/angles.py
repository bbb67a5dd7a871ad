"""Angles in degrees or radians, converted when the two sides use different units."""

from __future__ import annotations

import re

import sympy

from grading.answercheck.compare.numeric import EXACT_RELATIVE_TOLERANCE, close, compare_numbers
from grading.answercheck.compare.outcomes import ok, unsure, wrong
from grading.answercheck.normalize import clean_latex, strip_assignment
from grading.answercheck.parsing import Unparseable, decimal_places, is_plain_number, numeric_value, parse_latex
from grading.answercheck.verdict import Comparison

_DEGREE_MARK = re.compile(
    r"\^\s*\{?\s*\\circ\s*\}?|\\degree|°|\s*\\text\{\s*(?:degrees?|deg)\s*\}|\s*\b(?:degrees?|deg)\b"
)
_RADIAN_MARK = re.compile(r"\s*\\text\{\s*(?:radians?|rad)\s*\}|\s*\b(?:radians?|rad)\b")


def _angle(text: str) -> tuple[str, str | None]:
    text = strip_assignment(clean_latex(text))
    if _DEGREE_MARK.search(text):
        return _DEGREE_MARK.sub("", text).strip(), "degrees"
    if _RADIAN_MARK.search(text):
        return _RADIAN_MARK.sub("", text).strip(), "radians"
    if "\\pi" in text:
        return text, "radians"
    return text, None


ASKED_ANGLE_UNIT = re.compile(r"\b(?:in|to)\s+(degrees|radians)\b", re.IGNORECASE)


def compare_angles(predicted: str, reference: str, question: str | None = None) -> Comparison:
    reference_text, reference_unit = _angle(reference)
    predicted_text, predicted_unit = _angle(predicted)
    asked = ASKED_ANGLE_UNIT.search(question or "")
    marked = _DEGREE_MARK.search(clean_latex(predicted)) or _RADIAN_MARK.search(clean_latex(predicted))
    if asked and not marked:
        # An angle written without a unit is in the unit asked for: "10\pi" where degrees are asked
        # is 10\pi degrees, not 1800.
        predicted_unit = asked.group(1).lower()
    reference_unit = reference_unit or "degrees"
    predicted_unit = predicted_unit or reference_unit
    if predicted_unit == reference_unit:
        result = compare_numbers(predicted_text, reference_text)
        return Comparison(result.status, f"both in {reference_unit}: {result.explanation}")
    try:
        predicted_value = parse_latex(predicted_text)
        reference_value = parse_latex(reference_text)
    except Unparseable as error:
        return unsure(f"cannot read the angle ({error})")
    factor = 180 / sympy.pi if predicted_unit == "radians" else sympy.pi / 180
    converted = sympy.nsimplify(predicted_value * factor) if is_plain_number(predicted_value) else None
    if converted is None:
        return unsure("the answer angle is not a number")
    a, b = numeric_value(converted), numeric_value(reference_value)
    if a is not None and b is not None and close(a, b, EXACT_RELATIVE_TOLERANCE):
        return ok(f"{predicted_text} {predicted_unit} equals {reference_text} {reference_unit}")
    if a is not None and b is not None and decimal_places(predicted_text) is not None:
        tolerance = 0.5 * 10 ** (-decimal_places(predicted_text)) * float(factor)
        if abs(a.real - b.real) <= tolerance * (1 + 1e-9):
            return ok(f"{predicted_text} {predicted_unit} is {reference_text} {reference_unit} rounded")
    return wrong(f"{predicted_text} {predicted_unit} differs from {reference_text} {reference_unit}")
