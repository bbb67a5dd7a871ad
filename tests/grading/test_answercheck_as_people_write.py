"""Answers written the way people write them, and a definite verdict only when both sides were read.

Each case is made up for its rule (none comes from a held-out set): units and superscripts after a value, full-width
and Chinese final sentences, values stated in prose or in a sentence inside a box, π and √ written as characters,
layouts in matrix environments, set membership, currency dollar signs, definitions of one function, and answers
holding words the checker could only have misread as symbols."""

from __future__ import annotations

import pytest

from grading.answercheck import verify
from grading.answercheck.dispatch import unwrap_layout
from grading.answercheck.extract import extract_final_answer, mask_prices
from grading.answercheck.prose import has_prose
from grading.answercheck.units import asked_unit


def status(completion, reference, answer_type=None, question=None):
    return verify(completion, reference, answer_type=answer_type, question=question).status


@pytest.mark.parametrize(
    ("completion", "reference", "answer_type", "question", "expected"),
    [
        # units, superscripts and trailing stops, ASCII and full-width
        ("The tank holds 48 litres.\n\n48 m^3", "48", "A1", "What is its volume in m^3?", "correct"),
        ("Its area: $6 \\times 7 = 42$.\n\n42 m²", "42", "A1", "What is the area in m²?", "correct"),
        ("Its area: $6 \\times 7 = 42$.\n\n43 m²", "42", "A1", "What is the area in m²?", "incorrect"),
        ("The rope is 3.5 m long。", "3.5", "A3", None, "correct"),
        # Chinese final sentences and full-width forms
        ("$9 \\times 4 = 36$，所以一共 36 个苹果。", "36", "A1", None, "correct"),
        ("$9 \\times 4 = 36$，所以一共 35 个苹果。", "36", "A1", None, "incorrect"),
        ("共 $3 + 4 = 7$ 本。答：小明有７本书。", "7", "A1", None, "correct"),
        ("最终答案为 $\\frac{2}{3}$。", "\\frac{2}{3}", "A3", None, "correct"),
        # a value stated in prose, or in a sentence inside a box
        ("We solve $2z = 14$. So the answer is z equals 7.", "7", "A1", None, "correct"),
        ("We solve $2z = 14$. So the answer is z equals 8.", "7", "A1", None, "incorrect"),
        ("\\boxed{\\text{The diagonal of ABCD is } 5\\sqrt{2}}", "5\\sqrt{2}", "A4", None, "correct"),
        ("\\boxed{\\text{He earns } \\$350}", "350", "A1", None, "correct"),
        # π and √ written as characters, after a value
        ("The arc is $\\frac{1}{4} \\cdot 2\\pi \\cdot 6$.\n\nThe arc measures 3π cm.", "3\\pi", "A2", None, "correct"),
        ("The side is 4√3.", "4\\sqrt{3}", "A4", None, "correct"),
        # layouts in environments, and set membership
        ("$$\\boxed{\\begin{array}{c} 17 \\end{array}}$$", "17", "A1", None, "correct"),
        ("$$\\boxed{\\begin{matrix} t = 2 & \\text{or} & t = 5 \\end{matrix}}$$", "\\{2, 5\\}", "B4", None, "correct"),
        ("$$\\boxed{\\begin{pmatrix} a \\\\ 6 \\\\ b \\\\ 1 \\end{pmatrix}}$$", "(6, 1)", "B4", None, "correct"),
        ("$$\\boxed{\\begin{pmatrix} a \\\\ 1 \\\\ b \\\\ 6 \\end{pmatrix}}$$", "(6, 1)", "B4", None, "incorrect"),
        ("$$\\boxed{\\begin{pmatrix} 2 \\\\ 0 \\\\ 5 \\end{pmatrix}}$$", "(2, 0, 5)", "B4", None, "correct"),
        ("Answer: $(m, n) \\in \\{(2, 7), (7, 2)\\}$", "(7,2),(2,7)", "B4", None, "correct"),
        ("**Final answer:** $g(t) \\in [1, +\\infty)$", "[1,\\infty)", "B3", None, "correct"),
        # one function defined twice
        ("Hence $g(t) = 2 + 3t$.", "g(t)=3t+2", "B2", None, "correct"),
        ("Hence $g(t) = 2 + 4t$.", "g(t)=3t+2", "B2", None, "incorrect"),
        # a currency dollar sign does not open a formula
        (
            "She pays $15 each month, so after $n$ months she pays $15n$. For a year: 180 dollars.",
            "180",
            "A1",
            None,
            "correct",
        ),
    ],
)
def test_answers_as_people_write_them(completion, reference, answer_type, question, expected):
    assert status(completion, reference, answer_type, question) == expected


@pytest.mark.parametrize(
    ("completion", "reference", "answer_type"),
    [
        # several solutions where the reference has one: never the last side of "x = 1 or x = 6"
        ("$\\boxed{k=2 \\text{ or } k=9}$", "9", "A1"),
        ("$\\boxed{k = 2, k = 9}$", "9", "A1"),
    ],
)
def test_several_values_for_one_are_never_correct(completion, reference, answer_type):
    assert status(completion, reference, answer_type) == "incorrect"


@pytest.mark.parametrize(
    ("completion", "reference", "answer_type"),
    [
        # words the checker could only read as a product of symbols: no definite verdict
        ("$$\\boxed{m+1 \\text{ is a prime number}}$$", "m=p-1", "B1"),
        ("$$\\boxed{\\text{every } n \\text{ divisible by } 4}$$", "n=4k", "B1"),
        ("The answer: the mean is $5$ and the median is $6$.", "5", "A1"),
    ],
)
def test_an_answer_the_checker_could_not_read_is_inconclusive(completion, reference, answer_type):
    assert status(completion, reference, answer_type) == "inconclusive"


def test_a_chain_of_working_still_ends_in_its_value():
    assert status("So $\\frac{1}{4} = 0.25$, and $0.25 + 0.5 = 0.75$.", "0.75", "A3") == "correct"


def test_two_letter_products_and_function_names_are_not_words():
    assert not has_prose("Ke^{-2x} + xy")
    assert not has_prose("\\sin x + \\log 2 + 7 cm")
    assert has_prose("n+1 \\text{ is a power of } 2")
    assert has_prose("所以")


def test_prices_are_masked_to_the_same_length():
    text = "A pen costs $3 and a book costs $12 in the shop, so $x = 15$ and \\$15 in all."
    masked = mask_prices(text)
    assert len(masked) == len(text)
    assert masked.count("$") == 2 and "$x = 15$" in masked
    assert extract_final_answer("A pen costs $3 and a book costs $12; in all $15.") == "15"


def test_the_square_after_an_asked_length_unit_is_part_of_it():
    assert asked_unit("What is its area in cm²?") == ("area", "cm^2")
    assert asked_unit("What is its volume in m^3?") == ("volume", "m^3")
    assert asked_unit("How long is it in cm?") == ("length", "cm")


def test_a_real_matrix_is_left_as_it_is():
    matrix = "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}"
    assert unwrap_layout(matrix, "(1, 2)") == matrix
    assert unwrap_layout("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}") == (
        "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}"
    )
