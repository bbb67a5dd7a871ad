"""compare_answers: the checks every answer type shares, then the comparison of the answer's type.

Identical text, option letters resolved to their values, unit conflicts and labelled values come first;
`_compare_by_type` then hands the pair to the family of its type code (the `compare` package, `choices`,
`strings`).
"""

from __future__ import annotations

import math
import re

from grading.answercheck import choices, compare, strings, units
from grading.answercheck.detect import detect_answer_type
from grading.answercheck.extract import concluding_clause
from grading.answercheck.normalize import (
    answer_value,
    clean_latex,
    lettered_parts,
    named_value,
    plain_text,
    split_labelled,
    strip_labels,
    word_labelled,
)
from grading.answercheck.number_words import number_from_words
from grading.answercheck.prose import has_prose
from grading.answercheck.question_wording import (
    ASKS_FOR_LOWEST_TERMS,
    ASKS_FOR_PERCENT,
    ASKS_TO_FACTOR_COMPLETELY,
    asked_part_name,
    exactness_mismatch,
    finer_than_asked,
    places_asked,
    rounding_allowed,
)
from grading.answercheck.verdict import CORRECT, INCONCLUSIVE, INCORRECT, Comparison

_PLAIN_FRACTION = re.compile(r"^-?\s*(?:\\frac\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}|(\d+)\s*/\s*(\d+))$")


def _unreduced_fraction(predicted: str) -> bool:
    match = _PLAIN_FRACTION.match(clean_latex(predicted).replace(" ", ""))
    if not match:
        return False
    numerator, denominator = (int(group) for group in match.groups() if group is not None)
    return math.gcd(numerator, denominator) > 1


def _same_text(predicted: str, reference: str) -> bool:
    """Identical once presentation is removed ('12:00' and '12:00', 'f(y) = y' and 'f(y)=y',
    '\\text{e}' and 'e'). Text wrappers around digits are kept: '\\text{13}' is not read as 13."""

    def key(text: str) -> str:
        text = clean_latex(text)
        text = re.sub(r"\\(?:text|mathrm|textrm|mathit|textit|operatorname)\s*\{([^{}0-9]*)\}", r"\1", text)
        return re.sub(r"\s+|\\left|\\right|\\,|\\;|\\!", "", text)

    return key(predicted) == key(reference) != ""


def _labelled_in_reference_order(predicted: str, reference: str) -> tuple[str, str] | None:
    """Both sides name the same labels ('a_3 = 2, a_{37} = 19' against 'a_{37} = 19, a_3 = 2'):
    the values in the reference's label order, as two ordered lists."""
    reference_items, predicted_items = split_labelled(clean_latex(reference)), split_labelled(clean_latex(predicted))
    if len(reference_items) < 2 or any(label is None for label, _ in reference_items + predicted_items):
        return None
    reference_labels = [label for label, _ in reference_items]
    predicted_values = dict(predicted_items)
    if len(set(reference_labels)) != len(reference_labels) or sorted(reference_labels) != sorted(predicted_values):
        return None
    if len(predicted_values) != len(predicted_items):
        return None
    ordered = [predicted_values[label] for label in reference_labels]
    return "(" + ", ".join(ordered) + ")", "(" + ", ".join(value for _, value in reference_items) + ")"


def _parts_named_in_words(predicted: str, reference: str) -> tuple[str, str]:
    """Multi-part answers whose parts are named in words ('the mean is $4$ and the median is $3$',
    'quotient 14, remainder 2') rewritten as labelled values ('mean = 4, median = 3'). When only the
    reference names its parts, each is looked up in the answer by its name ('..., so the quotient is
    $14$ and the remainder is $2$')."""

    def labelled(parts: list[tuple[str, str]]) -> str:
        return ", ".join(f"{label} = {value}" for label, value in parts)

    reference_parts = word_labelled(reference)
    predicted_parts = word_labelled(predicted)
    if reference_parts is not None and predicted_parts is None:
        found = [(label, named_value(predicted, label)) for label, _ in reference_parts]
        if all(value is not None for _, value in found):
            predicted_parts = [(label, value) for label, value in found if value is not None]
    return (
        labelled(predicted_parts) if predicted_parts else predicted,
        labelled(reference_parts) if reference_parts else reference,
    )


