"""Type-aware comparison of an extracted answer with a reference answer.

Every function returns a Comparison(status, explanation). When a comparison cannot decide it says
inconclusive rather than guessing "correct": for training rewards a false "correct" costs more
than a missed one.
"""

from __future__ import annotations

import random
import re

import sympy

from grading.answercheck.normalize import (
    clean_latex,
    normalize_words,
    plain_number,
    strip_assignment,
    strip_trailing_units,
)
from grading.answercheck.parsing import (
    Unparseable,
    decimal_places,
    is_plain_number,
    numeric_value,
    parse_latex,
    significant_digits,
)
from grading.answercheck.verdict import CORRECT, INCONCLUSIVE, INCORRECT, Comparison

EXACT_RELATIVE_TOLERANCE = 1e-9


def _ok(why: str) -> Comparison:
    return Comparison(CORRECT, why)


def _wrong(why: str) -> Comparison:
    return Comparison(INCORRECT, why)


def _unsure(why: str) -> Comparison:
    return Comparison(INCONCLUSIVE, why)


# ---------------------------------------------------------------- splitting helpers

_OPENERS, _CLOSERS = "([{", ")]}"


def split_top_level(text: str, separators: str = ",;") -> list[str]:
    """Split on separators that are not nested inside brackets or braces."""
    parts, depth, current = [], 0, []
    index = 0
    while index < len(text):
        char = text[index]
        if text.startswith("\\{", index) or text.startswith("\\langle", index):
            depth += 1
        elif text.startswith("\\}", index) or text.startswith("\\rangle", index):
            depth -= 1
        elif char in _OPENERS:
            depth += 1
        elif char in _CLOSERS:
            depth -= 1
        if text.startswith("\\\\", index) and depth == 0 and "\\" in separators:
            parts.append("".join(current))
            current = []
            index += 1
        elif char in separators and char != "\\" and depth == 0:
            parts.append("".join(current))
            current = []
        elif char == "\\" and text.startswith("\\\\", index):
            # A LaTeX line break inside brackets: keep both characters together.
            current.append("\\\\")
            index += 1
        else:
            current.append(char)
        index += 1
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


_WORD_SEPARATORS = re.compile(
    r"\s*(?:\\text\{\s*(?:and|or)\s*\}|\\(?:quad|qquad)|\b(?:and|or)\b|\\lor|\\vee)\s*", re.IGNORECASE
)


def _delimited(text: str) -> tuple[str, str] | None:
    """('set'|'tuple'|'list'|'vector', inner) for text wrapped in one pair of matching delimiters."""
    text = text.strip()
    pairs = (
        ("\\{", "\\}", "set"),
        ("\\langle", "\\rangle", "vector"),
        ("(", ")", "tuple"),
        ("[", "]", "list"),
        ("{", "}", "group"),
    )
    for opener, closer, kind in pairs:
        if text.startswith(opener) and text.endswith(closer):
            inner = text[len(opener) : len(text) - len(closer)]
            # "(1,2) \cup (3,4)" starts and ends with parentheses that do not match each other.
            if _balanced(inner):
                return kind, inner
    return None


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        if char in _OPENERS:
            depth += 1
        elif char in _CLOSERS:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def split_values(text: str) -> list[str]:
    """'x = 1 or x = -2', '\\{1, -2\\}', '1 and -2', '1, -2' -> ['1', '-2']; expands ±."""
    text = clean_latex(text)
    delimited = _delimited(text)
    if delimited and delimited[0] in ("set", "group"):
        text = delimited[1]
    text = _WORD_SEPARATORS.sub(",", text)
    values: list[str] = []
    for part in split_top_level(text, ",;"):
        part = strip_assignment(part)
        if "\\pm" in part or "\\mp" in part:
            values.append(part.replace("\\pm", "+").replace("\\mp", "-"))
            values.append(part.replace("\\pm", "-").replace("\\mp", "+"))
        else:
            values.append(part)
    return [value for value in values if value]


# ---------------------------------------------------------------- numbers

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


def _percent_variants(text: str, value):
    if text.rstrip().endswith("%"):
        return [value, value / 100]
    return [value]


_ONE_NUMBER = re.compile(r"(?<![\w.^_{])[-+]?\d+(?:[.,]\d+)*(?:\s*%)?(?![\w.^_])")
_NEGATED = re.compile(r"\b(?:not|no|never|isn't|wrong|incorrect)\b", re.IGNORECASE)


