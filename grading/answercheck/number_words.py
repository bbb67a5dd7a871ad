"""Cardinal numbers written in English words: "seven", "thirty-nine", "twenty-one thousand one hundred eleven".

`number_word_spans` finds the runs of number words in a text (one regular expression over literal words,
linear in the text); `value_of_number_words` reads one run as an integer, refusing sequences that are no
number ("two three", "twenty thirty").
"""

from __future__ import annotations

import re

_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}

_WORD = "|".join(sorted([*_UNITS, *_TENS, "hundred", *_SCALES], key=len, reverse=True))
_RUN = re.compile(
    rf"(?<![\w-])(?:{_WORD})(?:(?:[ \t]*-[ \t]*|[ \t]+(?:and[ \t]+)?)(?:{_WORD}))*(?![\w-])", re.IGNORECASE
)
_TOKEN = re.compile(rf"{_WORD}", re.IGNORECASE)
_FRACTION_AFTER = re.compile(
    r"[ \t-]+(?:and[ \t]+)?(?:an?[ \t]+)?(?:half|halves|thirds?|quarters?|fourths?|fifths?|sixths?|sevenths?|eighths?|"
    r"ninths?|tenths?|hundredths?|thousandths?|point|percent|over|divided)\b",
    re.IGNORECASE,
)
_SIGN_BEFORE = re.compile(r"\b(?:minus|negative)[ \t]+$", re.IGNORECASE)


def value_of_number_words(text: str) -> int | None:
    """The integer a run of number words names, or None when the words do not form one number."""
    tokens = [token.lower() for token in _TOKEN.findall(text)]
    leftover = _TOKEN.sub(" ", text.lower()).replace("-", " ").replace(" and ", " ")
    if not tokens or leftover.strip():
        return None
    total, group, previous = 0, 0, None
    for token in tokens:
        if token in _UNITS:
            # A unit follows nothing, a tens word (twenty-one below 10 only), "hundred" or a scale.
            if (
                previous in ("unit",)
                or (previous == "tens" and _UNITS[token] >= 10)
                or (previous == "tens" and not _UNITS[token])
            ):
                return None
            group += _UNITS[token]
            previous = "unit"
        elif token in _TENS:
            if previous in ("unit", "tens"):
                return None
            group += _TENS[token]
            previous = "tens"
        elif token == "hundred":
            if previous not in ("unit",) or group >= 10:
                return None
            group *= 100
            previous = "hundred"
        else:
            if previous is None or previous == "scale" or group == 0:
                return None
            total += group * _SCALES[token]
            group = 0
            previous = "scale"
    return total + group


def number_word_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int, int]]:
    """(start, end, value) of each run of number words in `text[start:end]` that names a number. A lone
    "one" is left out: it is more often a pronoun ("the smaller one") than a number."""
    spans = []
    for match in _RUN.finditer(text, start, len(text) if end is None else end):
        if match.group(0).lower() == "one":
            continue
        # "three and a half", "two point five", "minus four": a number the words alone do not name.
        if _FRACTION_AFTER.match(text, match.end()) or _SIGN_BEFORE.search(
            text, max(0, match.start() - 12), match.start()
        ):
            continue
        value = value_of_number_words(match.group(0))
        if value is not None:
            spans.append((match.start(), match.end(), value))
    return spans


def number_from_words(text: str) -> str | None:
    """The digits of an answer that is a number in words, perhaps followed by a unit or a noun of at
    most two words ("thirty-nine dollars", "twelve"); None otherwise."""
    stripped = text.strip().rstrip(".").strip()
    match = _RUN.match(stripped)
    if match is None:
        return None
    if _FRACTION_AFTER.match(stripped, match.end()) or _SIGN_BEFORE.search(stripped[: match.start()]):
        return None
    rest = stripped[match.end() :].split()
    if len(rest) > 2 or any(not word.isalpha() for word in rest):
        return None
    value = value_of_number_words(match.group(0))
    return None if value is None else str(value)