def _part_the_question_asks_for(predicted: str, reference: str, question: str | None) -> str | None:
    """'centre (3, -2) and radius 4' where the question asks only for the centre: the value of the
    one named part whose name the question uses, when the reference is a single unnamed value."""
    if word_labelled(reference) is not None:
        return None
    reference_items = split_labelled(clean_latex(reference))
    if len(reference_items) != 1 or reference_items[0][0] is not None:
        return None
    asked = asked_part_name(question, predicted)
    if asked is None:
        return None
    return dict(word_labelled(predicted, groups=True) or []).get(asked)


_CONCLUDING_ARROW = re.compile(
    r"\\(?:iff|Leftrightarrow|Longleftrightarrow|implies|Longrightarrow|Rightarrow)(?![a-zA-Z])|[⟺⇔⇒]"
)
_BOUND_VARIABLE_OPERATOR = re.compile(r"\\(?:lim|sum|prod|int|binom|det)(?![a-zA-Z])")
_FREE_LETTER = re.compile(r"(?<![a-zA-Z])[a-df-hj-zA-Z](?![a-zA-Z])")
_TUPLE_OR_MATRIX = re.compile(r"^\s*(?:\\left\s*)?[(\[]|^\s*\\begin\{[pbvB]?matrix\}")


_MATH_PIECES_JOINED = re.compile(r"(?<!\\)\$\s*(?:(,|;)|\band\b)?\s*(?<!\\)\$")


def _joined_math(text: str, answer_type: str) -> str:
    """'x = 2$, $y = 5' and 'x = 1$ and $x = 2' (several pieces of math read as one answer, their outer
    delimiters already gone) -> 'x = 2, y = 5' and 'x = 1, x = 2'."""
    if answer_type[0] not in "AB" or text.count("$") < 2 or text.lstrip().startswith("$"):
        return text
    return _MATH_PIECES_JOINED.sub(lambda match: (match.group(1) or ",") + " ", text)


def _conclusion(text: str) -> str:
    """'x(x-4)<0 \\iff 0<x<4' -> '0<x<4': the last statement of a chain of equivalences or implications."""
    if not _CONCLUDING_ARROW.search(text):
        return text
    parts = compare.split_top_level(_CONCLUDING_ARROW.sub("\x00", text), "\x00")
    last = parts[-1].strip()
    return last if len(parts) > 1 and last else text


def _has_free_letters(text: str) -> bool:
    bare = re.sub(r"\\(?:text|mathrm|operatorname)\s*\{[^{}]*\}|\\[a-zA-Z]+|_\s*\{[^{}]*\}|_\s*\w", " ", text)
    return bool(_FREE_LETTER.search(bare))


def _evaluated_after_formula(text: str) -> str:
    """'N(t) = 1200\\cdot 2^{t/3}, N(12) = 19200' -> 'N(12) = 19200': statements that first give a formula
    in a free variable and end in one closed-form value state that value."""
    items = [item.strip() for item in compare.split_top_level(text.replace("\\,", " "))]
    if len(items) < 2 or not all("=" in item for item in items):
        return text
    values = [answer_value(item) for item in items]
    if all(_has_free_letters(value) for value in values[:-1]) and not _has_free_letters(values[-1]):
        return items[-1]
    return text


