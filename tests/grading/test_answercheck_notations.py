"""General rules for wordings and notations: one group per class of answer the verifier used to miss."""

import pytest

from grading.answercheck import verify
from grading.answercheck.compare.sets import compare_elements
from grading.answercheck.stated_answers import reference_final_answer


def status(completion, reference, answer_type=None, question=None):
    return verify(completion, reference, answer_type=answer_type, question=question).status


# Word answers: hyphenated modifiers, Roman numerals, framing subjects and verbs.
@pytest.mark.parametrize(
    ("completion", "reference", "answer_type", "expected"),
    [
        ("\\boxed{\\text{anti-symmetric}}", "\\boxed{\\text{symmetric}}", "D1", "incorrect"),
        ("\\boxed{\\text{non-linear}}", "\\boxed{\\text{linear}}", "D1", "incorrect"),
        ("\\boxed{\\text{a linear map}}", "\\boxed{\\text{linear}}", "D1", "correct"),
        ("\\boxed{\\text{Stage 2 cancer}}", "\\boxed{\\text{Stage II cancer}}", "D1", "correct"),
        ("\\boxed{\\text{Stage 3 cancer}}", "\\boxed{\\text{Stage II cancer}}", "D1", "incorrect"),
        ("\\boxed{\\text{parallel}}", "They are parallel.", "D2", "correct"),
        ("\\boxed{\\text{They are parallel}}", "It is parallel.", "D2", "correct"),
        ("\\boxed{\\text{not parallel}}", "They are parallel.", "D2", "inconclusive"),
        ("\\boxed{\\text{associative property}}", "\\boxed{\\text{associativity}}", "D1", "correct"),
        ("\\boxed{\\text{distributivity}}", "\\boxed{\\text{distributive law}}", "D1", "correct"),
        ("\\boxed{\\text{commutative property}}", "\\boxed{\\text{associativity}}", "D1", "incorrect"),
    ],
)
def test_word_answers(completion, reference, answer_type, expected):
    assert status(completion, reference, answer_type) == expected


# A concluding sentence without a box: its one bold phrase is the term it states.
@pytest.mark.parametrize(
    ("completion", "reference", "answer_type", "expected"),
    [
        ("The values it takes form the **range** of the function.", "\\boxed{\\text{range}}", "D1", "correct"),
        ("It is known as the **median**; the mean differs.", "\\boxed{\\text{mode}}", "D1", "incorrect"),
        ("Try $n = 1$, or rather $n = 2$. The claim is **true**.", "\\boxed{\\text{True}}", "C3", "correct"),
        ("The matrix is not **singular** here.", "\\boxed{\\text{invertible}}", "D1", "inconclusive"),
        ("The claim is **true** or **false** depending on $n$.", "\\boxed{\\text{True}}", "C3", "inconclusive"),
    ],
)
def test_the_bold_term_of_a_concluding_sentence(completion, reference, answer_type, expected):
    assert status(completion, reference, answer_type) == expected


# Numerals with a programming prefix name their base.
@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("**Answer:** 0x1F", "$\\boxed{1F_{16}}$", "correct"),
        ("**Answer:** 0x1E", "$\\boxed{1F_{16}}$", "incorrect"),
        ("**Answer:** 0b1011", "$\\boxed{1011_2}$", "correct"),
        ("**Answer:** 0b1011", "$\\boxed{11}$", "correct"),
        ("**Answer:** 0o17", "$\\boxed{15}$", "correct"),
        ("**Answer:** 0b1", "$\\boxed{B1_{12}}$", "correct"),  # the digits 0B1, not a binary numeral
    ],
)
def test_prefixed_numerals(completion, reference, expected):
    assert status(completion, reference, "A7") == expected


