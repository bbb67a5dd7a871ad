"""LaTeX -> sympy through latex2sympy2_extended, with guards against inputs that explode."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache

import sympy
from latex2sympy2_extended import NormalizationConfig, latex2sympy
from latex2sympy2_extended.latex2sympy2 import ConversionConfig

from grading.answercheck.fastparse import fast_expression
from grading.answercheck.normalize import clean_latex

_NORMALIZATION = NormalizationConfig(
    basic_latex=True, units=True, malformed_operators=True, nits=True, boxed="none", equations=False
)
_PLAIN_NORMALIZATION = NormalizationConfig(
    basic_latex=True, units=False, malformed_operators=False, nits=False, boxed="none", equations=False
)
_CONVERSION = ConversionConfig(
    interpret_as_mixed_fractions=False,
    interpret_simple_eq_as_assignment=False,
    interpret_contains_as_eq=True,
    lowercase_symbols=False,
)

MAX_ANSWER_LENGTH = 1500
MAX_EXPONENT = 2000
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_EXPONENT = re.compile(r"(?:\^|\*\*)\s*\{?\s*\(?\s*-?\s*(\d+(?:\.\d+)?)")
# A power inside an exponent that is itself inside an exponent ("a^{b^{c^{d}}}").
_EXPONENT_TOWER_NESTED = re.compile(r"(?:\^|\*\*)[^^*]*(?:\^|\*\*)")
_FACTORIAL = re.compile(r"(\d+)\s*!")

IMAGINARY_UNIT = sympy.Symbol("i")


class Unparseable(ValueError):
    pass


class TooExpensive(ValueError):
    """The answer would take unbounded time or memory to evaluate symbolically."""


MAX_NESTING = 40
MAX_BINOMIAL_ARGUMENT = 10_000
MAX_FACTORIAL_ARGUMENT = 500
_BINOMIAL = re.compile(r"\\[dt]?binom|\\choose|\\operatorname\{C\}|\bC\s*\(|\bnCr\b")
_INTEGER = re.compile(r"\d+")
_GROUP_FACTORIAL = re.compile(r"[)}\]]\s*!")


def _group_before(text: str, close_index: int) -> str:
    """The bracketed group ending at `close_index` ("(10^{5})" before a "!")."""
    closer = text[close_index]
    opener = {")": "(", "}": "{", "]": "["}[closer]
    depth = 0
    for index in range(close_index, -1, -1):
        if text[index] == closer:
            depth += 1
        elif text[index] == opener:
            depth -= 1
            if depth == 0:
                return text[index : close_index + 1]
    return text[: close_index + 1]


def _exponent_groups(text: str):
    """The text of every exponent: "^{...}" with its braces matched, or the token after "^"."""
    for match in re.finditer(r"\^|\*\*", text):
        index = match.end()
        while index < len(text) and text[index] == " ":
            index += 1
        if index < len(text) and text[index] == "{":
            depth = 0
            for end in range(index, len(text)):
                if text[end] == "{":
                    depth += 1
                elif text[end] == "}":
                    depth -= 1
                    if depth == 0:
                        yield text[index + 1 : end]
                        break
            else:
                yield text[index + 1 :]
        else:
            token = re.match(r"\(?[-\d.]+\)?|\\?[A-Za-z]+|.", text[index:])
            yield token.group(0) if token else ""


def _bounded_tower(exponent: str) -> bool:
    """An exponent that is itself a power of a variable with single-digit numbers ("e^{x^2}",
    "e^{-x^{2}/2}"): its value stays small at the points where expressions are sampled, and no
    big-integer power can come of it. A tower of numbers ("2^{3^{4}}") is not bounded."""
    variables = re.sub(r"\\[a-zA-Z]+", " ", exponent)
    if not re.search(r"[a-zA-Z]", variables) or _EXPONENT_TOWER_NESTED.search(exponent):
        return False
    return all(int(number) < 10 for number in _INTEGER.findall(exponent))


def check_cost(text: str) -> None:
    """Refuse answers whose evaluation could blow up before any sympy work starts: long texts, deep
    nesting, large exponents or exponent towers, large factorials and binomials. These are checked
    on the text because big-integer arithmetic runs in C, where no deadline can interrupt it."""
    if len(text) > MAX_ANSWER_LENGTH:
        raise TooExpensive(f"answer longer than {MAX_ANSWER_LENGTH} characters")
    depth = deepest = 0
    for char in text:
        if char in "{([":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "})]":
            depth -= 1
    if deepest > MAX_NESTING:
        raise TooExpensive(f"brackets nested {deepest} deep")
    if text.count("\\frac") + text.count("\\sqrt") > 60:
        raise TooExpensive("too many nested fractions or roots")
    for match in _EXPONENT.finditer(text):
        if float(match.group(1)) > MAX_EXPONENT:
            raise TooExpensive(f"exponent {match.group(1)} is larger than {MAX_EXPONENT}")
    for exponent in _exponent_groups(text):
        if ("^" in exponent or "**" in exponent) and not _bounded_tower(exponent):
            raise TooExpensive("power tower")
        for number in _INTEGER.findall(exponent):
            if int(number) > MAX_EXPONENT:
                raise TooExpensive(f"exponent {exponent!r} is too large")
        if "!" in exponent or "binom" in exponent:
            raise TooExpensive("factorial or binomial in an exponent")
    for match in _FACTORIAL.finditer(text):
        if int(match.group(1)) > MAX_FACTORIAL_ARGUMENT:
            raise TooExpensive(f"factorial of {match.group(1)}")
    for match in _GROUP_FACTORIAL.finditer(text):
        group = _group_before(text, match.start())
        if "^" in group or any(int(number) > MAX_FACTORIAL_ARGUMENT for number in _INTEGER.findall(group)):
            raise TooExpensive(f"factorial of {group}")
    if "!!" in text.replace(" ", ""):
        numbers = [int(number) for number in _INTEGER.findall(text)]
        if any(number > MAX_FACTORIAL_ARGUMENT for number in numbers):
            raise TooExpensive("multifactorial of a large number")
    if _BINOMIAL.search(text):
        if any(int(number) > MAX_BINOMIAL_ARGUMENT for number in _INTEGER.findall(text)) or "^" in text:
            raise TooExpensive("binomial coefficient of large numbers")


def parse_latex(text: str, *, imaginary_unit: bool = False):
    """sympy object for a LaTeX answer. `imaginary_unit` maps a free `i` to sympy.I.

    Results are cached: a batch parses the same reference and the same common answers many times.
    Callers must not mutate a returned matrix.
    """
    return _parse_latex_cached(text, imaginary_unit)


_SIMPLE_NUMBER = r"[-+]?(?:\d+(?:\.\d+)?|\.\d+|\\frac\{\d+\}\{\d+\}|\\frac\d\d|-?\\infty)"
_FAST_NUMBER = re.compile(rf"^{_SIMPLE_NUMBER}$")
_FAST_INTERVAL = re.compile(rf"^([\[(])\s*({_SIMPLE_NUMBER})\s*,\s*({_SIMPLE_NUMBER})\s*([\])])$")


def _fast_number(text: str):
    text = text.replace(" ", "")
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    if body == "\\infty":
        return sign * sympy.oo
    fraction = re.fullmatch(r"\\frac(?:\{(\d+)\}\{(\d+)\}|(\d)(\d))", body)
    if fraction:
        numerator, denominator = (int(g) for g in fraction.groups() if g is not None)
        if denominator == 0:
            raise Unparseable("division by zero")
        return sign * sympy.Rational(numerator, denominator)
    if "." in body:
        return sign * sympy.Float(body, max(15, len(body)))
    return sign * sympy.Integer(body)


def _fast_parse(text: str):
    """Plain numbers and simple intervals without the full LaTeX grammar, which is slow."""
    if _FAST_NUMBER.match(text):
        return _fast_number(text)
    interval = _FAST_INTERVAL.match(text)
    if interval:
        opener, low, high, closer = interval.groups()
        low_value, high_value = _fast_number(low), _fast_number(high)
        if low_value.is_comparable and high_value.is_comparable and low_value < high_value:
            return sympy.Interval(
                low_value, high_value, opener == "(" or low_value.is_infinite, closer == ")" or high_value.is_infinite
            )
    return None


@lru_cache(maxsize=8192)
def _parse_latex_cached(text: str, imaginary_unit: bool):
    text = clean_latex(text)
    check_cost(text)
    if not text:
        raise Unparseable("empty answer")
    fast = _fast_parse(text)
    if fast is not None:
        return fast
    # Plain arithmetic (polynomials, fractions, radicals, pi) without the slow full grammar.
    fast = fast_expression(text, imaginary_unit=imaginary_unit)
    if fast is not None:
        return fast
    value = None
    failure: Exception | None = None
    # The unit-stripping normalization occasionally eats letters ("+ ab"); retry without it.
    for normalization in (_NORMALIZATION, _PLAIN_NORMALIZATION):
        try:
            value = latex2sympy(text, normalization_config=normalization, conversion_config=_CONVERSION)
            break
        except Exception as error:
            failure = error
    if value is None and failure is not None:
        raise Unparseable(f"cannot parse {text!r}: {str(failure).splitlines()[0]}") from failure
    if value is None:
        raise Unparseable(f"cannot parse {text!r}")
    if imaginary_unit and isinstance(value, sympy.Basic) and IMAGINARY_UNIT in value.free_symbols:
        value = value.subs(IMAGINARY_UNIT, sympy.I)
    return value


def decimal_places(text: str) -> int | None:
    """Digits after the point when `text` is a plain decimal literal ("0.333" -> 3), else None."""
    literal = clean_latex(text).replace(" ", "").replace("{,}", "")
    if re.fullmatch(r"[-+]?\d*\.\d+", literal):
        return len(literal.split(".")[1])
    return None


def significant_digits(text: str) -> int | None:
    literal = clean_latex(text).replace(" ", "").lstrip("+-")
    try:
        digits = Decimal(literal).as_tuple().digits
    except InvalidOperation:
        return None
    stripped = "".join(map(str, digits)).lstrip("0")
    return len(stripped) or 1


def is_plain_number(value) -> bool:
    return isinstance(value, sympy.Expr) and not value.free_symbols and not isinstance(value, sympy.MatrixBase)


def numeric_value(value, precision: int = 30) -> complex | None:
    """A Python complex for a closed-form number, or None when it is not a finite number. Cached for
    hashable values: one comparison asks for the same reference's value several times."""
    try:
        hash(value)
    except TypeError:
        return _numeric_value(value, precision)
    return _numeric_value_cached(value, precision)


@lru_cache(maxsize=8192)
def _numeric_value_cached(value, precision: int) -> complex | None:
    return _numeric_value(value, precision)


def _numeric_value(value, precision: int) -> complex | None:
    if isinstance(value, sympy.Integer | sympy.Rational | sympy.Float):
        # Plain numbers need no evaluation (sympy.N is the slow part of comparing many of them).
        try:
            plain = float(value)
        except (OverflowError, TypeError, ValueError):
            plain = None
        if plain is not None and plain == plain and abs(plain) != float("inf"):
            return complex(plain)
    try:
        evaluated = sympy.N(value, precision)
        real, imaginary = evaluated.as_real_imag()
        real, imaginary = complex(real), complex(imaginary)
    except (TypeError, ValueError, AttributeError, OverflowError):
        return None
    number = complex(real.real, imaginary.real)
    if number != number or abs(number) == float("inf"):
        return None
    return number