def _chain_value(text: str, answer_type: str) -> str:
    """The value a chain of equalities ends in, when it states a computation rather than an equation:
    '5! = 120', '\\gcd(84, 126) = 42', '\\frac{20\\cdot 21}{2} = 210', 'N(12) = 1200\\cdot 2^4 = 19200' give their
    last side for a number; 'u + v = (1, 2) = (1, 2)' and '\\frac{n(n+1)}{2}\\cdot 2 = n^2 + n' likewise for a
    vector and an expression. 'x^2 - 5x + 6 = 0' is an equation and is left whole."""
    parts = compare.split_top_level(text, "=")
    last = parts[-1].strip()
    if len(parts) < 2 or not last or any(not part.strip() for part in parts):
        return text
    # Several statements ("z = 1 + i, z = 1 - i", "x = 2 and y = 3") are not one chain.
    for part in parts[:-1]:
        if re.search(r"\\quad|\b(?:or|and)\b", part) or len(compare.split_top_level(part.replace("\\,", " "))) > 1:
            return text
    earlier = "=".join(parts[:-1])
    if answer_type == "B5":
        stated = bool(_TUPLE_OR_MATRIX.match(last)) and not _TUPLE_OR_MATRIX.match(parts[0])
    elif answer_type == "B1":
        # An identity between expressions; a constant last side makes it an equation.
        stated = _has_free_letters(last)
    else:
        stated = len(parts) >= 3 or not _has_free_letters(earlier) or bool(_BOUND_VARIABLE_OPERATOR.search(earlier))
    return last if stated else text


_NUMBER_TYPES = {"A1", "A2", "A3", "A4", "A5"}
_CHAIN_TYPES = {"A1", "A2", "A3", "A4", "A5", "A6", "A7", "B1", "B5"}
_RELATION = re.compile(r"[<>]=?|!=|\\(?:n?eq|ne|[lg]eq?|neq|lt|gt|approx|sim|simeq|equiv)(?![a-zA-Z])")


def _stated_values(predicted: str, reference: str, answer_type: str) -> tuple[str, str]:
    """Both sides reduced to what they finally state: the conclusion of a chain of equivalences, the
    value after a leading '=' ('= 4\\pi'), and the last side of a chain of equalities."""
    if answer_type[0] not in "AB":
        return predicted, reference
    sides = []
    for text in (predicted, reference):
        if answer_type in _NUMBER_TYPES:
            text = number_from_words(text) or text
        if answer_type in _NUMBER_TYPES:
            text = _evaluated_after_formula(text)
        text = _conclusion(text)
        text = re.sub(r"^\s*=\s*(?=\S)", "", text)
        if answer_type in _CHAIN_TYPES and "=" in text and not _RELATION.search(text):
            text = _chain_value(text, answer_type)
        sides.append(text)
    return sides[0], sides[1]


def _named_coordinates(predicted: str, question: str | None) -> str | None:
    """'x = 2, y = 5' -> '(2, 5)': coordinates named one by one, as a point. Their order is the one a
    tuple of those names in the question gives ('Give the solution as (x, y, z)'), else alphabetical."""
    items = split_labelled(clean_latex(predicted))
    labels = [label.strip() if label else "" for label, _ in items]
    if (
        len(items) < 2
        or not all(re.fullmatch(r"[a-zA-Z]", label) for label in labels)
        or len(set(labels)) < len(labels)
    ):
        return None
    order = sorted(labels)
    for match in re.finditer(r"\(([a-zA-Z](?:\s*,\s*[a-zA-Z])+)\)", question or ""):
        named = [name.strip() for name in match.group(1).split(",")]
        if sorted(named) == order:
            order = named
            break
    values = dict(zip(labels, (value.strip() for _, value in items)))
    return "(" + ", ".join(values[label] for label in order) + ")"


_LAYOUT = re.compile(
    r"^\s*\\begin\{(matrix|array|pmatrix|bmatrix|Bmatrix|smallmatrix|aligned|gathered)\}(?:\{[^{}]*\})?(.*)"
    r"\\end\{\1\}\s*$",
    re.DOTALL,
)
_NAME = re.compile(r"[A-Za-z](?:_\{?\w+\}?)?")
_MEMBERSHIP = re.compile(
    r"^\s*(?:[A-Za-z]\s*\(\s*[A-Za-z]\s*\)|\(?\s*[A-Za-z](?:_\{?\w+\}?)?(?:\s*,\s*[A-Za-z](?:_\{?\w+\}?)?)*\s*\)?)"
    r"\s*\\in\s*(?=[\\\[(])"
)
# "f(x) = 1 + x", "y = 2x - 3": a function or a variable defined by an expression.
_DEFINITION = re.compile(r"^\s*([A-Za-z](?:\s*\(\s*[A-Za-z](?:\s*,\s*[A-Za-z])*\s*\))?)\s*=\s*([^=]+)$")