def _number_in_sentence(text: str) -> str | None:
    """The one number in an answer written as a sentence ('Jane started growing Sphere 3 hours ago')."""
    words = re.findall(r"[A-Za-z]{2,}", text)
    if len(words) < 2 or _NEGATED.search(text) or "\\" in text:
        return None
    numbers = _ONE_NUMBER.findall(text)
    return numbers[0].strip() if len(numbers) == 1 else None


_NOT_A_NUMBER_SHAPE = re.compile(r"^[-+]?\s*[\[(].*,.*[\])]$|^\\\{.*\\\}$|\\begin\{[pbv]?matrix\}")


def _close(a: complex, b: complex, tolerance: float) -> bool:
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
    reference_forms = _number_candidates(reference)
    reference_text, reference_percent = _strip_percent(reference_forms[0])
    try:
        reference_value = parse_latex(reference_text, imaginary_unit=imaginary_unit)
    except Unparseable as error:
        return _unsure(f"reference is not a number I can read ({error})")
    reference_number = numeric_value(reference_value) if is_plain_number(reference_value) else None
    if reference_number is None:
        return _unsure(f"reference {reference_forms[0]!r} is not a closed-form number")
    last_failure = None
    differs = None
    for form in predicted_forms:
        if _NOT_A_NUMBER_SHAPE.search(form):
            last_failure = _wrong(f"answer {form!r} is a set, interval or tuple, not a number")
            continue
        form_text, form_percent = _strip_percent(form)
        try:
            predicted_value = parse_latex(form_text, imaginary_unit=imaginary_unit)
        except Unparseable as error:
            sentence_number = _number_in_sentence(form)
            if sentence_number is not None and sentence_number != form:
                return compare_numbers(
                    sentence_number,
                    reference,
                    imaginary_unit=imaginary_unit,
                    allow_rounding=allow_rounding,
                    places=places,
                )
            last_failure = _unsure(f"answer {form!r} is not a number I can read ({error})")
            continue
        if not is_plain_number(predicted_value):
            sentence_number = _number_in_sentence(form)
            if sentence_number is not None and sentence_number != form:
                return compare_numbers(
                    sentence_number,
                    reference,
                    imaginary_unit=imaginary_unit,
                    allow_rounding=allow_rounding,
                    places=places,
                )
            last_failure = _wrong(f"answer {form!r} is not a number")
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
                    return _ok(
                        f"{form!r} and {reference_forms[0]!r} are the same number ({_show(numeric_value(reference_candidate))})"
                    )
        number = numeric_value(predicted_value)
        if number is None:
            last_failure = _unsure(f"answer {form!r} has no finite value")
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
                return _ok(f"{form!r} is {reference_forms[0]!r} rounded to {predicted_places} decimal places")
        if (
            reference_places is not None
            and form_percent == reference_percent
            and _rounding_matches(reference_text, reference_number, number)
        ):
            digits = significant_digits(reference_text) or 0
            if predicted_places is None or digits >= 3:
                return _ok(
                    f"the reference {reference_forms[0]!r} is {form!r} rounded to {reference_places} decimal places"
                )
        # Another form of the same answer ("\\sqrt2 \\approx 1.414") may still match.
        differs = differs or _wrong(
            f"{form!r} = {_show(number)} differs from {reference_forms[0]!r} = {_show(reference_number)}"
        )
    return differs or last_failure or _unsure("no numeric answer")


def _same_number(first, second) -> bool:
    """Exact for two rationals (11111111110 is not 11111111100), within a relative tolerance otherwise."""
    if getattr(first, "is_Rational", False) and getattr(second, "is_Rational", False):
        return bool(first == second)
    a, b = numeric_value(first), numeric_value(second)
    return a is not None and b is not None and _close(a, b, EXACT_RELATIVE_TOLERANCE)


def _show(number: complex) -> str:
    if number.imag:
        return f"{number.real:.6g}{number.imag:+.6g}i"
    return f"{number.real:.10g}"


# ---------------------------------------------------------------- expressions

_INTEGRATION_CONSTANT = re.compile(r"\s*\+\s*(?:\\text\{\s*)?\b[CcK]\b(?:\s*\})?\s*$")


