"""What a question says about how its answer is judged: rounding, exact values, decimal places, lowest terms, and
the part of the question a comparison of each type reads.
"""

from __future__ import annotations

import re

from grading.answercheck import choices, units
from grading.answercheck.normalize import clean_latex

_ASKS_TO_ROUND = re.compile(
    r"\bround|\bnearest\b|decimal places?|\bapproximat|significant (?:figures|digits)|\bestimate|\bto \w+ decimals?\b",
    re.IGNORECASE,
)
_ASKS_FOR_EXACT = re.compile(
    r"\bexact (?:value|answer|form|expression)|simplest (?:radical )?form|lowest terms|in terms of \\?pi|common fraction",
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
        for pattern in (_ASKS_TO_ROUND, _ASKS_FOR_EXACT, ASKS_FOR_LOWEST_TERMS, _PLACES_ASKED)
        for match in pattern.finditer(question)
    ]
    unit = units.asked_phrase(question)
    if unit:
        found.append(unit)
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
