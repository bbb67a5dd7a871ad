"""Matrices and vectors, written as environments, nested tuples or matrix expressions, entry by entry."""

from __future__ import annotations

import re

import sympy

from grading.answercheck.compare.outcomes import ok, unsure, wrong
from grading.answercheck.compare.sets import match_ordered
from grading.answercheck.compare.splitting import delimited, split_top_level
from grading.answercheck.normalize import clean_latex, strip_assignment
from grading.answercheck.parsing import Unparseable, parse_latex
from grading.answercheck.verdict import CORRECT, Comparison

_TRANSPOSED = re.compile(r"\^\s*(?:\{\s*(?:T|\\top|\\intercal|t)\s*\}|T|\\top|\\intercal)\s*$")
# "\\frac15(3, 0, 4)", "2(1, -1)", "\\frac{1}{\\sqrt{2}}(1, 1)": a scalar in front of a tuple.
_SCALAR_TIMES_TUPLE = re.compile(
    r"^(-?(?:\\frac\s*(?:\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}|\d)\s*(?:\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}|\d)|\d+(?:\.\d+)?|\\sqrt\s*\{[^{}]*\}))"
    r"\s*(?:\\cdot\s*)?(\(.*\))$"
)
_UNIT_VECTOR = re.compile(r"\\(?:mathbf|hat|vec|boldsymbol|bm)\s*\{\s*([ijk])\s*\}|\\(?:hat|vec)\s+([ijk])(?![a-zA-Z])")


def _scaled_tuple(text: str) -> str:
    """'\\frac15(3, 0, 4)' -> '(\\frac15 \\cdot (3), ...)': the scalar carried into each entry."""
    match = _SCALAR_TIMES_TUPLE.match(text)
    if match is None:
        return text
    shape = delimited(match.group(2))
    if shape is None or shape[0] != "tuple":
        return text
    entries = split_top_level(shape[1])
    if len(entries) < 2:
        return text
    return "(" + ", ".join(f"{match.group(1)} \\cdot ({entry})" for entry in entries) + ")"


def _unit_vector_entries(text: str) -> list[str] | None:
    """'-2\\mathbf{i} - 3\\mathbf{j} + \\mathbf{k}' -> ['-2', '-3', '1']: components along i, j, k."""
    if not _UNIT_VECTOR.search(text) or re.search(r"\\(?:xi|eta|zeta)(?![a-zA-Z])", text):
        return None
    names = {"i": "\\xi", "j": "\\eta", "k": "\\zeta"}
    substituted = _UNIT_VECTOR.sub(lambda match: " " + names[match.group(1) or match.group(2)] + " ", text)
    try:
        value = parse_latex(substituted)
    except Unparseable:
        return None
    if not isinstance(value, sympy.Expr):
        return None
    value = sympy.expand(value)
    by_name = {str(symbol): symbol for symbol in value.free_symbols}
    units = [by_name.get(name, sympy.Symbol(name)) for name in ("xi", "eta", "zeta")]
    if "zeta" not in by_name:
        units = units[:2]
    coefficients = [value.coeff(unit) for unit in units]
    remainder = sympy.expand(value - sum(coefficient * unit for coefficient, unit in zip(coefficients, units)))
    if remainder != 0 or any(coefficient.free_symbols & set(units) for coefficient in coefficients):
        return None
    return [sympy.latex(coefficient) for coefficient in coefficients]


def _matrix_entries(text: str) -> tuple[tuple[int, int], list[str]] | None:
    text = clean_latex(text)
    text = strip_assignment(text)
    text = _TRANSPOSED.sub("", text).strip()
    text = _scaled_tuple(text)
    components = _unit_vector_entries(text)
    if components is not None:
        return (len(components), 1), components
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
    shape = delimited(text)
    if shape and shape[0] in ("tuple", "list", "vector"):
        inner_rows = split_top_level(shape[1])
        nested = [delimited(row) for row in inner_rows]
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
        return unsure("cannot read the reference as a matrix or vector")
    if predicted_entries is None:
        return unsure("cannot read the answer as a matrix or vector")
    (reference_shape, reference_cells), (predicted_shape, predicted_cells) = reference_entries, predicted_entries
    if len(predicted_cells) == 2 and len(reference_cells) == 3 and _UNIT_VECTOR.search(clean_latex(predicted)):
        # No k term: the third component is zero.
        predicted_shape, predicted_cells = (3, 1), [*predicted_cells, "0"]
    vector = 1 in reference_shape and 1 in predicted_shape
    if reference_shape != predicted_shape and not (vector and len(reference_cells) == len(predicted_cells)):
        return wrong(
            f"shape {predicted_shape[0]}x{predicted_shape[1]} instead of {reference_shape[0]}x{reference_shape[1]}"
        )
    result = match_ordered(predicted_cells, reference_cells)
    if result.status == CORRECT:
        return ok(f"all {len(reference_cells)} entries match")
    return result