def _random_points(symbols, count: int, seed: int):
    generator = random.Random(seed)
    for _ in range(count):
        yield {symbol: sympy.Float(generator.uniform(0.3, 2.7), 30) for symbol in symbols}


def _evaluate(expression, point) -> complex | None:
    try:
        return numeric_value(expression.subs(point))
    except Exception:
        return None


def expressions_agree(predicted, reference, *, up_to_constant: bool = False, points: int = 8) -> bool | None:
    """Randomized numeric evaluation: True (agree everywhere sampled), False (clear difference), None."""
    symbols = sorted(predicted.free_symbols | reference.free_symbols, key=str)
    agreed = 0
    offset = None
    largest = 0.0
    for point in _random_points(symbols, points, seed=len(symbols) * 7919 + 17):
        a, b = _evaluate(predicted, point), _evaluate(reference, point)
        if a is None or b is None:
            continue
        largest = max(largest, abs(a), abs(b))
        difference = a - b
        if up_to_constant:
            if offset is None:
                offset = difference
            difference -= offset
        if abs(difference) <= 1e-8 * max(1.0, abs(a), abs(b)):
            agreed += 1
        elif abs(difference) > 1e-6 * max(1.0, abs(a), abs(b)):
            return False
    if agreed >= 3:
        if largest > 1e6 and not up_to_constant:
            # A relative tolerance hides "+1" next to 6^60: confirm on exact rational points.
            return _exactly_equal_at_points(predicted, reference, symbols)
        return True
    return None


def _exactly_equal_at_points(predicted, reference, symbols) -> bool | None:
    """True / False when the difference is an exact rational at two rational points, None otherwise."""
    generator = random.Random(len(symbols) * 104729 + 3)
    for _ in range(2):
        point = {symbol: sympy.Rational(generator.randint(3, 27), 10) for symbol in symbols}
        try:
            difference = sympy.expand(predicted.subs(point) - reference.subs(point))
        except Exception:
            return None
        if not getattr(difference, "is_Rational", False):
            return None
        if difference != 0:
            return False
    return True


def _degree_bound(expression) -> int | None:
    """An upper bound of the degree of a polynomial read off its tree without expanding it; None
    when it is not visibly a polynomial."""
    if expression.is_Symbol:
        return 1
    if expression.is_number:
        return 0
    if expression.is_Add or expression.is_Mul:
        parts = [_degree_bound(argument) for argument in expression.args]
        if any(part is None for part in parts):
            return None
        return max(parts) if expression.is_Add else sum(parts)  # type: ignore[arg-type]
    if expression.is_Pow and expression.exp.is_Integer and expression.exp >= 0:
        base = _degree_bound(expression.base)
        return None if base is None else base * int(expression.exp)
    return None


def _polynomials_equal(predicted, reference) -> bool | None:
    """Exact answer for two polynomials with rational coefficients (expanding their difference is
    cheaper and surer than sampling); None for anything else or a large expansion."""
    symbols = predicted.free_symbols | reference.free_symbols
    bounds = (_degree_bound(predicted), _degree_bound(reference))
    if len(symbols) > 3 or any(bound is None or bound > 20 for bound in bounds):
        return None
    difference = sympy.expand(predicted - reference)
    if not all(
        coefficient.is_Rational
        for coefficient in sympy.Poly(
            difference, *sorted(difference.free_symbols | {sympy.Symbol("x")}, key=str)
        ).coeffs()
    ):
        return None
    return difference == 0


def _symbolically_equal(predicted, reference) -> bool:
    try:
        return sympy.simplify(predicted - reference) == 0
    except Exception:
        return False


