"""Intervals, unions of intervals and inequalities read as sets."""

from __future__ import annotations

import re

import sympy

from grading.answercheck.compare.numeric import EXACT_RELATIVE_TOLERANCE, close
from grading.answercheck.compare.outcomes import ok, unsure, wrong
from grading.answercheck.compare.splitting import IN_PREFIX
from grading.answercheck.normalize import clean_latex
from grading.answercheck.parsing import Unparseable, numeric_value, parse_latex
from grading.answercheck.verdict import Comparison

_LESS = {
    "<": (True, "<"),
    "\\lt": (True, "<"),
    "\\le": (False, "<"),
    "\\leq": (False, "<"),
    "\\leqslant": (False, "<"),
    ">": (True, ">"),
    "\\gt": (True, ">"),
    "\\ge": (False, ">"),
    "\\geq": (False, ">"),
    "\\geqslant": (False, ">"),
}
_COMPARATOR = r"(<=?|>=?|\\(?:lt|gt|leq?|geq?|leqslant|geqslant)(?![a-zA-Z]))"
_VARIABLE = r"(?:[a-zA-Z](?:\s*\(\s*[a-zA-Z]\s*\))?)"
_CHAIN = re.compile(rf"^(.+?)\s*{_COMPARATOR}\s*({_VARIABLE})\s*{_COMPARATOR}\s*(.+)$")
_ONE_SIDED = re.compile(rf"^([a-zA-Z])\s*{_COMPARATOR}\s*(.+)$")


def _comparator(symbol: str) -> tuple[bool, str]:
    symbol = symbol.replace("<=", "\\le").replace(">=", "\\ge")
    return _LESS[symbol]


def _inequality_as_interval(text: str):
    """'a < x \\le b', 'x \\ge 1', '3 > x' as a sympy Interval without sympy's general solver."""
    chain = _CHAIN.match(text)
    if chain:
        low_text, first, _, second, high_text = chain.groups()
        (first_open, first_direction), (second_open, second_direction) = _comparator(first), _comparator(second)
        if first_direction != second_direction:
            return None
        low, high = parse_latex(low_text), parse_latex(high_text)
        if first_direction == ">":
            low, high, first_open, second_open = high, low, second_open, first_open
        return sympy.Interval(low, high, first_open, second_open)
    one_sided = _ONE_SIDED.match(text)
    if one_sided:
        _, symbol, bound_text = one_sided.groups()
        strict, direction = _comparator(symbol)
        bound = parse_latex(bound_text)
        if direction == "<":
            return sympy.Interval(-sympy.oo, bound, True, strict)
        return sympy.Interval(bound, sympy.oo, strict, True)
    reversed_sided = re.match(rf"^(.+?)\s*{_COMPARATOR}\s*([a-zA-Z])$", text)
    if reversed_sided:
        bound_text, symbol, _ = reversed_sided.groups()
        strict, direction = _comparator(symbol)
        bound = parse_latex(bound_text)
        if direction == ">":
            return sympy.Interval(-sympy.oo, bound, True, strict)
        return sympy.Interval(bound, sympy.oo, strict, True)
    return None


_OR_CONNECTIVE = re.compile(r"\s*(?:\\text\{\s*or\s*\}|\bor\b|\\lor|\\vee)\s*", re.IGNORECASE)
_AND_CONNECTIVE = re.compile(r"\s*(?:\\text\{\s*and\s*\}|\band\b|\\land|\\wedge)\s*", re.IGNORECASE)


def _connected_inequalities(text: str):
    """'x \\le -1 \\text{ or } x \\ge 5' as a union, 'x > 1 and x < 3' as an intersection; None otherwise."""
    for connective, combine in ((_OR_CONNECTIVE, sympy.Union), (_AND_CONNECTIVE, sympy.Intersection)):
        parts = [part for part in connective.split(text) if part.strip()]
        if len(parts) < 2:
            continue
        pieces = [_inequality_as_interval(part.strip()) for part in parts]
        if any(piece is None for piece in pieces):
            return None
        return combine(*pieces)
    return None