# "\\{x \\in \\mathbb{Z} : -2 \\le x \\le 2\\}": a set given by a condition, not by its elements.
_SET_BUILDER = re.compile(r"\\\{[^{}]*?(?::|\\mid|\\vert|\|)[^{}]*\\\}")
_SINGLE_LETTER = re.compile(r"(?<![\\A-Za-z])[A-Za-z](?![A-Za-z])")


def _same_definition(predicted: str, reference: str) -> Comparison | None:
    """Two definitions of the same function ('f(x) = 1 + x' and 'f(x)=x+1') compare by the expressions they define."""
    ours, theirs = _DEFINITION.match(clean_latex(predicted)), _DEFINITION.match(clean_latex(reference))
    if ours is None or theirs is None or re.sub(r"\s+", "", ours.group(1)) != re.sub(r"\s+", "", theirs.group(1)):
        return None
    result = compare.compare_expressions(ours.group(2), theirs.group(2))
    if result.status == CORRECT:
        return result
    # A difference settles it only when the expressions use nothing but the function's arguments: with other
    # letters (arbitrary constants, y = Ke^x against y = Ce^x) unequal expressions may still be equal equations.
    arguments = set(re.findall(r"[A-Za-z]", ours.group(1).partition("(")[2]))
    letters = set(_SINGLE_LETTER.findall(ours.group(2) + " " + theirs.group(2)))
    if result.status == INCORRECT and arguments and letters <= arguments:
        return result
    return None


def unwrap_layout(predicted: str, reference: str) -> str:
    """An answer laid out in an environment where the reference is not a matrix, re-joined into what it says:
    one row of cells ('x = -3 & \\text{or} & x = 2') is one line, one column of names and values
    ('x \\\\ 4 \\\\ y \\\\ 9') is 'x = 4, y = 9', any other single column is a tuple, one cell is its content.
    '(x, y) \\in \\{(4, 1)\\}' and 'x \\in [2, 5)' state the set or interval after the membership sign."""
    if "\\begin" in reference:
        return predicted
    layout = _LAYOUT.match(predicted)
    if layout is not None:
        rows = [row.strip() for row in re.split(r"\\\\(?:\[[^\]]*\])?", layout.group(2)) if row.strip()]
        cells = [[cell.strip() for cell in row.split("&")] for row in rows]
        if len(rows) == 1:
            predicted = " ".join(cell for cell in cells[0] if cell)
        elif all(len(row) == 1 for row in cells):
            column = [row[0] for row in cells]
            names, values = column[0::2], column[1::2]
            if (
                len(column) % 2 == 0
                and all(_NAME.fullmatch(name) for name in names)
                and not any(_NAME.fullmatch(value) for value in values)
            ):
                predicted = ", ".join(f"{name} = {value}" for name, value in zip(names, values, strict=True))
            elif not any("=" in entry for entry in column):
                predicted = "(" + ", ".join(column) + ")"
    return _MEMBERSHIP.sub("", predicted, count=1)


