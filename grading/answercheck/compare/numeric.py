"""Numbers: exact and rounded equality, percents, an approximate form beside the exact one, a number in a sentence."""

from __future__ import annotations

import re

from grading.answercheck.compare.outcomes import ok, unsure, wrong
from grading.answercheck.normalize import clean_latex, plain_number, strip_assignment, strip_trailing_units
from grading.answercheck.parsing import (
    Unparseable,
    decimal_places,
    is_plain_number,
    numeric_value,
    parse_latex,
    significant_digits,
)
from grading.answercheck.prose import WORD, as_prose, has_prose
from grading.answercheck.verdict import CORRECT, INCORRECT, Comparison

EXACT_RELATIVE_TOLERANCE = 1e-9


_APPROX = re.compile(r"\\approx|\\simeq|≈")


_MODULUS_NOTE = re.compile(r"\s*(?:\\pmod\s*\{[^{}]*\}|\\pmod\s*\d+|\(\s*\\?(?:bmod|mod)\s*\{?\s*\d+\s*\}?\s*\))\s*$")


# "\\frac{737}{39}\\;\\text{(about }18.9\\text{ cards)}", "42 (the number of edges)": a remark in parentheses.
_TRAILING_REMARK = re.compile(r"\s*(?:\\text\{\s*\(.*\)\s*\}|\\text\{\s*\(.*|\((?=[^()]*[A-Za-z]{3,})[^()]*\))\s*$")


def strip_trailing_remark(text: str) -> str:
    stripped = _TRAILING_REMARK.sub("", text).strip()
    return stripped or text


def _number_candidates(text: str) -> list[str]:
    """The forms a numeric answer offers: '2\\pi \\approx 6.28' -> ['2\\pi', '6.28']; '9 \\pmod{13}' -> ['9']."""
    text = strip_trailing_remark(_MODULUS_NOTE.sub("", strip_assignment(clean_latex(text))))
    parts = [part.strip() for part in _APPROX.split(text) if part.strip()]
    forms = [strip_trailing_units(strip_assignment(part)) for part in parts] or [text]
    return [_percent_spacing(plain_number(form)) for form in forms]


def _percent_spacing(text: str) -> str:
    return re.sub(r"\s*%$", "%", text.strip())


def _strip_percent(text: str) -> tuple[str, bool]:
    text = text.strip()
    if text.endswith("%"):
        return text[:-1].strip(), True
    return text, False


_ONE_NUMBER = re.compile(r"(?<![\w.^_{])[-+]?\d+(?:[.,]\d+)*(?:\s*%)?(?![\w.^_])")
_NEGATED = re.compile(r"\b(?:not|no|never|isn't|wrong|incorrect)\b", re.IGNORECASE)


def _number_in_sentence(text: str) -> str | None:
    """The one number in an answer written as a sentence ('Jane started growing Sphere 3 hours ago')."""
    words = re.findall(r"[A-Za-z]{2,}", text)
    if len(words) < 2 or _NEGATED.search(text) or "\\" in text:
        return None
    numbers = _ONE_NUMBER.findall(text)
    return numbers[0].strip() if len(numbers) == 1 else None


# Words that make a number in a sentence a bound or an estimate, not the value ("at least 5", "about 12").
_QUALIFIER = re.compile(
    r"\b(?:least|most|about|approximately|around|roughly|nearly|almost|over|under|more|less|than|between|"
    r"up|within|per|each|every|times|or)\b",
    re.IGNORECASE,
)


def _value_in_sentence(text: str) -> str | None:
    """The one value an answer written as a sentence states, TeX included: 'The perimeter of PQR is 6\\sqrt{2}' ->
    '6\\sqrt{2}', 'y equals 3' -> '3', '\\text{She saves } \\$27' -> '27'. None when the words negate or
    qualify it, or when the sentence holds more than one value."""
    plain = as_prose(text)
    if not WORD.search(plain) or _NEGATED.search(plain) or _QUALIFIER.search(plain):
        return None
    pieces = [piece.strip(" \t\n.,;:!?。，：") for piece in WORD.split(plain)]
    values = [piece for piece in pieces if re.search(r"\d|\\pi|π|√", piece) and not re.fullmatch(r"[A-Za-z]", piece)]
    if len(values) != 1 or any(
        piece and not re.fullmatch(r"[A-Za-z]|[=:]+", piece) for piece in pieces if piece not in values
    ):
        return None
    return values[0]