# A worked reference whose short last paragraph states the answer in words.
@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        (
            "Each term halves the distance to $2$, so the partial sums increase towards $2$.\n\nIt converges to $2$.",
            "It converges to $2$.",
        ),
        ("The map preserves angles and lengths.\n\nIt is an isometry.", "It is an isometry."),
        ("The map preserves angles.\n\nNote: lengths too.", None),
        ("The map preserves angles.\n\nIt is an isometry. It is linear.", None),
    ],
)
def test_the_concluding_paragraph_of_a_worded_reference(reference, expected):
    stated = reference_final_answer(reference, reference_is_solution=False, answer_type="D2")
    assert stated == (expected if expected is not None else reference)


# Several values written as a set membership, and the empty set in its other spellings.
@pytest.mark.parametrize(
    ("completion", "reference", "answer_type", "expected"),
    [
        ("**Answer:** $t \\in \\{-1, 4\\}$", "$\\boxed{4, -1}$", "A8", "correct"),
        ("**Answer:** $t \\in \\left\\{\\tfrac{1}{3}, 2\\right\\}$", "$\\boxed{\\frac13, 2}$", "A8", "correct"),
        ("**Answer:** $t \\in \\{-1, 5\\}$", "$\\boxed{4, -1}$", "A8", "incorrect"),
        ("**Answer:** $\\varnothing, \\{a\\}$", "$\\boxed{\\emptyset, \\{a\\}}$", "B4", "correct"),
        ("**Answer:** $∅, \\{a\\}$", "$\\boxed{\\emptyset, \\{a\\}}$", "B4", "correct"),
        ("**Answer:** $\\varnothing, \\{2\\}$", "$\\boxed{\\emptyset, \\{1\\}}$", "B4", "incorrect"),
    ],
)
def test_set_membership_and_empty_set(completion, reference, answer_type, expected):
    assert status(completion, reference, answer_type) == expected


@pytest.mark.parametrize(
    ("element", "reference_element", "expected"),
    [
        ("\\emptyset", "\\{ \\}", "correct"),
        ("\\emptyset", "\\{1\\}", "incorrect"),
        ("\\{2\\}", "\\{1\\}", "incorrect"),
        ("\\{1\\}", "\\{1\\}", "correct"),
    ],
)
def test_sets_as_elements(element, reference_element, expected):
    assert compare_elements(element, reference_element).status == expected


# Equations: tuples of unknowns, function notation on the left, arbitrary constants under another name.
@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("**Answer:** $(a, b) = (7, -2)$", "$\\boxed{a = 7,\\ b = -2}$", "correct"),
        ("**Answer:** $(a, b) = (-2, 7)$", "$\\boxed{a = 7,\\ b = -2}$", "incorrect"),
        ("**Answer:** $(5, 1)$", "$\\boxed{p = 5,\\ q = 1}$", "correct"),
        ("**Answer:** $(1, 5)$", "$\\boxed{p = 5,\\ q = 1}$", "incorrect"),
        ("**Answer:** $(5, 1, 0)$", "$\\boxed{p = 5,\\ q = 1}$", "incorrect"),
        ("**Answer:** $u(t) = 1 - t^2$", "$\\boxed{u = -t^2 + 1}$", "correct"),
        ("**Answer:** $u(t) = 1 + t^2$", "$\\boxed{u = -t^2 + 1}$", "incorrect"),
        ("**Answer:** $g(t) = 1 - t^2$", "$\\boxed{u = -t^2 + 1}$", "incorrect"),
        ("**Answer:** $y = Ke^{-4x}$", "$\\boxed{y = Ce^{-4x}}$", "correct"),
        ("**Answer:** $y = C_1 \\sin x$", "$\\boxed{y = A\\sin x}$", "correct"),
        ("**Answer:** $y = Ke^{-4x} + 1$", "$\\boxed{y = Ce^{-4x}}$", "incorrect"),
        ("**Answer:** $y = Ke^{-4x}$", "$\\boxed{y = 3e^{-4x}}$", "incorrect"),
    ],
)
def test_equation_forms(completion, reference, expected):
    assert status(completion, reference, "B2") == expected