def compare_answers(predicted: str, reference: str, answer_type: str, question: str | None) -> Comparison:
    """Identical answers, labelled values and option letters first, then the comparison of the type."""
    if _same_text(predicted, reference):
        return Comparison(CORRECT, "identical after removing presentation")
    predicted = unwrap_layout(predicted, reference)
    if _same_text(predicted, reference):
        return Comparison(CORRECT, "identical once its layout is re-joined")
    predicted, reference = _joined_math(predicted, answer_type), _joined_math(reference, answer_type)
    predicted, reference = _stated_values(predicted, reference, answer_type)
    if _same_text(predicted, reference):
        return Comparison(CORRECT, "the same value once the working is removed")
    if answer_type == "A8":
        predicted, reference = _parts_named_in_words(predicted, reference)
        reference_in_parts = lettered_parts(reference)
        predicted_named = word_labelled(predicted)
        if reference_in_parts is not None and predicted_named is not None:
            # '(a) 26, (b) 40' against 'perimeter = 26, area = 40': the parts in the order asked.
            return compare.compare_collections(
                "(" + ", ".join(value for _, value in predicted_named) + ")",
                "(" + ", ".join(reference_in_parts) + ")",
                ordered=True,
            )
    if answer_type == "B5":
        predicted = _named_coordinates(predicted, question) or predicted
    asked_part = _part_the_question_asks_for(predicted, reference, question)
    if asked_part is not None:
        predicted = asked_part
    if answer_type not in ("C1", "C2"):
        labelled_option = choices.resolve_option_labels(predicted, reference)
        if isinstance(labelled_option, Comparison):
            return labelled_option
        if labelled_option is not None:
            predicted, reference = labelled_option
            if _same_text(predicted, reference):
                return Comparison(CORRECT, "the same option value")
    if answer_type in ("A1", "A2", "A3", "A4"):
        conflict = units.unit_conflict(predicted, reference, question)
        if conflict is not None:
            return Comparison(INCONCLUSIVE, conflict)
    mapped = choices.map_option_letters(predicted, reference, answer_type, question)
    if mapped is not None:
        predicted, reference = mapped
        if _same_text(predicted, reference):
            return Comparison(CORRECT, "the option letter names the same value")
    if answer_type != "B2":
        labelled = _labelled_in_reference_order(predicted, reference)
        if labelled is not None:
            return compare.compare_collections(labelled[0], labelled[1], ordered=True)
        predicted_value, reference_value = strip_labels(clean_latex(predicted)), strip_labels(clean_latex(reference))
        if (predicted_value, reference_value) != (clean_latex(predicted), clean_latex(reference)):
            if _same_text(predicted_value, reference_value):
                return Comparison(CORRECT, "the same value once labels are removed")
            named = [label for label, _ in split_labelled(clean_latex(reference)) if label is not None]
            bases = {re.sub(r"_.*", "", label) for label in named}
            # x_1, x_2 name the roots of one unknown, in no particular order.
            if len(named) > 1 and len(set(named)) == len(named) and len(bases) > 1 and answer_type in ("A8", "B4"):
                # Values named by distinct labels ('AB=4, CD=5') have an order: a match only
                # in another order is not certain.
                in_order = compare.compare_collections(f"({predicted_value})", f"({reference_value})", ordered=True)
                if in_order.status == CORRECT:
                    return in_order
                any_order = _compare_by_type(predicted_value, reference_value, answer_type, question)
                if any_order.status == CORRECT:
                    return Comparison(INCONCLUSIVE, "the labelled values match only in another order")
                return any_order
            predicted, reference = predicted_value, reference_value
    return _compare_by_type(predicted, reference, answer_type, question)


_EQUALITY_CHAIN_TYPES = {"A1", "A2", "A3", "A4", "A5", "B1"}


def _last_side(text: str) -> str:
    """'\\frac{100\\cdot 101}{2} = 5050' -> '5050': a value stated at the end of an equality chain."""
    parts = compare.split_top_level(text, "=")
    return parts[-1].strip() if len(parts) > 1 and parts[-1].strip() else text


def _fraction_for_percentage(predicted: str, reference: str, question: str | None) -> bool:
    """'0.15' against '15%' where the question asks for a percentage: the answer matched only as
    the hundredth of the reference, so it gives a fraction of one where a percentage is asked."""
    if not ASKS_FOR_PERCENT.search(question or ""):
        return False
    reference_text, predicted_text = clean_latex(reference), clean_latex(predicted)
    if not reference_text.endswith("%") or "%" in predicted_text:
        return False
    as_written = compare.compare_numbers(predicted_text, reference_text[:-1].strip())
    return as_written.status != CORRECT


