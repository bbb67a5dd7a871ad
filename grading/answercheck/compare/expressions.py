"""Algebraic expressions: exact polynomial expansion, random-point evaluation, simplification, up to a constant."""

from __future__ import annotations

import random
import re

import sympy

from grading.answercheck.compare.numeric import compare_numbers
from grading.answercheck.compare.outcomes import ok, unsure, wrong
from grading.answercheck.normalize import clean_latex, strip_assignment
from grading.answercheck.parsing import Unparseable, is_plain_number, numeric_value, parse_latex
from grading.answercheck.verdict import Comparison

_INTEGRATION_CONSTANT = re.compile(r"\s*\+\s*(?:\\text\{\s*)?\b[CcK]\b(?:\s*\})?\s*$")
# The same constant written first: "C + e^{x^2}".
_LEADING_CONSTANT = re.compile(r"^\s*(?:\\text\{\s*)?\b[CcK]\b(?:\s*\})?\s*\+\s*")


def _without_constant(text: str) -> str:
    return _LEADING_CONSTANT.sub("", _INTEGRATION_CONSTANT.sub("", text))


def random_points(symbols, count: int, seed: int):
    generator = random.Random(seed)
    for _ in range(count):
        yield {symbol: sympy.Float(generator.uniform(0.3, 2.7), 30) for symbol in symbols}


def evaluate_at(expression, point) -> complex | None:
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
    for point in random_points(symbols, points, seed=len(symbols) * 7919 + 17):
        a, b = evaluate_at(predicted, point), evaluate_at(reference, point)
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
    up_to_constant = bool(_INTEGRATION_CONSTANT.search(reference_text) or _LEADING_CONSTANT.search(reference_text))
    if up_to_constant:
        reference_text = _without_constant(reference_text)
        predicted_text = _without_constant(predicted_text)
    try:
        reference_value = parse_latex(reference_text)
    except Unparseable as error:
        return unsure(f"cannot read the reference expression ({error})")
    try:
        predicted_value = parse_latex(predicted_text)
    except Unparseable as error:
        return unsure(f"cannot read the answer expression ({error})")
    if not isinstance(reference_value, sympy.Expr) or not isinstance(predicted_value, sympy.Expr):
        if isinstance(reference_value, sympy.Basic) and reference_value == predicted_value:
            return ok("identical after parsing")
        return unsure("one side is not an algebraic expression")
    if is_plain_number(reference_value) and is_plain_number(predicted_value):
        return compare_numbers(predicted_text, reference_text)
    extra = {str(s) for s in predicted_value.free_symbols} - {str(s) for s in reference_value.free_symbols}
    missing = {str(s) for s in reference_value.free_symbols} - {str(s) for s in predicted_value.free_symbols}
    if not up_to_constant and not extra and not missing:
        exact = _polynomials_equal(predicted_value, reference_value)
        if exact is True:
            return ok(f"{predicted_text!r} and {reference_text!r} expand to the same polynomial")
        if exact is False:
            return wrong(f"{predicted_text!r} and {reference_text!r} expand to different polynomials")
    agreement = expressions_agree(predicted_value, reference_value, up_to_constant=up_to_constant)
    if agreement is None and not up_to_constant and _symbolically_equal(predicted_value, reference_value):
        return ok(f"{predicted_text!r} simplifies to {reference_text!r}")
    if agreement is True and not extra and not missing:
        how = "up to an additive constant" if up_to_constant else "at 8 random points"
        return ok(f"{predicted_text!r} and {reference_text!r} agree numerically {how}")
    if agreement is False:
        return wrong(f"{predicted_text!r} and {reference_text!r} take different values at a random point")
    if extra or missing:
        return wrong(
            f"variables differ: answer has {sorted(extra) or 'none extra'}, misses {sorted(missing) or 'none'}"
        )
    return unsure("could not evaluate either expression numerically")


def _reducible_factors(text: str) -> int | None:
    """How many of the written factors of a product factor further over the rationals, or None when
    the text is not a polynomial product ('(x^2 - 4)(x^2 + 4)' -> 1, '(x - 2)(x + 2)' -> 0)."""
    try:
        value = parse_latex(strip_assignment(clean_latex(text)))
    except Unparseable:
        return None
    if not isinstance(value, sympy.Expr) or not value.free_symbols or len(value.free_symbols) > 3:
        return None
    reducible = 0
    for factor in sympy.Mul.make_args(value):
        base = factor.base if isinstance(factor, sympy.Pow) and factor.exp.is_Integer else factor
        if not base.free_symbols:
            continue
        if not base.is_polynomial(*value.free_symbols):
            return None
        _, parts = sympy.factor_list(base)
        if sum(multiplicity for _, multiplicity in parts) > 1:
            reducible += 1
    return reducible


def factored_less_than(predicted: str, reference: str) -> bool:
    """The answer leaves a factor the reference splits ('(x^2 - 4)(x^2 + 4)' against
    '(x - 2)(x + 2)(x^2 + 4)'): not factored as completely as asked."""
    predicted_reducible, reference_reducible = _reducible_factors(predicted), _reducible_factors(reference)
    return predicted_reducible is not None and reference_reducible == 0 and predicted_reducible > 0
