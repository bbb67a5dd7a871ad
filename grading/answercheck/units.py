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
    "area": {
        "mm^2": ("mm^2", "square millimeters", "square millimetres", "sq mm"),
        "cm^2": ("cm^2", "square centimeters", "square centimetres", "sq cm"),
        "m^2": ("m^2", "square meters", "square metres", "sq m"),
        "km^2": ("km^2", "square kilometers", "square kilometres", "sq km"),
        "ft^2": ("ft^2", "square feet", "sq ft"),
    },
    "time": {
        "s": ("s", "sec", "secs", "second", "seconds"),
        "min": ("min", "mins", "minute", "minutes"),
        "h": ("h", "hr", "hrs", "hour", "hours"),
        "day": ("day", "days"),
    },
    "volume": {
        "mL": ("ml", "mL", "milliliter", "milliliters", "millilitre", "millilitres"),
        "liters": ("liter", "liters", "litre", "litres"),
        "cm^3": ("cm^3", "cubic centimeters", "cubic centimetres", "cc"),
        "m^3": ("m^3", "cubic meters", "cubic metres"),
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


def is_unit_word(word: str) -> bool:
    """Whether a word is the spelling of a unit ("cm", "metres", "kg")."""
    return _unit(word) is not None


def _unit(spelling: str) -> tuple[str, str] | None:
    return _SPELLING.get(spelling.lower()) or _SPELLING.get(spelling)


# A square or cube written after a length unit: "m^2", "\\text{ m}^2", "m^{2}", "m²", "cm^3".
_SQUARED = re.compile(r"\s*\}?\s*(?:\^\s*\{?\s*2(?!\d)|²)")
_CUBED = re.compile(r"\s*\}?\s*(?:\^\s*\{?\s*3(?!\d)|³)")


def answer_unit(text: str) -> tuple[str, str] | None:
    """(what it measures, canonical unit) of the unit written after the answer's number, if any."""
    found = list(_AFTER_NUMBER.finditer(text or ""))
    if not found:
        return None
    unit = _unit(found[-1].group(1))
    if unit is not None and unit[0] == "length" and _SQUARED.match(text, found[-1].end()):
        return _unit(f"{unit[1]}^2")
    if unit is not None and unit[0] == "length" and _CUBED.match(text, found[-1].end()):
        return _unit(f"{unit[1]}^3")
    return unit


def asked_unit(question: str | None) -> tuple[str, str] | None:
    if not question:
        return None
    found = None
    for match in _ASKED.finditer(question):
        found = match
    if found is None:
        return None
    unit = _unit(found.group(1) or found.group(2))
    # "What is its area in cm²?": the square (or cube) written after the length unit is part of what is asked.
    if unit is not None and unit[0] == "length" and _SQUARED.match(question, found.end()):
        return _unit(f"{unit[1]}^2")
    if unit is not None and unit[0] == "length" and _CUBED.match(question, found.end()):
        return _unit(f"{unit[1]}^3")
    return unit


def asked_phrase(question: str | None) -> str | None:
    """The words of the question that ask for a unit ("in km/h"), so they can travel without the question."""
    unit = asked_unit(question)
    return f"in {unit[1]}" if unit else None


def unit_conflict(predicted: str, reference: str, question: str | None) -> str | None:
    """Why the answer's unit differs from the one asked for ("60 m/s" where km/h is asked, "60 m"
    where an area in square meters is asked), or None. A side without a unit is no conflict, nor
    are units of unrelated kinds (a stray word read as a unit); a length given for an area is."""
    given = answer_unit(predicted)
    if given is None:
        return None
    expected = answer_unit(reference) or asked_unit(question)
    if expected is None or expected[1] == given[1]:
        return None
    if expected[0] != given[0] and {expected[0], given[0]} != {"length", "area"}:
        return None
    return f"the answer is in {given[1]}, the question asks for {expected[1]}"