_ALTERNATIVES = re.compile(r"\\text\s*\{\s*or\s*\}|\bor\b|\\lor|\\vee")
_STATEMENT_BREAK = re.compile(r"\\text\s*\{\s*and\s*\}|\band\b|[,;]")
_ASSIGNED_NAME = re.compile(r"^\s*([A-Za-z](?:_\{?\w+\}?)?)\s*=")


def _several_values(text: str) -> bool:
    """'x = 1 \\text{ or } x = 6', 'x = 1, x = 6': alternatives, or one name given several values; not a chain of
    working that ends in the value ('\\frac38 = 0.375, and 0.125 + 0.375 = 0.50')."""
    if _ALTERNATIVES.search(text):
        return True
    names = [_ASSIGNED_NAME.match(part) for part in _STATEMENT_BREAK.split(text)]
    assigned = [match.group(1) for match in names if match is not None]
    return len(assigned) != len(set(assigned))


def _compare_by_type(predicted: str, reference: str, answer_type: str, question: str | None) -> Comparison:
    """Dispatch on the fine type code; a definite 'incorrect' about an answer with words in it the checker read as
    symbols (and a reference without) is no verdict. Runs inside the deadline."""
    result = _compare_read_by_type(predicted, reference, answer_type, question)
    # Numbers read a sentence's value themselves (compare_numbers); other kinds of math are compared as symbols.
    if result.status != INCORRECT or not (answer_type[0] == "B" or answer_type == "A8"):
        return result
    for side, text in (("answer", predicted), ("reference", reference)):
        if has_prose(text):
            return Comparison(
                INCONCLUSIVE, f"the {side} has words the checker cannot read as math ({result.explanation})"
            )
        if answer_type in ("A8", "B4") and _SET_BUILDER.search(text):
            return Comparison(INCONCLUSIVE, f"the {side} describes a set by a condition ({result.explanation})")
    return result