def compare_expressions(predicted: str, reference: str) -> Comparison:
    predicted_text, reference_text = strip_assignment(clean_latex(predicted)), strip_assignment(clean_latex(reference))
    up_to_constant = bool(_INTEGRATION_CONSTANT.search(reference_text))
    if up_to_constant:
        reference_text = _INTEGRATION_CONSTANT.sub("", reference_text)
        predicted_text = _INTEGRATION_CONSTANT.sub("", predicted_text)
    try:
        reference_value = parse_latex(reference_text)
    except Unparseable as error:
        return _unsure(f"cannot read the reference expression ({error})")
    try:
        predicted_value = parse_latex(predicted_text)
    except Unparseable as error:
        return _unsure(f"cannot read the answer expression ({error})")
    if not isinstance(reference_value, sympy.Expr) or not isinstance(predicted_value, sympy.Expr):
        if isinstance(reference_value, sympy.Basic) and reference_value == predicted_value:
            return _ok("identical after parsing")
        return _unsure("one side is not an algebraic expression")
    if is_plain_number(reference_value) and is_plain_number(predicted_value):
        return compare_numbers(predicted_text, reference_text)
    extra = {str(s) for s in predicted_value.free_symbols} - {str(s) for s in reference_value.free_symbols}
    missing = {str(s) for s in reference_value.free_symbols} - {str(s) for s in predicted_value.free_symbols}
    if not up_to_constant and not extra and not missing:
        exact = _polynomials_equal(predicted_value, reference_value)
        if exact is True:
            return _ok(f"{predicted_text!r} and {reference_text!r} expand to the same polynomial")
        if exact is False:
            return _wrong(f"{predicted_text!r} and {reference_text!r} expand to different polynomials")
    agreement = expressions_agree(predicted_value, reference_value, up_to_constant=up_to_constant)
    if agreement is None and not up_to_constant and _symbolically_equal(predicted_value, reference_value):
        return _ok(f"{predicted_text!r} simplifies to {reference_text!r}")
    if agreement is True and not extra and not missing:
        how = "up to an additive constant" if up_to_constant else "at 8 random points"
        return _ok(f"{predicted_text!r} and {reference_text!r} agree numerically {how}")
    if agreement is False:
        return _wrong(f"{predicted_text!r} and {reference_text!r} take different values at a random point")
    if extra or missing:
        return _wrong(
            f"variables differ: answer has {sorted(extra) or 'none extra'}, misses {sorted(missing) or 'none'}"
        )
    return _unsure("could not evaluate either expression numerically")


# ---------------------------------------------------------------- equations


def _equation_parts(text: str) -> list[str]:
    text = clean_latex(text)
    text = re.sub(
        r"\\begin\{(?:cases|aligned|align\*?|array|gathered|split)\}(?:\{[^}]*\})?|\\end\{(?:cases|aligned|align\*?|array|gathered|split)\}",
        "",
        text,
    )
    text = text.replace("&", "")
    text = _WORD_SEPARATORS.sub(",", text)
    return split_top_level(text, ",;\\")


def _as_zero_form(text: str):
    """'y = 2x+1' -> y - 2x - 1; None for a part without '='."""
    sides = re.split(r"(?<![<>!\\])=(?!=)", text)
    if len(sides) != 2:
        return None
    left, right = parse_latex(sides[0]), parse_latex(sides[1])
    if not isinstance(left, sympy.Expr) or not isinstance(right, sympy.Expr):
        raise Unparseable("equation sides are not expressions")
    return sympy.expand(left - right) if len(text) < 200 else left - right


def _same_equation(predicted, reference) -> bool | None:
    if {str(s) for s in predicted.free_symbols} != {str(s) for s in reference.free_symbols}:
        return False
    symbols = sorted(reference.free_symbols | predicted.free_symbols, key=str)
    ratio = None
    agreed = 0
    for point in _random_points(symbols, 8, seed=1234):
        a, b = _evaluate(predicted, point), _evaluate(reference, point)
        if a is None or b is None:
            continue
        if abs(b) < 1e-12:
            if abs(a) > 1e-9:
                return False
            continue
        current = a / b
        if ratio is None:
            ratio = current
            if abs(ratio) < 1e-12:
                return False
        elif abs(current - ratio) > 1e-7 * max(1.0, abs(ratio)):
            return False
        agreed += 1
    return True if agreed >= 3 else None