_NOT_A_NUMBER_SHAPE = re.compile(r"^[-+]?\s*[\[(].*,.*[\])]$|^\\\{.*\\\}$|\\begin\{[pbv]?matrix\}")


def close(a: complex, b: complex, tolerance: float) -> bool:
    return abs(a - b) <= tolerance * max(1.0, abs(a), abs(b))


def _rounding_matches(rounded_text: str, rounded: complex, exact: complex) -> bool:
    """True when `rounded_text` is `exact` rounded to the digits it shows (0.333 vs 1/3).

    A value exactly halfway (0.875 to two places) must be rounded half away from zero: 0.88, not 0.87.
    """
    places = decimal_places(rounded_text)
    if places is None or rounded.imag or exact.imag:
        return False
    unit = 10 ** (-places)
    distance = abs(rounded.real - exact.real)
    if distance < 0.5 * unit * (1 - 1e-9):
        return True
    if distance <= 0.5 * unit * (1 + 1e-9):
        return abs(rounded.real) > abs(exact.real)
    return False


def compare_numbers(
    predicted: str,
    reference: str,
    *,
    imaginary_unit: bool = False,
    allow_rounding: bool = True,
    places: int | None = None,
) -> Comparison:
    """Numeric equality; a rounded answer (0.333 for 1/3) counts only when `allow_rounding`, and
    only to the `places` decimal places the question asks for when it says.

    A percent on either side may stand for the number or for its hundredth (28% against 28 or 0.28)."""
    predicted_forms = _number_candidates(predicted)
    if len(predicted_forms) > 1:
        return _compare_each_form(predicted_forms, reference, imaginary_unit, allow_rounding, places)
    reference_forms = _number_candidates(reference)
    reference_text, reference_percent = _strip_percent(reference_forms[0])
    try:
        reference_value = parse_latex(reference_text, imaginary_unit=imaginary_unit)
    except Unparseable as error:
        return unsure(f"reference is not a number I can read ({error})")
    reference_number = numeric_value(reference_value) if is_plain_number(reference_value) else None
    if reference_number is None:
        return unsure(f"reference {reference_forms[0]!r} is not a closed-form number")
    last_failure = None
    differs = None
    for form in predicted_forms:
        if _NOT_A_NUMBER_SHAPE.search(form):
            last_failure = wrong(f"answer {form!r} is a set, interval or tuple, not a number")
            continue
        form_text, form_percent = _strip_percent(form)
        try:
            predicted_value = parse_latex(form_text, imaginary_unit=imaginary_unit)
        except Unparseable as error:
            sentence_number = _number_in_sentence(form) or _value_in_sentence(form)
            if sentence_number is not None and sentence_number != form:
                return compare_numbers(
                    sentence_number,
                    reference,
                    imaginary_unit=imaginary_unit,
                    allow_rounding=allow_rounding,
                    places=places,
                )
            last_failure = unsure(f"answer {form!r} is not a number I can read ({error})")
            continue
        if not is_plain_number(predicted_value):
            sentence_number = _number_in_sentence(form) or _value_in_sentence(form)
            if sentence_number is not None and sentence_number != form:
                return compare_numbers(
                    sentence_number,
                    reference,
                    imaginary_unit=imaginary_unit,
                    allow_rounding=allow_rounding,
                    places=places,
                )
            # Words read as a product of symbols are not an answer of another kind: the checker could not read it.
            if has_prose(form):
                last_failure = unsure(f"answer {form!r} is a sentence with no single value to read")
            else:
                last_failure = wrong(f"answer {form!r} is not a number")
            continue
        # A percent on one side only may stand for the number or its hundredth; on both sides the
        # numbers compare as written (1% is not 100%).
        predicted_values = (
            [predicted_value, predicted_value / 100] if form_percent and not reference_percent else [predicted_value]
        )
        reference_values = (
            [reference_value, reference_value / 100] if reference_percent and not form_percent else [reference_value]
        )
        for value in predicted_values:
            for reference_candidate in reference_values:
                if _same_number(value, reference_candidate):
                    return ok(
                        f"{form!r} and {reference_forms[0]!r} are the same number ({_show(numeric_value(reference_candidate))})"
                    )
        number = numeric_value(predicted_value)
        if number is None:
            last_failure = unsure(f"answer {form!r} has no finite value")
            continue
        reference_places = decimal_places(reference_text)
        predicted_places = decimal_places(form_text)
        # A rounding coarser than the question asks for (1.41 where three places are asked) does not count.
        coarse = places is not None and predicted_places is not None and predicted_places < places
        if (
            allow_rounding
            and not coarse
            and predicted_places is not None
            and form_percent == reference_percent
            and _rounding_matches(form_text, number, reference_number)
        ):
            if reference_places is None or predicted_places <= reference_places:
                return ok(f"{form!r} is {reference_forms[0]!r} rounded to {predicted_places} decimal places")
        if (
            reference_places is not None
            and form_percent == reference_percent
            and _rounding_matches(reference_text, reference_number, number)
        ):
            digits = significant_digits(reference_text) or 0
            if predicted_places is None or digits >= 3:
                return ok(
                    f"the reference {reference_forms[0]!r} is {form!r} rounded to {reference_places} decimal places"
                )
        # Another form of the same answer ("\\sqrt2 \\approx 1.414") may still match.
        differs = differs or wrong(
            f"{form!r} = {_show(number)} differs from {reference_forms[0]!r} = {_show(reference_number)}"
        )
    return differs or last_failure or unsure("no numeric answer")


