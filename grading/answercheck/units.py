"""Units of measure named by a numeric answer, against the unit the question or reference asks for."""

from __future__ import annotations

import re

# Canonical unit -> its spellings, grouped by what they measure.
_UNITS: dict[str, dict[str, tuple[str, ...]]] = {
    "speed": {
        "km/h": ("km/h", "km/hr", "kmph", "kilometers per hour", "kilometres per hour", "km per hour"),
        "m/s": ("m/s", "meters per second", "metres per second", "m per second"),
        "mph": ("mph", "miles per hour", "mi/h"),
    },
    "length": {
        "mm": ("mm", "millimeter", "millimeters", "millimetre", "millimetres"),
        "cm": ("cm", "centimeter", "centimeters", "centimetre", "centimetres"),
        "m": ("m", "meter", "meters", "metre", "metres"),
        "km": ("km", "kilometer", "kilometers", "kilometre", "kilometres"),
        "in": ("inch", "inches"),
        "ft": ("ft", "foot", "feet"),
        "mi": ("mile", "miles"),
    },
    "time": {
        "s": ("s", "sec", "secs", "second", "seconds"),
        "min": ("min", "mins", "minute", "minutes"),
        "h": ("h", "hr", "hrs", "hour", "hours"),
        "day": ("day", "days"),
    },
    "mass": {
        "g": ("g", "gram", "grams"),
        "kg": ("kg", "kilogram", "kilograms"),
        "lb": ("lb", "lbs", "pound", "pounds"),
    },
}
_SPELLING = {
    spelling: (group, unit)
    for group, units in _UNITS.items()
    for unit, spellings in units.items()
    for spelling in spellings
}
_ALTERNATION = "|".join(sorted((re.escape(spelling) for spelling in _SPELLING), key=len, reverse=True))
# The unit right after the number: "60 m/s", "60\\text{ m/s}", "60\\,\\mathrm{km/h}".
_AFTER_NUMBER = re.compile(
    rf"\d\s*(?:\\[,;!: ]\s*)*(?:\\(?:text|mathrm|textrm|rm)\s*\{{\s*)?({_ALTERNATION})(?![A-Za-z])", re.IGNORECASE
)
# What the question asks for: "in km/h", "(in cm)", "how many minutes".
_ASKED = re.compile(
    rf"\b(?:in|into|to)\s+(?:\\text\{{\s*)?({_ALTERNATION})(?![A-Za-z/])|how\s+many\s+({_ALTERNATION})(?![A-Za-z])",
    re.IGNORECASE,
)


def _unit(spelling: str) -> tuple[str, str] | None:
    return _SPELLING.get(spelling.lower()) or _SPELLING.get(spelling)


def answer_unit(text: str) -> tuple[str, str] | None:
    """(what it measures, canonical unit) of the unit written after the answer's number, if any."""
    found = _AFTER_NUMBER.findall(text or "")
    return _unit(found[-1]) if found else None


def asked_unit(question: str | None) -> tuple[str, str] | None:
    if not question:
        return None
    found = None
    for match in _ASKED.finditer(question):
        found = match.group(1) or match.group(2)
    return _unit(found) if found else None


def asked_phrase(question: str | None) -> str | None:
    """The words of the question that ask for a unit ("in km/h"), so they can travel without the question."""
    unit = asked_unit(question)
    return f"in {unit[1]}" if unit else None


def unit_conflict(predicted: str, reference: str, question: str | None) -> str | None:
    """Why the answer's unit differs from the one asked for ("60 m/s" where km/h is asked), or None.
    Units of different kinds, or a side without a unit, are no conflict."""
    given = answer_unit(predicted)
    if given is None:
        return None
    expected = answer_unit(reference) or asked_unit(question)
    if expected is None or expected[0] != given[0] or expected[1] == given[1]:
        return None
    return f"the answer is in {given[1]}, the question asks for {expected[1]}"
