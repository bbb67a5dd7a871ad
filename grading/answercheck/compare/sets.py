"""Several values: sets (any order), tuples, lists and vectors (in order), element by element."""

from __future__ import annotations

import re

import sympy

from grading.answercheck.compare.expressions import compare_expressions
from grading.answercheck.compare.numeric import compare_numbers
from grading.answercheck.compare.outcomes import ok, unsure, wrong
from grading.answercheck.compare.splitting import IN_PREFIX, WORD_SEPARATORS, delimited, split_top_level, split_values
from grading.answercheck.normalize import clean_latex, normalize_words
from grading.answercheck.parsing import Unparseable, is_plain_number, parse_latex
from grading.answercheck.verdict import CORRECT, INCONCLUSIVE, Comparison


def compare_elements(predicted: str, reference: str) -> Comparison:
    """One element of a set, tuple, list or matrix: number, then expression, then words."""
    predicted_text, reference_text = (
        re.sub(r"^\\\{\s*\\\}$", r"\\emptyset", clean_latex(side)) for side in (predicted, reference)
    )
    if predicted_text.replace(" ", "") == reference_text.replace(" ", ""):
        return ok("identical")
    nested_reference, nested_predicted = delimited(reference_text), delimited(predicted_text)
    for empty, other in ((predicted_text, nested_reference), (reference_text, nested_predicted)):
        if empty == "\\emptyset" and other is not None and other[0] == "set" and other[1].strip():
            return wrong("the empty set against a set with elements")
    if nested_reference and (
        (nested_reference[0] in ("tuple", "vector") and "," in nested_reference[1]) or nested_reference[0] == "set"
    ):
        if not nested_predicted:
            return wrong("a nested group was expected")
        return compare_collections(predicted_text, reference_text, ordered=nested_reference[0] != "set")
    try:
        reference_value = parse_latex(reference_text)
        predicted_value = parse_latex(predicted_text)
    except Unparseable:
        same = normalize_words(predicted_text) == normalize_words(reference_text)
        return ok("same words") if same else wrong("different text")
    if is_plain_number(reference_value):
        return compare_numbers(predicted_text, reference_text, imaginary_unit=True)
    if isinstance(reference_value, sympy.Expr):
        return compare_expressions(predicted_text, reference_text)
    if reference_value == predicted_value:
        return ok("identical after parsing")
    return unsure("elements of a kind I cannot compare")


def _match_unordered(predicted: list[str], reference: list[str]) -> Comparison:
    if len(predicted) != len(reference):
        return wrong(f"{len(predicted)} value(s) given, {len(reference)} expected: {predicted} vs {reference}")
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
                return unsure(f"could not decide whether {reference_item!r} is among the answers")
            return wrong(f"{reference_item!r} is missing from the answer")
    return ok(f"the same {len(reference)} value(s) in any order")


def match_ordered(predicted: list[str], reference: list[str]) -> Comparison:
    if len(predicted) != len(reference):
        return wrong(f"{len(predicted)} component(s) given, {len(reference)} expected")
    for position, (a, b) in enumerate(zip(predicted, reference), start=1):
        result = compare_elements(a, b)
        if result.status != CORRECT:
            return Comparison(result.status, f"component {position}: {a!r} vs {b!r}: {result.explanation}")
    return ok(f"all {len(reference)} components match in order")


def _expand_plus_minus(items: list[str]) -> list[str]:
    """'1 \\pm \\sqrt{5}' as an element of a set stands for two elements."""
    expanded = []
    for item in items:
        if ("\\pm" in item or "\\mp" in item) and delimited(item) is None:
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
        IN_PREFIX.sub("", clean_latex(predicted)),
        IN_PREFIX.sub("", clean_latex(reference)),
    )
    reference_shape, predicted_shape = delimited(reference_text), delimited(predicted_text)
    if ordered is None:
        set_like = (reference_shape is None or reference_shape[0] in ("set", "group")) or (
            predicted_shape is not None and predicted_shape[0] == "set"
        )
        ordered = not set_like
    reference_items = split_top_level(
        reference_shape[1] if reference_shape else WORD_SEPARATORS.sub(",", reference_text)
    )
    predicted_items = split_top_level(
        predicted_shape[1] if predicted_shape else WORD_SEPARATORS.sub(",", predicted_text)
    )
    if ordered:
        return match_ordered(predicted_items, reference_items)
    reference_items, predicted_items = _expand_plus_minus(reference_items), _expand_plus_minus(predicted_items)
    if len(_without_duplicates(reference_items)) == len(reference_items):
        # A set: the same element written twice in the answer counts once.
        predicted_items = _without_duplicates(predicted_items)
    return _match_unordered(predicted_items, reference_items)


def compare_multiple_values(predicted: str, reference: str) -> Comparison:
    return _match_unordered(split_values(predicted), split_values(reference))
