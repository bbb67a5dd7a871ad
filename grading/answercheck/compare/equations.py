"""Equations and systems of equations, equal up to rearrangement and scaling."""

from __future__ import annotations

import re

import sympy

from grading.answercheck.compare.expressions import compare_expressions, evaluate_at, random_points
from grading.answercheck.compare.outcomes import ok, unsure, wrong
from grading.answercheck.compare.splitting import WORD_SEPARATORS, split_top_level
from grading.answercheck.normalize import clean_latex
from grading.answercheck.parsing import Unparseable, parse_latex
from grading.answercheck.verdict import Comparison


def _equation_parts(text: str) -> list[str]:
    text = clean_latex(text)
    text = re.sub(
        r"\\begin\{(?:cases|aligned|align\*?|array|gathered|split)\}(?:\{[^}]*\})?|\\end\{(?:cases|aligned|align\*?|array|gathered|split)\}",
        "",
        text,
    )
    text = text.replace("&", "")
    text = WORD_SEPARATORS.sub(",", text)
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
    for point in random_points(symbols, 8, seed=1234):
        a, b = evaluate_at(predicted, point), evaluate_at(reference, point)
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
        return unsure(f"cannot read the reference equation ({error})")
    if any(form is None for form in reference_forms):
        return compare_expressions(predicted, reference)
    if all("=" not in part for part in predicted_parts) and len(reference_parts) == 1:
        lhs = reference_parts[0].split("=")[0].strip()
        if re.fullmatch(r"[a-zA-Z](?:\([a-zA-Z]\))?", lhs):
            result = compare_expressions(predicted, reference_parts[0].split("=", 1)[1])
            return Comparison(
                result.status, f"answer gives only the right-hand side of {lhs} = ...: {result.explanation}"
            )
        return wrong("the answer is not an equation")
    try:
        predicted_forms = [_as_zero_form(part) for part in predicted_parts]
    except Unparseable as error:
        return unsure(f"cannot read the answer equation ({error})")
    if any(form is None for form in predicted_forms):
        return wrong("part of the answer is not an equation")
    if len(predicted_forms) != len(reference_forms):
        return wrong(f"{len(predicted_forms)} equation(s) given, {len(reference_forms)} expected")
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
                return unsure("could not evaluate the equations numerically")
            return wrong(f"no answer equation is equivalent to {sympy.sstr(reference_form)} = 0")
    return ok("every equation is equivalent to a reference equation up to rearrangement and scaling")
