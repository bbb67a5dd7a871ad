"""The VerifyBench answer-type taxonomy. Pure data and parsing; no Django imports."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class AnswerType:
    code: str  # the paper's fine code, e.g. "A1"
    name: str  # the spelling of the public release after the code, e.g. "Integer"
    example: str
    description: str

    @property
    def coarse(self) -> str:
        return self.code[0]

    @property
    def public_label(self) -> str:
        """`answer_type` as spelled in the public VerifyBench files."""
        return f"{PUBLIC_CODE.get(self.code, self.code)} - {self.name}"


COARSE_CLASSES: dict[str, str] = {
    "A": "Numeric Values",
    "B": "Expressions",
    "C": "Multiple Choice",
    "D": "String",
}

ANSWER_TYPES: tuple[AnswerType, ...] = (
    AnswerType("A1", "Integer", "351", "A whole number."),
    AnswerType("A2", "Constant", r"2\pi", "A numeric value containing constants such as pi or e."),
    AnswerType("A3", "Fraction/Float", r"\frac{1}{2}, 3.125, 1:2", "A fraction, decimal or proportion."),
    AnswerType("A4", "Radical", r"\sqrt{3}", "A numeric value containing radicals."),
    AnswerType("A5", "Complex Number", "3+4i", "A complex number."),
    AnswerType("A6", "Angle", r"120^\circ", "An angle, in degrees or radians."),
    AnswerType("A7", "Non-decimal number", "1234_8", "A number written in a base other than 10."),
    AnswerType("A8", "Multiple Values", "1, -2", "Several values with no order between them."),
    AnswerType("B1", "Algebraic formula", "ax+b", "An algebraic expression."),
    AnswerType("B2", "Equation", "ax+b=0", "An equation or a system of equations."),
    AnswerType("B3", "Interval", r"(1,2) \cup (3,4)", "An interval or a union/intersection of intervals."),
    AnswerType("B4", "Set", r"\{1,2,3\}", "A set or a tuple of elements."),
    AnswerType("B5", "Matrix/Vector", r"\begin{pmatrix} -7 \\ 16 \end{pmatrix}", "A matrix or a vector."),
    AnswerType("C1", "Single Choice", "B", "One correct option out of several."),
    AnswerType("C2", "Multiple Choice", "A, C", "Several correct options out of several."),
    AnswerType(
        "C3", "Finite state selection", "True", "One state out of a finite set: true/false, yes/no, valid/invalid."
    ),
    AnswerType("D1", "Specific", "photosynthesis", "A specific word or wording must appear."),
    AnswerType("D2", "Semantic", "the sequence diverges", "Natural language judged by semantic equivalence."),
)

# The public files number finite-state selection C4 where the paper says C3.
PUBLIC_CODE = {"C3": "C4"}
_PUBLIC_TO_PAPER = {v: k for k, v in PUBLIC_CODE.items()}

BY_CODE: dict[str, AnswerType] = {t.code: t for t in ANSWER_TYPES}
FINE_CODES: tuple[str, ...] = tuple(BY_CODE)
_BY_NAME = {re.sub(r"[^a-z0-9]", "", t.name.lower()): t for t in ANSWER_TYPES}
_CODE_RE = re.compile(r"^\s*([A-Ea-e])([0-9])?\s*(?:[-:.)]\s*(.*))?$")


class UnknownAnswerType(ValueError):
    pass


def coarse_label(letter: str) -> str:
    """`answer_subtype` as spelled in the public files, e.g. "A - Numeric Values"."""
    return f"{letter} - {COARSE_CLASSES[letter]}"


def parse_answer_type(value: str | None) -> AnswerType | None:
    """Parse a paper code ("A1"), a public spelling ("A1 - Integer", "C4 - Finite state selection") or a bare name.

    Returns None for an empty value. Raises UnknownAnswerType for anything else it cannot place,
    including the excluded class E.
    """
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    match = _CODE_RE.match(text)
    if match:
        letter, digit, name = match.group(1).upper(), match.group(2), (match.group(3) or "").strip()
        if name:
            by_name = _BY_NAME.get(re.sub(r"[^a-z0-9]", "", name.lower()))
            if by_name is not None and by_name.coarse == letter:
                return by_name
        if digit:
            code = letter + digit
            code = _PUBLIC_TO_PAPER.get(code, code) if name or code in _PUBLIC_TO_PAPER else code
            if code in BY_CODE:
                return BY_CODE[code]
    by_name = _BY_NAME.get(re.sub(r"[^a-z0-9]", "", text.lower()))
    if by_name is not None:
        return by_name
    raise UnknownAnswerType(f"unknown answer type {text!r}; expected one of {', '.join(FINE_CODES)}")


def parse_coarse_class(value: str | None) -> str | None:
    """Parse "A", "A - Numeric Values" or "Numeric Values" into the coarse letter."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    match = re.match(r"^([A-Da-d])(?:\s*[-:.)]\s*.*)?$", text)
    if match:
        return match.group(1).upper()
    for letter, name in COARSE_CLASSES.items():
        if text.lower() == name.lower():
            return letter
    raise UnknownAnswerType(f"unknown answer class {text!r}; expected one of A, B, C, D")