def _compare_each_form(
    forms: list[str], reference: str, imaginary_unit: bool, allow_rounding: bool, places: int | None
) -> Comparison:
    """'\\frac{13}{4} \\approx 3.25': every form the answer offers is compared. One matching form is
    enough, unless another form is a number that is neither the reference nor a rounding of it
    ('1.3/0.4 \\approx 3.2' against 3.25): an answer that states two values is not certainly right."""
    results = [
        compare_numbers(form, reference, imaginary_unit=imaginary_unit, allow_rounding=allow_rounding, places=places)
        for form in forms
    ]
    matched = next((result for result in results if result.status == CORRECT), None)
    if matched is None:
        return next((result for result in results if result.status == INCORRECT), results[-1])
    for form, result in zip(forms, results):
        if result.status == INCORRECT and not _faithful_rounding(form, reference, imaginary_unit):
            return unsure(f"the answer's forms disagree: {form!r} is not the reference value nor a rounding of it")
    return matched


def _faithful_rounding(form: str, reference: str, imaginary_unit: bool) -> bool:
    try:
        form_value = parse_latex(_strip_percent(form)[0], imaginary_unit=imaginary_unit)
        reference_value = parse_latex(
            _strip_percent(_number_candidates(reference)[0])[0], imaginary_unit=imaginary_unit
        )
    except Unparseable:
        return True
    if not (is_plain_number(form_value) and is_plain_number(reference_value)):
        return True
    number, reference_number = numeric_value(form_value), numeric_value(reference_value)
    if number is None or reference_number is None:
        return True
    return _rounding_matches(form, number, reference_number)


def _same_number(first, second) -> bool:
    """Exact for two rationals (11111111110 is not 11111111100), within a relative tolerance otherwise."""
    if getattr(first, "is_Rational", False) and getattr(second, "is_Rational", False):
        return bool(first == second)
    a, b = numeric_value(first), numeric_value(second)
    return a is not None and b is not None and close(a, b, EXACT_RELATIVE_TOLERANCE)


def _show(number: complex) -> str:
    if number.imag:
        return f"{number.real:.6g}{number.imag:+.6g}i"
    return f"{number.real:.10g}"
