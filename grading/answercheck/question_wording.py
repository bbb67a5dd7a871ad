"""What a question says about how its answer is judged: rounding, exact values, decimal places, lowest terms, and
the part of the question a comparison of each type reads.
"""

from __future__ import annotations

import functools
import re

from grading.answercheck import choices, units
from grading.answercheck.compare.angles import ASKED_ANGLE_UNIT
from grading.answercheck.extract import concluding_clause
from grading.answercheck.normalize import clean_latex, normalize_words, word_labelled
from grading.answercheck.parsing import decimal_places
from grading.answercheck.verdict import INCORRECT, Comparison

_ASKS_TO_ROUND = re.compile(
    r"\bround|\bnearest\b|decimal places?|\bapproximat|significant (?:figures|digits)|\bestimate|\bto \w+ decimals?\b",
    re.IGNORECASE,
)
_ASKS_FOR_EXACT = re.compile(
    r"\bexact\b|\bexactly\s*(?:[.?!,;]|$)|simplest (?:radical )?form|lowest terms|in terms of \\?pi|common fraction",
    re.IGNORECASE,
)
ASKS_FOR_PERCENT = re.compile(r"\bpercentage\b|\b(?:as|in|what)\s+(?:a\s+)?percent\b", re.IGNORECASE)
ASKS_TO_FACTOR_COMPLETELY = re.compile(
    r"\bfactori[sz]e\s+(?:completely|fully)|\bfactor\s+(?:completely|fully)|\b(?:completely|fully)\s+factor",
    re.IGNORECASE,
)
ASKS_FOR_LOWEST_TERMS = re.compile(r"lowest terms|simplest form|reduced fraction|common fraction", re.IGNORECASE)
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
        for pattern in (_ASKS_TO_ROUND, _ASKS_FOR_EXACT, ASKS_FOR_LOWEST_TERMS, _PLACES_ASKED, ASKS_FOR_PERCENT)
        for match in pattern.finditer(question)
    ]
    unit = units.asked_phrase(question)
    if unit:
        found.append(unit)
    angle_unit = ASKED_ANGLE_UNIT.search(question)
    if angle_unit:
        found.append(f"in {angle_unit.group(1).lower()}")
    return "; ".join(sorted(set(found))) or None


def rounding_allowed(reference: str, question: str | None) -> bool:
    """A rounded answer stands for the reference only when the question asks for rounding, or when
    the question does not demand an exact value and the reference is not itself a short decimal
    (0.375 written out is exact; 0.38 is a different number)."""
    wording = question or ""
    if _ASKS_TO_ROUND.search(wording):
        return True
    if _ASKS_FOR_EXACT.search(wording):
        return False
    return not re.fullmatch(r"\s*-?\d*\.\d{1,3}\s*%?\s*", clean_latex(reference))


# Parts that make an exact value irrational: pi, radicals, e, logarithms, fractional powers.
_IRRATIONAL_PART = re.compile(
    r"\\pi|π|\\sqrt|√|\\ln|\\log|(?<![A-Za-z\\])e(?![A-Za-z])|\\mathrm\{e\}|\^\s*\{?\s*-?\s*\\?d?t?frac|\^\s*\{?\s*-?\d+\s*/"
)
_BARE_DECIMAL = re.compile(r"[-+]?\d*\.\d+")
_HAS_DECIMAL = re.compile(r"\d\.\d")


def _irrational(text: str) -> bool:
    return bool(_IRRATIONAL_PART.search(clean_latex(text)))


def _bare_decimal(text: str) -> bool:
    return bool(_BARE_DECIMAL.fullmatch(re.sub(r"\s+|\\[,;!]", "", clean_latex(text))))


def exactness_mismatch(predicted: str, reference: str, question: str | None) -> Comparison | None:
    """A decimal where an exact value is asked for, or an exact value where a rounding is asked.

    When the question asks for an exact value ("Find the exact area", "Evaluate ... exactly") and
    the reference is exact with irrational parts (3/4 pi, sqrt 10, e - 1), a decimal can only be an
    approximation and is wrong. Without that wording a decimal may stand for the value (the
    question did not rule it out). An exact irrational value is not the answer when the question
    asks for a rounding and the reference is the rounded decimal. None when neither applies."""
    wording = question or ""
    asks_to_round = bool(_ASKS_TO_ROUND.search(wording))
    if (
        _ASKS_FOR_EXACT.search(wording)
        and not asks_to_round
        and _bare_decimal(predicted)
        and not _bare_decimal(reference)
        and _irrational(reference)
    ):
        return Comparison(
            INCORRECT, f"{predicted!r} is a decimal approximation; the question asks for the exact value {reference!r}"
        )
    if asks_to_round and _bare_decimal(reference) and not _HAS_DECIMAL.search(predicted) and _irrational(predicted):
        return Comparison(INCORRECT, f"the question asks for a rounded value; {predicted!r} is the exact value")
    return None


def finer_than_asked(predicted: str, reference: str, places: int | None) -> bool:
    """'3.141' where two decimal places are asked and the reference is '3.14': not rounded as asked."""
    if places is None or not _bare_decimal(predicted):
        return False
    predicted_places = decimal_places(clean_latex(predicted).strip())
    if predicted_places is None or predicted_places <= places:
        return False
    try:
        return float(clean_latex(predicted)) != float(clean_latex(reference))
    except ValueError:
        return False


@functools.lru_cache(maxsize=65536)  # pure, and asked again for every sample of a question with the same answer
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
    if (
        code == "C3"
        and extracted
        and any(
            choices.polarity_in_question(text, question) is not None
            for text in (extracted, concluding_clause(extracted))
        )
    ):
        # "Dependent" answers "Is the set linearly independent?"; only then is the question read.
        return question
    wording = []
    if code in ("A1", "A2", "A3", "A4", "A6"):
        wording.append(numeric_wording(question))
    if code == "B1" and question and ASKS_TO_FACTOR_COMPLETELY.search(question):
        wording.append("factor completely")
    asked = asked_part_name(question, extracted)
    if asked is not None:
        wording.append(f"asks for the {asked}")
    return "; ".join(part for part in wording if part) or None


def asked_part_name(question: str | None, answer: str | None) -> str | None:
    """The one part of an answer in named parts ('centre (3, -2) and radius 4') whose name the
    question uses ("Find the centre of the circle"), or None."""
    if not question or not answer:
        return None
    parts = word_labelled(answer, groups=True)
    if parts is None:
        return None
    question_words = set(normalize_words(question).split())
    asked = [label for label, _ in parts if set(label.split()) <= question_words]
    return asked[0] if len(asked) == 1 else None