def _compare_read_by_type(predicted: str, reference: str, answer_type: str, question: str | None) -> Comparison:
    relation = re.compile(r"[<>]=?|!=|\\(?:n?eq|ne|[lg]eq?|neq)(?![a-zA-Z])|\\(?:lt|gt)(?![a-zA-Z])")
    if (
        answer_type in _EQUALITY_CHAIN_TYPES
        and "=" in predicted
        and "=" not in reference
        and not relation.search(predicted + reference)
        and not _several_values(predicted)
    ):
        predicted = _last_side(predicted)
    if answer_type in ("A1", "A2", "A3", "A4", "A6"):
        mismatch = exactness_mismatch(predicted, reference, question)
        if mismatch is not None:
            return mismatch
    if answer_type in ("A1", "A2", "A3", "A4"):
        # "a:b:c", and a clock time or a ratio with a zero part ("12:00"), compare part by part.
        if re.fullmatch(r"\s*-?\d+\s*:\s*-?\d+(?:\s*:\s*-?\d+)+\s*|\s*-?\d+\s*:\s*0+\s*", clean_latex(reference)):
            return compare.compare_collections(predicted.replace(":", ","), reference.replace(":", ","), ordered=True)
        places = places_asked(question)
        result = compare.compare_numbers(
            predicted, reference, allow_rounding=rounding_allowed(reference, question), places=places
        )
        if result.status == CORRECT and finer_than_asked(predicted, reference, places):
            return Comparison(
                INCORRECT, f"{predicted!r} is not rounded to {places} decimal places, as the question asks"
            )
        if (
            result.status == CORRECT
            and answer_type == "A3"
            and ASKS_FOR_LOWEST_TERMS.search(question or "")
            and _unreduced_fraction(predicted)
        ):
            return Comparison(
                INCORRECT, f"{predicted!r} has the right value but is not in lowest terms, as the question asks"
            )
        if result.status == CORRECT and _fraction_for_percentage(predicted, reference, question):
            return Comparison(
                INCORRECT, f"the question asks for a percentage; {predicted!r} is the value as a fraction of one"
            )
        if result.status == INCONCLUSIVE and answer_type == "A2":
            return compare.compare_expressions(predicted, reference)
        return result
    if answer_type == "A5":
        # Several complex values ("2i, -2i", "\\pm 2i") compare as an unordered list.
        if any(
            len(compare.split_top_level(clean_latex(side))) > 1 or "\\pm" in side for side in (predicted, reference)
        ):
            return compare.compare_multiple_values(predicted, reference)
        return compare.compare_numbers(predicted, reference, imaginary_unit=True)
    if answer_type == "A6":
        return compare.compare_angles(predicted, reference, question)
    if answer_type == "A7":
        return compare.compare_bases(predicted, reference)
    if answer_type == "A8":
        return compare.compare_multiple_values(predicted, reference)
    if answer_type == "B1":
        result = compare.compare_expressions(predicted, reference)
        if (
            result.status == CORRECT
            and ASKS_TO_FACTOR_COMPLETELY.search(question or "")
            and compare.factored_less_than(predicted, reference)
        ):
            return Comparison(INCORRECT, f"{predicted!r} has a factor that factors further; the question asks for all")
        return result
    if answer_type == "B2":
        defined = _same_definition(predicted, reference)
        if defined is not None:
            return defined
        return compare.compare_equations(predicted, reference)
    if answer_type == "B3":
        return compare.compare_intervals(predicted, reference)
    if answer_type == "B4":
        return compare.compare_collections(predicted, reference)
    if answer_type == "B5":
        return compare.compare_matrices(predicted, reference)
    if answer_type in ("C1", "C2"):
        return choices.compare_choices(predicted, reference, multiple=answer_type == "C2", question=question)
    if answer_type == "C3":
        result = choices.compare_finite_states(predicted, reference, question)
        if result.status != INCONCLUSIVE:
            return result
        # "..., so by Sylvester's criterion the matrix is positive definite. **Yes.**": the statements
        # both sides end in, when the whole passages cannot be mapped onto each other.
        concluded = _without_pronoun(concluding_clause(predicted)), _without_pronoun(concluding_clause(reference))
        if concluded != (predicted, reference):
            retried = choices.compare_finite_states(concluded[0], concluded[1], question)
            # Clauses differ in wording more often than in meaning: only a difference of yes and no
            # between them is a certain one.
            yes_or_no = {"positive", "negative"}
            polar = choices.finite_state(concluded[1]) in yes_or_no and (
                choices.finite_state(concluded[0]) in yes_or_no
                or choices.polarity_in_question(concluded[0], question) is not None
            )
            if retried.status == CORRECT or (retried.status == INCORRECT and polar):
                return retried
        return result
    if answer_type == "D1":
        return _string_or_math(predicted, reference, semantic=False)
    if answer_type == "D2":
        return _string_or_math(predicted, reference, semantic=True)
    raise ValueError(f"unknown answer type code {answer_type!r}")


def _without_pronoun(clause: str) -> str:
    """'it diverges' -> 'diverges': a clause's pronoun subject names nothing."""
    return re.sub(r"^\s*(?:it|they|this|that)\s+(?=\w)", "", clause, flags=re.IGNORECASE)


def _string_or_math(predicted: str, reference: str, *, semantic: bool) -> Comparison:
    result = strings.compare_strings(predicted, reference, semantic=semantic)
    if result.status != INCONCLUSIVE:
        return result
    # "The discriminant is positive: b^2-4ac>0" answered by "$b^2-4ac>0$": the statement the reference
    # spells out after its colon, word for word.
    described, colon, stated = reference.rpartition(": ")
    if colon and re.search(r"[A-Za-z]{3,}", described) and _same_text(predicted, stated):
        return Comparison(
            CORRECT, f"the answer is the statement {stated.strip()!r} the reference gives after its colon"
        )
    # A sentence with a number in it ("A horizontal line through (0, 3)") is not math to evaluate.
    words = re.findall(r"[A-Za-z]{3,}", re.sub(r"\\[a-zA-Z]+|\$[^$]*\$", " ", reference))
    if len(words) < 3 and re.search(r"[\\^_=0-9]", plain_text(reference)):
        detected = detect_answer_type(reference)
        if detected[0] in "AB":
            return compare_answers(predicted, reference, detected, None)
    return result
