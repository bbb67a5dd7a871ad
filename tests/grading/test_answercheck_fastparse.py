"""The small arithmetic parser gives the values the full LaTeX grammar gives, and gives up on the rest."""

import pytest
import sympy
from latex2sympy2_extended import latex2sympy

from grading.answercheck import verify
from grading.answercheck.fastparse import fast_expression


@pytest.mark.parametrize(
    "text",
    [
        "x(x+5)",
        "2x^2+3x",
        "3\\sqrt{2}",
        "\\frac{x+1}{2}",
        "e^{2}",
        "2e",
        "x^2 e^x",
        "\\sqrt[3]{2}",
        "2\\pi",
        "\\pi r^2",
        "ab",
        "x/2",
        "0.375",
        "-x^2",
        "2^{-1}",
        "x^{2}y",
        "(x+1)(x-1)",
        "\\frac{\\sqrt{3}+1}{2}",
        "3 \\cdot 4",
        "2\\times 3",
        "10/4",
        "\\left(x+1\\right)^{3}",
        "-\\frac{1}{e}",
        "\\dfrac{5}{36}",
    ],
)
def test_the_same_value_as_the_full_grammar(text):
    fast = fast_expression(text)
    assert fast is not None
    assert sympy.simplify(fast - latex2sympy(text)) == 0


@pytest.mark.parametrize(
    "text",
    [
        "f(x)",
        "15\\frac{1}{6}",
        "It does not converge",
        "x^23",
        "2 3",
        "\\ln x",
        "\\{1, 2\\}",
        "x = 3",
        "1, 2",
        "5!",
        "\\frac{1}{0}",
        "[0, 1)",
    ],
)
def test_anything_else_is_left_to_the_full_grammar(text):
    assert fast_expression(text) is None


def test_the_imaginary_unit_only_when_asked():
    assert fast_expression("5+i", imaginary_unit=True) == 5 + sympy.I
    assert fast_expression("5+i") == 5 + sympy.Symbol("i")


@pytest.mark.parametrize(
    ("answer", "reference", "expected"),
    [
        ("x(x+5)", "x^2+5x", "correct"),
        ("x(x+5)", "x^2+6x", "incorrect"),
        ("(x+1)^{2}", "x^2+2x+1", "correct"),
        ("\\frac{x+4}{3}", "\\frac{x}{3}+\\frac{4}{3}", "correct"),
        ("(x+y)^{3}", "x^3+3x^2y+3xy^2+y^3+1", "incorrect"),
    ],
)
def test_polynomials_are_decided_by_expanding_their_difference(answer, reference, expected):
    assert verify(f"$\\boxed{{{answer}}}$", reference, answer_type="B1").status == expected