# Intervals written in set-builder notation.
@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("**Answer:** $\\{t \\mid -2 \\le t < 5\\}$", "$\\boxed{[-2, 5)}$", "correct"),
        ("**Answer:** $\\{t \\mid -2 < t < 5\\}$", "$\\boxed{[-2, 5)}$", "incorrect"),
        ("**Answer:** $\\{u \\in \\mathbb{R} : u > 7\\}$", "$\\boxed{(7, \\infty)}$", "correct"),
        ("**Answer:** $\\{u : u \\ge 7\\}$", "$\\boxed{(7, \\infty)}$", "incorrect"),
        (
            "**Answer:** $\\{t \\mid t < 0 \\text{ or } t > 2\\}$",
            "$\\boxed{(-\\infty, 0) \\cup (2, \\infty)}$",
            "correct",
        ),
    ],
)
def test_set_builder_intervals(completion, reference, expected):
    assert status(completion, reference, "B3") == expected


# Vectors: a transposed row, a scalar in front of a tuple, components along i, j, k.
@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("**Answer:** $(2, -7)^T$", "$\\boxed{\\begin{pmatrix}2\\\\-7\\end{pmatrix}}$", "correct"),
        ("**Answer:** $(2, 7)^{\\top}$", "$\\boxed{\\begin{pmatrix}2\\\\-7\\end{pmatrix}}$", "incorrect"),
        ("**Answer:** $\\frac13(1, 2, 2)$", "$\\boxed{\\left(\\frac13, \\frac23, \\frac23\\right)}$", "correct"),
        ("**Answer:** $\\frac13(2, 1, 2)$", "$\\boxed{\\left(\\frac13, \\frac23, \\frac23\\right)}$", "incorrect"),
        ("**Answer:** $3(1, -2)$", "$\\boxed{(3, -6)}$", "correct"),
        ("**Answer:** $4\\mathbf{i} - \\mathbf{j} + 2\\mathbf{k}$", "$\\boxed{(4, -1, 2)}$", "correct"),
        ("**Answer:** $4\\mathbf{i} + \\mathbf{j} + 2\\mathbf{k}$", "$\\boxed{(4, -1, 2)}$", "incorrect"),
        ("**Answer:** $5\\hat{i} - \\hat{j}$", "$\\boxed{(5, -1, 0)}$", "correct"),
        ("**Answer:** $5\\hat{i} - \\hat{j} + 1$", "$\\boxed{(5, -1)}$", "inconclusive"),
    ],
)
def test_vector_notations(completion, reference, expected):
    assert status(completion, reference, "B5") == expected


# Complex roots, each in its own box.
@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("The roots are $\\boxed{3+i}$ and $\\boxed{3-i}$.", "$\\boxed{3 \\pm i}$", "correct"),
        ("The roots are $\\boxed{3+i}$ and $\\boxed{-3-i}$.", "$\\boxed{3 \\pm i}$", "incorrect"),
        ("The roots are $\\boxed{3+i}$ and $\\boxed{3-i}$.", "$\\boxed{3+i}$", "incorrect"),
    ],
)
def test_complex_roots_in_separate_boxes(completion, reference, expected):
    assert status(completion, reference, "A5") == expected


# Units: a compound unit after the number, volumes, and a unit other than the one asked for.
@pytest.mark.parametrize(
    ("completion", "reference", "question", "expected"),
    [
        ("**Answer:** 45 km/h", "$\\boxed{45}$", "How fast does the train go, in km per hour?", "correct"),
        ("**Answer:** 44 km/h", "$\\boxed{45}$", "How fast does the train go, in km per hour?", "incorrect"),
        ("**Answer:** 45 m/s", "$\\boxed{45}$", "How fast does the train go, in km per hour?", "inconclusive"),
        ("$\\boxed{300 \\text{ mL}}$", "$\\boxed{300}$", "How many litres does the jug hold?", "inconclusive"),
        ("$\\boxed{300 \\text{ litres}}$", "$\\boxed{300}$", "How many litres does the jug hold?", "correct"),
        ("$\\boxed{0.3 \\text{ m}^3}$", "$\\boxed{300}$", "How many litres does the jug hold?", "inconclusive"),
        ("$\\boxed{27 \\text{ cm}^3}$", "$\\boxed{27}$", "Find its volume in cubic centimetres.", "correct"),
    ],
)
def test_units_of_numeric_answers(completion, reference, question, expected):
    assert status(completion, reference, "A1", question) == expected