def compare_equations(predicted: str, reference: str) -> Comparison:
    reference_parts = _equation_parts(reference)
    predicted_parts = _equation_parts(predicted)
    try:
        reference_forms = [_as_zero_form(part) for part in reference_parts]
    except Unparseable as error:
        return _unsure(f"cannot read the reference equation ({error})")
    if any(form is None for form in reference_forms):
        return compare_expressions(predicted, reference)
    if all("=" not in part for part in predicted_parts) and len(reference_parts) == 1:
        lhs = reference_parts[0].split("=")[0].strip()
        if re.fullmatch(r"[a-zA-Z](?:\([a-zA-Z]\))?", lhs):
            result = compare_expressions(predicted, reference_parts[0].split("=", 1)[1])
            return Comparison(
                result.status, f"answer gives only the right-hand side of {lhs} = ...: {result.explanation}"
            )
        return _wrong("the answer is not an equation")
    try:
        predicted_forms = [_as_zero_form(part) for part in predicted_parts]
    except Unparseable as error:
        return _unsure(f"cannot read the answer equation ({error})")
    if any(form is None for form in predicted_forms):
        return _wrong("part of the answer is not an equation")
    if len(predicted_forms) != len(reference_forms):
        return _wrong(f"{len(predicted_forms)} equation(s) given, {len(reference_forms)} expected")
    unmatched = list(range(len(predicted_forms)))
    undecided = False
    for reference_form in reference_forms:
        for index in unmatched:
            same = _same_equation(predicted_forms[index], reference_form)
            if same:
                unmatched.remove(index)
                break
            if same is None:
                undecided = True
        else:
            if undecided:
                return _unsure("could not evaluate the equations numerically")
            return _wrong(f"no answer equation is equivalent to {sympy.sstr(reference_form)} = 0")
    return _ok("every equation is equivalent to a reference equation up to rearrangement and scaling")


# ---------------------------------------------------------------- intervals

_IN_PREFIX = re.compile(r"^\s*[a-zA-Z]\s*(?:\\in|∈)\s*")


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


def _as_set(text: str):
    text = _IN_PREFIX.sub("", clean_latex(text))
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
    if _close(first, second, EXACT_RELATIVE_TOLERANCE):
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
        return _wrong("the answer closes an interval at infinity")
    try:
        reference_set = _as_set(reference)
    except (Unparseable, NotImplementedError, TypeError) as error:
        return _unsure(f"cannot read the reference interval ({error})")
    try:
        predicted_set = _as_set(predicted)
    except (Unparseable, NotImplementedError, TypeError) as error:
        return _unsure(f"cannot read the answer as an interval ({error})")
    if _same_set(predicted_set, reference_set):
        return _ok(f"both describe {reference_set}")
    return _wrong(f"answer {predicted_set} differs from reference {reference_set} (endpoints or open/closed ends)")


# ---------------------------------------------------------------- sets, tuples, several values


def compare_elements(predicted: str, reference: str) -> Comparison:
    """One element of a set, tuple, list or matrix: number, then expression, then words."""
    predicted_text, reference_text = clean_latex(predicted), clean_latex(reference)
    if predicted_text.replace(" ", "") == reference_text.replace(" ", ""):
        return _ok("identical")
    nested_reference, nested_predicted = _delimited(reference_text), _delimited(predicted_text)
    if nested_reference and nested_reference[0] in ("tuple", "vector", "set") and "," in nested_reference[1]:
        if not nested_predicted:
            return _wrong("a nested group was expected")
        return compare_collections(predicted_text, reference_text, ordered=nested_reference[0] != "set")
    try:
        reference_value = parse_latex(reference_text)
        predicted_value = parse_latex(predicted_text)
    except Unparseable:
        same = normalize_words(predicted_text) == normalize_words(reference_text)
        return _ok("same words") if same else _wrong("different text")
    if is_plain_number(reference_value):
        return compare_numbers(predicted_text, reference_text, imaginary_unit=True)
    if isinstance(reference_value, sympy.Expr):
        return compare_expressions(predicted_text, reference_text)
    if reference_value == predicted_value:
        return _ok("identical after parsing")
    return _unsure("elements of a kind I cannot compare")


def _match_unordered(predicted: list[str], reference: list[str]) -> Comparison:
    if len(predicted) != len(reference):
        return _wrong(f"{len(predicted)} value(s) given, {len(reference)} expected: {predicted} vs {reference}")
    remaining = list(range(len(predicted)))
    undecided = False
    for reference_item in reference:
        for index in remaining:
            result = compare_elements(predicted[index], reference_item)
            if result.status == CORRECT:
                remaining.remove(index)
                break
            if result.status == INCONCLUSIVE:
                undecided = True
        else:
            if undecided:
                return _unsure(f"could not decide whether {reference_item!r} is among the answers")
            return _wrong(f"{reference_item!r} is missing from the answer")
    return _ok(f"the same {len(reference)} value(s) in any order")