# "\{x \mid 1 < x \le 4\}", "\{x \in \mathbb{R} : x > 2\}": set-builder notation around a condition.
_SET_BUILDER = re.compile(
    r"^\\\{\s*([a-zA-Z])\s*(?:\\in\s*\\mathbb\s*\{?R\}?\s*)?(?:\\mid|\||:|\\vert)\s*(.+?)\s*\\\}$"
)


def _as_set(text: str):
    text = IN_PREFIX.sub("", clean_latex(text))
    builder = _SET_BUILDER.match(text)
    if builder and re.search(rf"(?<![a-zA-Z\\]){builder.group(1)}(?![a-zA-Z])", builder.group(2)):
        text = builder.group(2)
    connected = _connected_inequalities(text)
    if connected is not None:
        return connected
    simple = _inequality_as_interval(text)
    if simple is not None:
        return simple
    text = text.replace("\\mathbb{R}", "(-\\infty, \\infty)").replace("\\mathbb R", "(-\\infty, \\infty)")
    text = re.sub(r"\\emptyset|\\varnothing|\\\{\s*\\\}", "\\\\{\\\\}", text)
    value = parse_latex(text)
    if isinstance(value, sympy.Set):
        return value
    if isinstance(value, (sympy.core.relational.Relational, sympy.And, sympy.Or)):
        symbols = value.free_symbols
        if len(symbols) == 1:
            return value.as_set()
    raise Unparseable(f"{text!r} is not an interval")


def _intervals(value) -> list:
    if isinstance(value, sympy.Union):
        return sorted(
            value.args,
            key=lambda part: float(part.inf) if part.inf.is_finite else (-1e308 if part.inf == -sympy.oo else 1e308),
        )
    return [value]


def _endpoint_equal(a, b) -> bool:
    """Equal endpoints; a decimal endpoint may be the exact one rounded to the digits it shows
    (0.6 and 2.6667 for 3/5 and 8/3, with at least three decimals when it is not exact)."""
    if a == b:
        return True
    if not (a.is_finite and b.is_finite):
        return False
    first, second = numeric_value(a), numeric_value(b)
    if first is None or second is None:
        return False
    if close(first, second, EXACT_RELATIVE_TOLERANCE):
        return True
    if isinstance(a, sympy.Float) and not isinstance(b, sympy.Float):
        places = len(str(sympy.Float(a, 15)).rstrip("0").split(".")[-1]) if "." in str(a) else 0
        return places >= 3 and abs(first - second) <= 0.5 * 10 ** (-places) * (1 + 1e-9)
    return False


def _same_set(predicted, reference) -> bool:
    if predicted == reference:
        return True
    first, second = _intervals(predicted), _intervals(reference)
    if len(first) != len(second):
        return False
    for a, b in zip(first, second):
        if isinstance(a, sympy.Interval) and isinstance(b, sympy.Interval):
            if a.left_open != b.left_open or a.right_open != b.right_open:
                return False
            if not (_endpoint_equal(a.start, b.start) and _endpoint_equal(a.end, b.end)):
                return False
        elif a != b:
            return False
    return True


_CLOSED_AT_INFINITY = re.compile(r"\\infty\s*\]|\[\s*-?\s*\\infty")


def compare_intervals(predicted: str, reference: str) -> Comparison:
    if _CLOSED_AT_INFINITY.search(clean_latex(predicted)) and not _CLOSED_AT_INFINITY.search(clean_latex(reference)):
        return wrong("the answer closes an interval at infinity")
    try:
        reference_set = _as_set(reference)
    except (Unparseable, NotImplementedError, TypeError) as error:
        return unsure(f"cannot read the reference interval ({error})")
    try:
        predicted_set = _as_set(predicted)
    except (Unparseable, NotImplementedError, TypeError) as error:
        return unsure(f"cannot read the answer as an interval ({error})")
    if _same_set(predicted_set, reference_set):
        return ok(f"both describe {reference_set}")
    return wrong(f"answer {predicted_set} differs from reference {reference_set} (endpoints or open/closed ends)")