# Angles: a value without a unit is in the unit the question asks for; a marked unit converts.
@pytest.mark.parametrize(
    ("completion", "reference", "question", "expected"),
    [
        ("$\\boxed{4\\pi}$", "$\\boxed{720^\\circ}$", "Find the angle sum of a hexagon, in degrees.", "incorrect"),
        ("$\\boxed{720}$", "$\\boxed{720^\\circ}$", "Find the angle sum of a hexagon, in degrees.", "correct"),
        ("$\\boxed{4\\pi}$", "$\\boxed{720^\\circ}$", "Find the angle sum of a hexagon.", "correct"),
        ("$\\boxed{60^\\circ}$", "$\\boxed{\\frac{\\pi}{3}}$", "Give the angle in radians.", "correct"),
        ("$\\boxed{60}$", "$\\boxed{\\frac{\\pi}{3}}$", "Give the angle in radians.", "incorrect"),
        ("$\\boxed{\\frac{\\pi}{3}}$", "$\\boxed{\\frac{\\pi}{3}}$", "Give the angle in radians.", "correct"),
    ],
)
def test_angle_in_the_unit_asked(completion, reference, question, expected):
    assert status(completion, reference, "A6", question) == expected


# Percentages: where the question asks for one, a fraction of one is not the answer.
@pytest.mark.parametrize(
    ("completion", "reference", "question", "expected"),
    [
        ("$\\boxed{0.4}$", "$\\boxed{40\\%}$", "What percentage of the class passed?", "incorrect"),
        ("$\\boxed{40}$", "$\\boxed{40\\%}$", "What percentage of the class passed?", "correct"),
        ("$\\boxed{40\\%}$", "$\\boxed{40\\%}$", "Express the share passing as a percent.", "correct"),
        ("$\\boxed{\\frac{2}{5}}$", "$\\boxed{40\\%}$", "Express the share passing as a percent.", "incorrect"),
        ("$\\boxed{0.4}$", "$\\boxed{40\\%}$", "What share of the class passed?", "correct"),
    ],
)
def test_percentage_asked(completion, reference, question, expected):
    assert status(completion, reference, "A3", question) == expected


# Choices given as an option's value, and a yes-no question answered by the property it names.
_SOLVE_OPTIONS = "Which value solves $5t + 1 = 4t + 9$?\n\n(A) $t = 1$\n(B) $t = 8$\n(C) $t = -8$\n(D) $t = 10$"
_SPEED_OPTIONS = "Its speed is\n\n(A) $40$ km/h  (B) $48$ km/h  (C) $50$ km/h"


@pytest.mark.parametrize(
    ("completion", "reference", "question", "expected"),
    [
        ("**Final Answer:** $t=8$", "$\\boxed{B}$", _SOLVE_OPTIONS, "correct"),
        ("**Final Answer:** $8$", "$\\boxed{B}$", _SOLVE_OPTIONS, "correct"),
        ("**Final Answer:** $t=-8$", "$\\boxed{B}$", _SOLVE_OPTIONS, "incorrect"),
        ("**Final Answer:** 48 km/h, i.e. (B)", "B", _SPEED_OPTIONS, "correct"),
        ("**Final Answer:** 50 km/h, i.e. (C)", "B", _SPEED_OPTIONS, "incorrect"),
    ],
)
def test_options_named_by_value(completion, reference, question, expected):
    assert status(completion, reference, "C1", question) == expected