def _match_ordered(predicted: list[str], reference: list[str]) -> Comparison:
    if len(predicted) != len(reference):
        return _wrong(f"{len(predicted)} component(s) given, {len(reference)} expected")
    for position, (a, b) in enumerate(zip(predicted, reference), start=1):
        result = compare_elements(a, b)
        if result.status != CORRECT:
            return Comparison(result.status, f"component {position}: {a!r} vs {b!r}: {result.explanation}")
    return _ok(f"all {len(reference)} components match in order")


def _expand_plus_minus(items: list[str]) -> list[str]:
    """'1 \\pm \\sqrt{5}' as an element of a set stands for two elements."""
    expanded = []
    for item in items:
        if ("\\pm" in item or "\\mp" in item) and _delimited(item) is None:
            expanded.append(item.replace("\\pm", "+").replace("\\mp", "-"))
            expanded.append(item.replace("\\pm", "-").replace("\\mp", "+"))
        else:
            expanded.append(item)
    return expanded


def _without_duplicates(items: list[str]) -> list[str]:
    seen, kept = set(), []
    for item in items:
        key = re.sub(r"\s+", "", item)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def compare_collections(predicted: str, reference: str, *, ordered: bool | None = None) -> Comparison:
    predicted_text, reference_text = (
        _IN_PREFIX.sub("", clean_latex(predicted)),
        _IN_PREFIX.sub("", clean_latex(reference)),
    )
    reference_shape, predicted_shape = _delimited(reference_text), _delimited(predicted_text)
    if ordered is None:
        set_like = (reference_shape is None or reference_shape[0] in ("set", "group")) or (
            predicted_shape is not None and predicted_shape[0] == "set"
        )
        ordered = not set_like
    reference_items = split_top_level(
        reference_shape[1] if reference_shape else _WORD_SEPARATORS.sub(",", reference_text)
    )
    predicted_items = split_top_level(
        predicted_shape[1] if predicted_shape else _WORD_SEPARATORS.sub(",", predicted_text)
    )
    if ordered:
        return _match_ordered(predicted_items, reference_items)
    reference_items, predicted_items = _expand_plus_minus(reference_items), _expand_plus_minus(predicted_items)
    if len(_without_duplicates(reference_items)) == len(reference_items):
        # A set: the same element written twice in the answer counts once.
        predicted_items = _without_duplicates(predicted_items)
    return _match_unordered(predicted_items, reference_items)


def compare_multiple_values(predicted: str, reference: str) -> Comparison:
    return _match_unordered(split_values(predicted), split_values(reference))


# ---------------------------------------------------------------- matrices


def _matrix_entries(text: str) -> tuple[tuple[int, int], list[str]] | None:
    text = clean_latex(text)
    text = strip_assignment(text)
    match = re.search(r"\\begin\{([pbvBV]?matrix|array)\}(?:\{[^}]*\})?(.*)\\end\{\1\}", text, re.DOTALL)
    if match:
        # Anything but brackets around the environment ("..., or possibly (3, 4)") is not one matrix.
        if re.search(r"[^\s()\[\]|]", text[: match.start()] + text[match.end() :]):
            return None
        rows = [row for row in re.split(r"\\\\", match.group(2)) if row.strip()]
        cells = [[cell.strip() for cell in row.split("&")] for row in rows]
        width = len(cells[0])
        if any(len(row) != width for row in cells):
            return None
        flat = [cell for row in cells for cell in row]
        return (len(cells), width), flat
    shape = _delimited(text)
    if shape and shape[0] in ("tuple", "list", "vector"):
        inner_rows = split_top_level(shape[1])
        nested = [_delimited(row) for row in inner_rows]
        if all(n and n[0] in ("tuple", "list") for n in nested) and len(nested) > 1:
            cells = [split_top_level(n[1]) for n in nested]
            if len({len(row) for row in cells}) == 1:
                return (len(cells), len(cells[0])), [cell for row in cells for cell in row]
        return (len(inner_rows), 1), inner_rows
    return None


def _evaluated_matrix(text: str) -> tuple[tuple[int, int], list[str]] | None:
    """A matrix expression ('A + B', a product of matrices) evaluated to its entries."""
    try:
        value = parse_latex(strip_assignment(clean_latex(text)))
    except Unparseable:
        return None
    if getattr(value, "is_Matrix", False):
        value = sympy.Matrix(value.doit())
        return value.shape, [sympy.latex(sympy.nsimplify(entry)) for entry in value]
    return None


