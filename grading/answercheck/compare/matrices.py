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
    vector = 1 in reference_shape and 1 in predicted_shape
    if reference_shape != predicted_shape and not (vector and len(reference_cells) == len(predicted_cells)):
        return wrong(
            f"shape {predicted_shape[0]}x{predicted_shape[1]} instead of {reference_shape[0]}x{reference_shape[1]}"
        )
    result = match_ordered(predicted_cells, reference_cells)
    if result.status == CORRECT:
        return ok(f"all {len(reference_cells)} entries match")
    return result
