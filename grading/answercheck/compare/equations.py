"""Equations and systems of equations, equal up to rearrangement and scaling."""

from __future__ import annotations

import re

import sympy

from grading.answercheck.compare.expressions import compare_expressions, evaluate_at, random_points
from grading.answercheck.compare.outcomes import ok, unsure, wrong
from grading.answercheck.compare.splitting import WORD_SEPARATORS, delimited, split_top_level
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


_TUPLE_ASSIGNMENT = re.compile(r"^\s*\(([^()=]*)\)\s*=\s*\((.*)\)\s*$")
_UNKNOWN_VALUE = re.compile(r"^\s*([a-zA-Z](?:_\{?\w+\}?)?)\s*=\s*(?!=)")
_FUNCTION_OF_ONE_VARIABLE = re.compile(r"^\s*([a-zA-Z])\s*\(\s*[a-zA-Z]\s*\)\s*(?==)")


def _unpacked_tuple(text: str) -> str:
    """'(x, y) = (19, 11)' -> 'x = 19, y = 11': a tuple of unknowns set equal to a tuple of values."""
    match = _TUPLE_ASSIGNMENT.match(clean_latex(text))
    if match is None:
        return text
    names, values = split_top_level(match.group(1), ","), split_top_level(match.group(2), ",")
    if len(names) < 2 or len(names) != len(values) or not all(_UNKNOWN_VALUE.match(f"{name} =") for name in names):
        return text
    return ", ".join(f"{name} = {value}" for name, value in zip(names, values))


def _tuple_in_label_order(predicted_parts: list[str], reference_parts: list[str]) -> list[str] | None:
    """'(4, 3)' against 'x = 4, y = 3': a bare tuple gives the unknowns' values in alphabetical
    order, the order the reference uses ('x, y', 'a, b, c')."""
    if len(predicted_parts) != 1 or "=" in predicted_parts[0] or len(reference_parts) < 2:
        return None
    shape = delimited(predicted_parts[0])
    if shape is None or shape[0] != "tuple":
        return None
    values = split_top_level(shape[1], ",")
    labels = [_UNKNOWN_VALUE.match(part) for part in reference_parts]
    if len(values) != len(reference_parts) or any(label is None for label in labels):
        return None
    names = [label.group(1) for label in labels if label is not None]
    if names != sorted(names) or len(set(names)) != len(names):
        return None
    return [f"{name} = {value}" for name, value in zip(names, values)]


def _same_function_names(predicted_parts: list[str], reference_parts: list[str]) -> list[str]:
    """'y(x) = 2 + x^3' against 'y = x^3 + 2': the function's name and its value at x are one unknown."""
    bare_names = {match.group(1) for match in map(_UNKNOWN_VALUE.match, reference_parts) if match}
    rewritten = []
    for part in predicted_parts:
        match = _FUNCTION_OF_ONE_VARIABLE.match(part)
        if match and match.group(1) in bare_names:
            part = match.group(1) + " " + part[match.end() :]
        rewritten.append(part)
    return rewritten


_ARBITRARY_CONSTANT = re.compile(r"^(?:[A-DK]|[Cc]_?\{?\d\}?)$")


def _renamed_constant(predicted_forms: list, reference_forms: list) -> list:
    """'y = Ae^{2x}' against 'y = Ce^{2x}': one arbitrary constant under another name, renamed to the
    reference's when it is the only symbol the two sides do not share."""
    predicted_symbols = set().union(*(form.free_symbols for form in predicted_forms))
    reference_symbols = set().union(*(form.free_symbols for form in reference_forms))
    own = {symbol for symbol in predicted_symbols if str(symbol) not in {str(other) for other in reference_symbols}}
    missing = {symbol for symbol in reference_symbols if str(symbol) not in {str(other) for other in predicted_symbols}}
    if len(own) != 1 or len(missing) != 1:
        return predicted_forms
    (predicted_constant,), (reference_constant,) = own, missing
    if not (_ARBITRARY_CONSTANT.match(str(predicted_constant)) and _ARBITRARY_CONSTANT.match(str(reference_constant))):
        return predicted_forms
    return [form.subs(predicted_constant, reference_constant) for form in predicted_forms]


_PLUS_MINUS = re.compile(r"\\pm(?![a-zA-Z])|±")


def _both_signs(parts: list[str]) -> list[str]:
    """'y = \\pm\\frac{3}{2}x' -> 'y = +\\frac{3}{2}x', 'y = -\\frac{3}{2}x': one equation for each sign."""
    expanded = []
    for part in parts:
        if len(_PLUS_MINUS.findall(part)) == 1:
            expanded.extend(_PLUS_MINUS.sub(sign, part) for sign in ("+", "-"))
        else:
            expanded.append(part)
    return expanded


def compare_equations(predicted: str, reference: str) -> Comparison:
    reference_parts = _both_signs(_equation_parts(reference))
    predicted_parts = _both_signs(_equation_parts(_unpacked_tuple(predicted)))
    predicted_parts = _tuple_in_label_order(predicted_parts, reference_parts) or predicted_parts
    predicted_parts = _same_function_names(predicted_parts, reference_parts)
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
    predicted_forms = _renamed_constant(predicted_forms, reference_forms)
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