def compare_matrices(predicted: str, reference: str) -> Comparison:
    reference_entries = _matrix_entries(reference)
    predicted_entries = _matrix_entries(predicted) or _evaluated_matrix(predicted)
    if reference_entries is None:
        return _unsure("cannot read the reference as a matrix or vector")
    if predicted_entries is None:
        return _unsure("cannot read the answer as a matrix or vector")
    (reference_shape, reference_cells), (predicted_shape, predicted_cells) = reference_entries, predicted_entries
    vector = 1 in reference_shape and 1 in predicted_shape
    if reference_shape != predicted_shape and not (vector and len(reference_cells) == len(predicted_cells)):
        return _wrong(
            f"shape {predicted_shape[0]}x{predicted_shape[1]} instead of {reference_shape[0]}x{reference_shape[1]}"
        )
    result = _match_ordered(predicted_cells, reference_cells)
    if result.status == CORRECT:
        return _ok(f"all {len(reference_cells)} entries match")
    return result


# ---------------------------------------------------------------- non-decimal bases

_BASE_NUMBER = re.compile(r"^\(?\s*(?:\\text\{)?\s*([0-9A-Za-z]+)\s*\}?\s*\)?\s*_\s*\{?\s*\(?\s*(\d+)\s*\)?\s*\}?$")


def _based(text: str) -> tuple[str, int | None]:
    text = clean_latex(strip_assignment(clean_latex(text))).replace(" ", "")
    text = re.sub(r"\\text\{([^{}]*)\}", r"\1", text)
    match = _BASE_NUMBER.match(text)
    if match:
        return match.group(1).upper(), int(match.group(2))
    return text.upper(), None


def compare_bases(predicted: str, reference: str) -> Comparison:
    reference_digits, reference_base = _based(reference)
    predicted_digits, predicted_base = _based(predicted)
    if reference_base is None:
        if predicted_base is None:
            return _ok("same digits") if predicted_digits == reference_digits else _wrong("different digits")
        return compare_numbers(str(_value_in_base(predicted_digits, predicted_base)), reference)
    if predicted_base is not None and predicted_base != reference_base:
        return _wrong(f"answer is written in base {predicted_base}, reference in base {reference_base}")
    if predicted_digits.lstrip("0") == reference_digits.lstrip("0"):
        return _ok(f"same digits {reference_digits} in base {reference_base}")
    if _value_in_base(predicted_digits, reference_base) is None:
        return _wrong(f"{predicted_digits!r} is not a valid base-{reference_base} numeral")
    return _wrong(f"{predicted_digits}_{reference_base} differs from {reference_digits}_{reference_base}")


def _value_in_base(digits: str, base: int | None) -> int | None:
    try:
        return int(digits, base or 10)
    except (ValueError, TypeError):
        return None


# ---------------------------------------------------------------- angles

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


def compare_angles(predicted: str, reference: str) -> Comparison:
    reference_text, reference_unit = _angle(reference)
    predicted_text, predicted_unit = _angle(predicted)
    reference_unit = reference_unit or "degrees"
    predicted_unit = predicted_unit or reference_unit
    if predicted_unit == reference_unit:
        result = compare_numbers(predicted_text, reference_text)
        return Comparison(result.status, f"both in {reference_unit}: {result.explanation}")
    try:
        predicted_value = parse_latex(predicted_text)
        reference_value = parse_latex(reference_text)
    except Unparseable as error:
        return _unsure(f"cannot read the angle ({error})")
    factor = 180 / sympy.pi if predicted_unit == "radians" else sympy.pi / 180
    converted = sympy.nsimplify(predicted_value * factor) if is_plain_number(predicted_value) else None
    if converted is None:
        return _unsure("the answer angle is not a number")
    a, b = numeric_value(converted), numeric_value(reference_value)
    if a is not None and b is not None and _close(a, b, EXACT_RELATIVE_TOLERANCE):
        return _ok(f"{predicted_text} {predicted_unit} equals {reference_text} {reference_unit}")
    if a is not None and b is not None and decimal_places(predicted_text) is not None:
        tolerance = 0.5 * 10 ** (-decimal_places(predicted_text)) * float(factor)
        if abs(a.real - b.real) <= tolerance * (1 + 1e-9):
            return _ok(f"{predicted_text} {predicted_unit} is {reference_text} {reference_unit} rounded")
    return _wrong(f"{predicted_text} {predicted_unit} differs from {reference_text} {reference_unit}")