@pytest.mark.parametrize(
    ("completion", "reference", "question", "expected"),
    [
        (
            "$\\boxed{\\text{Dependent}}$",
            "$\\boxed{\\text{No}}$",
            "Are the rows independent? Answer yes or no.",
            "correct",
        ),
        ("$\\boxed{\\text{Independent}}$", "$\\boxed{\\text{No}}$", "Are the rows independent?", "incorrect"),
        ("$\\boxed{\\text{Surjective}}$", "$\\boxed{\\text{Yes}}$", "Is the map surjective?", "correct"),
        ("$\\boxed{\\text{Bounded}}$", "$\\boxed{\\text{No}}$", "Is the sequence unbounded?", "correct"),
        ("$\\boxed{\\text{Bounded}}$", "$\\boxed{\\text{No}}$", "Is the sequence not unbounded?", "incorrect"),
        ("$\\boxed{\\text{Even}}$", "$\\boxed{\\text{Yes}}$", "Is the function even or odd?", "incorrect"),
    ],
)
def test_yes_no_answered_by_the_property_named(completion, reference, question, expected):
    assert status(completion, reference, "C3", question) == expected


def test_an_answer_phrase_in_the_last_paragraph_still_names_the_answer():
    reference = "Sorting by height: Dan > Eve > Fay.\n\nThe answer is Fay."
    assert reference_final_answer(reference, reference_is_solution=False, answer_type="D1") == "Fay"


# Factoring completely: a factor left that splits further is not the complete factorisation.
@pytest.mark.parametrize(
    ("completion", "reference", "question", "expected"),
    [
        ("The answer is $(a^2 - 9)(a^2 + 9)$.", "$(a-3)(a+3)(a^2+9)$", "Factor completely: $a^4 - 81$.", "incorrect"),
        ("The answer is $(a+3)(a-3)(a^2 + 9)$.", "$(a-3)(a+3)(a^2+9)$", "Factor completely: $a^4 - 81$.", "correct"),
        ("The answer is $(a^2 - 9)(a^2 + 9)$.", "$(a-3)(a+3)(a^2+9)$", "Factor $a^4 - 81$.", "correct"),
        ("The answer is $a(a^2 - 1)$.", "$a(a-1)(a+1)$", "Fully factor $a^3 - a$.", "incorrect"),
        ("The answer is $3(a - 2)^2$.", "$3(a-2)^2$", "Factor completely: $3a^2 - 12a + 12$.", "correct"),
    ],
)
def test_complete_factorisation(completion, reference, question, expected):
    assert status(completion, reference, "B1", question) == expected


# An answer in named parts where the question asks for one of them.
@pytest.mark.parametrize(
    ("completion", "reference", "answer_type", "question", "expected"),
    [
        ("**Answer:** vertex $(1, 5)$ and minimum $5$.", "$\\boxed{(1, 5)}$", "B4", "Find the vertex.", "correct"),
        ("**Answer:** vertex $(5, 1)$ and minimum $5$.", "$\\boxed{(1, 5)}$", "B4", "Find the vertex.", "incorrect"),
        ("**Answer:** the mode is $7$ and the range is $3$.", "$\\boxed{3}$", "A1", "Find the range.", "correct"),
        ("**Answer:** the mode is $3$ and the range is $7$.", "$\\boxed{3}$", "A1", "Find the range.", "incorrect"),
        # Two values where the reference holds one and the question asks for both: which part the reference
        # stands for cannot be told, so no definite verdict.
        (
            "**Answer:** the mode is $3$ and the range is $7$.",
            "$\\boxed{3}$",
            "A1",
            "Find the mode and range.",
            "inconclusive",
        ),
    ],
)
def test_the_part_the_question_asks_for(completion, reference, answer_type, question, expected):
    assert status(completion, reference, answer_type, question) == expected
