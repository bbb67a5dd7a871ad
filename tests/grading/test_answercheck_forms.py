"""Decimals against exact values, roundings asked for, retracted answers, wrong units, multi-part
answers in words, numbers in text wrappers or E-notation, option values, concluding "Hence:" lines,
short text answers in other word forms, and powers of a variable in an exponent."""

import pytest

from grading.answercheck import verify
from grading.answercheck.extract import extract_final_answer
from grading.answercheck.normalize import lettered_parts, named_value, plain_number, word_labelled
from grading.answercheck.parsing import TooExpensive, check_cost
from grading.answercheck.question_wording import exactness_mismatch
from grading.answercheck.strings import compare_strings
from grading.answercheck.units import answer_unit, unit_conflict


def status(completion, reference, answer_type=None, question=None):
    return verify(completion, reference, answer_type=answer_type, question=question).status


# A decimal is not the exact value the question asks for.
@pytest.mark.parametrize(
    ("completion", "reference", "answer_type", "question"),
    [
        ("The answer is $\\boxed{12.566}$.", "4\\pi", "A2", "Find the exact circumference of a circle of radius 2."),
        ("So $x = 2.236$.", "\\sqrt{5}", "A4", "Find the exact length of the hypotenuse with legs 1 and 2."),
        ("Therefore the answer is 7.389.", "e^2", "A2", "Evaluate $\\int_0^2 e^x\\,dx + 1$ exactly."),
        (
            "The angle is $\\boxed{1.047}$.",
            "\\frac{\\pi}{3}",
            "A6",
            "Convert $60^\\circ$ to radians. Give an exact answer.",
        ),
        ("It is $\\boxed{0.693}$.", "\\ln 2", "A2", "Give the exact value of $\\int_1^2 \\frac{dx}{x}$."),
    ],
)
def test_a_decimal_is_wrong_where_an_exact_value_is_asked_for(completion, reference, answer_type, question):
    assert status(completion, reference, answer_type, question) == "incorrect"


@pytest.mark.parametrize(
    ("completion", "reference", "answer_type", "question"),
    [
        # The exact value itself, in another form.
        (
            "The answer is $\\boxed{\\frac{\\pi}{3}}$.",
            "\\frac{\\pi}{3}",
            "A6",
            "Convert $60^\\circ$ to radians exactly.",
        ),
        ("So the circumference is $\\boxed{4\\pi}$.", "4\\pi", "A2", "Find the exact circumference of radius 2."),
        # Without the word "exact" a correct rounding still counts.
        ("So the circumference is $\\boxed{12.57}$.", "4\\pi", "A2", "Find the circumference of a circle of radius 2."),
        # A rounding asked for is met by the decimal.
        ("So it is $\\boxed{12.57}$.", "4\\pi", "A2", "Find the circumference, rounded to two decimal places."),
    ],
)
def test_exact_values_and_asked_roundings_still_count(completion, reference, answer_type, question):
    assert status(completion, reference, answer_type, question) == "correct"


def test_exactly_about_a_quantity_is_not_a_request_for_an_exact_value():
    assert exactness_mismatch("1.414", "\\sqrt{2}", "Spend exactly $52 on two items.") is None
    assert exactness_mismatch("1.414", "\\sqrt{2}", "Find the diagonal exactly.") is not None


@pytest.mark.parametrize(
    ("completion", "reference", "question"),
    [
        # More places than asked: not the rounding the question wants.
        ("The answer is $\\boxed{2.718}$.", "2.72", "Round $e$ to two decimal places."),
        ("So it is $1.4142$.", "1.414", "Give $\\sqrt{2}$ to three decimal places."),
        # The exact value where a rounding is asked.
        ("The answer is $\\boxed{\\sqrt{2}}$.", "1.41", "Round $\\sqrt 2$ to two decimal places."),
        ("So the answer is $e$.", "2.72", "Round $e$ to the nearest hundredth."),
    ],
)
def test_an_answer_not_rounded_as_asked_is_wrong(completion, reference, question):
    assert status(completion, reference, "A3", question) == "incorrect"


def test_the_rounding_asked_for_is_correct():
    assert status("The answer is $\\boxed{2.72}$.", "2.72", "A3", "Round $e$ to two decimal places.") == "correct"
    assert status("The answer is $\\boxed{2.720}$.", "2.72", "A3", "Round $e$ to two decimal places.") == "correct"


# A result given and then retracted is not the final answer.
@pytest.mark.parametrize(
    ("completion", "reference", "answer_type", "question", "expected"),
    [
        ("This gives yes. Wait, I made a slip. Redoing it, the correct result is **no**.", "No", "C3", None, "correct"),
        (
            "This gives no. Wait, I made a slip. Redoing it, the correct result is **no**.",
            "Yes",
            "C3",
            None,
            "incorrect",
        ),
        ("This gives false. Hmm, I made an error; the correct result is true.", "True", "C3", None, "correct"),
        (
            "This gives incenter. Wait, the correct result is $\\text{circumcenter}$.",
            "circumcenter",
            "D1",
            None,
            "correct",
        ),
        (
            "So it is A. Wait, I made a slip in the last step. The correct result is $\\sin x$.",
            "A",
            "C1",
            "Which is odd? (A) $x^2$ (B) $\\cos x$ (C) $\\sin x$",
            "incorrect",
        ),
        ("This gives 12. Wait, that was a slip; the correct result is 21.", "21", "A1", None, "correct"),
    ],
)
def test_a_retracted_result_is_replaced_by_the_corrected_one(completion, reference, answer_type, question, expected):
    assert status(completion, reference, answer_type, question) == expected


# Units: a length where an area is asked for.
def test_square_units_are_read_after_the_number():
    assert answer_unit("12\\text{ cm}^2") == ("area", "cm^2")
    assert answer_unit("12 square meters") == ("area", "m^2")
    assert answer_unit("12 m^{2}") == ("area", "m^2")
    assert answer_unit("12\\text{ m}") == ("length", "m")


def test_a_length_for_an_area_conflicts():
    question = "A square has side 4 cm. What is its area in square centimeters?"
    assert unit_conflict("16\\text{ cm}", "16", question) is not None
    assert unit_conflict("16\\text{ cm}^2", "16", question) is None
    assert status("So the area is $\\boxed{16 \\text{ cm}}$.", "16", "A1", question) != "correct"
    assert status("So the area is $\\boxed{16 \\text{ cm}^2}$.", "16", "A1", question) == "correct"


# Multi-part answers whose parts are named in words.
def test_parts_named_in_words_are_read_as_labelled_values():
    assert word_labelled("the sum is $9$ and the product is $20$") == [("sum", "9"), ("product", "20")]
    assert word_labelled("Sum: 9; Product: 20") == [("sum", "9"), ("product", "20")]
    assert word_labelled("width 3, height 5") == [("width", "3"), ("height", "5")]
    assert word_labelled("3, 5") is None
    assert word_labelled("x = 3, y = 5") is None
    assert named_value("first $x = 1$, so the width is $3$ and the height is $5$", "height") == "5"
    assert named_value("the height is not 5", "height") is None
    assert lettered_parts("(a) 12, (b) 30") == ["12", "30"]
    assert lettered_parts("(b) 12, (a) 30") is None


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("Thus, the answer is sum $=9$, product $=20$.", "sum 9, product 20", "correct"),
        ("Hence: **Product: 20; Sum: 9**", "sum 9, product 20", "correct"),
        ("So the answer is the sum is $9$ and the product is $20$.", "sum 9, product 20", "correct"),
        ("The answer is $4 + 5 = 9$, so the sum is $9$ and the product is $20$.", "sum 9, product 20", "correct"),
        ("So the answer is the sum is $20$ and the product is $9$.", "sum 9, product 20", "incorrect"),
        ("So the answer is the product is $20$.", "sum 9, product 20", "incorrect"),
        ("Hence: **sum = 9, product = 20**", "(a) 9, (b) 20", "correct"),
        ("Hence: **sum = 20, product = 9**", "(a) 9, (b) 20", "incorrect"),
    ],
)
def test_multi_part_answers_in_words(completion, reference, expected):
    assert status(completion, reference, "A8") == expected


# Number forms.
def test_numbers_in_text_wrappers_and_e_notation():
    assert plain_number("\\text{36}") == "36"
    assert plain_number("\\mathrm{2,500}") == "2500"
    assert plain_number("3.5e-4") == "3.5\\times 10^{-4}"
    assert plain_number("7E3") == "7\\times 10^{3}"
    assert plain_number("2e") == "2e"
    assert plain_number("\\text{abc}") == "\\text{abc}"
    assert status("The answer is **$\\text{36}$**.", "36", "A1") == "correct"
    assert status("The answer is $\\boxed{\\text{37}}$.", "36", "A1") == "incorrect"
    assert status("The answer is $\\boxed{3.5e-4}$.", "3.5\\times 10^{-4}", "A3") == "correct"
    assert status("The answer is $\\boxed{3.5e-3}$.", "3.5\\times 10^{-4}", "A3") == "incorrect"
    assert status("The answer is $\\boxed{\\text{180}}$.", "180^\\circ", "A6") == "correct"


# Option letters against option values.
@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("Final answer: $\\sqrt{x}$", "B", "correct"),
        ("Final answer: $x^2$", "B", "incorrect"),
        ("Final answer: $\\boxed{\\text{(B) } \\sqrt{x}}$", "So the answer follows. Therefore: B.", "correct"),
    ],
)
def test_option_values_and_letters(completion, reference, expected):
    question = "Which grows slowest? (A) $x^2$ (B) $\\sqrt{x}$ (C) $2^x$ (D) $x$"
    assert status(completion, reference, "C1", question) == expected


def test_an_option_value_shared_by_two_options_once_normalised_names_neither():
    question = "Pick one: (A) $x$ (B) $\\ln x$ (C) $e^x$"
    assert status("Final answer: $\\ln x$", "B", "C1", question) == "correct"
    assert status("Final answer: $x$", "A", "C1", question) == "correct"


# A concluding word and a colon introduce the answer.
@pytest.mark.parametrize(
    ("completion", "reference", "answer_type"),
    [
        ("Solve $x^2 < 9$ by factoring.\n\nHence: (-3, 3)", "(-3, 3)", "B3"),
        ("The roots are found by factoring.\n\nTherefore: $1, 4$", "1, 4", "A8"),
        ("Compute the sum.\n\nThus: **45**", "45", "A1"),
    ],
)
def test_a_concluding_colon_line_gives_the_answer(completion, reference, answer_type):
    assert status(completion, reference, answer_type) == "correct"


def test_a_concluding_colon_line_in_a_reference_gives_its_answer():
    question = "Which are even? (A) 2 (B) 3 (C) 4 (D) 5"
    reference = "Even numbers are divisible by 2; 3 and 5 are not. Therefore: A, C."
    assert status("The answer is C, A.", reference, "C2", question) == "correct"
    assert status("The answer is A.", reference, "C2", question) == "incorrect"
    assert extract_final_answer("The steps are done. Hence: $[1, 2)$") == "[1, 2)"


# Short text answers in another word form.
@pytest.mark.parametrize(
    ("predicted", "reference", "semantic", "expected"),
    [
        ("Euclid's algorithm", "Euclidean algorithm", False, "correct"),
        ("the algorithm of Euclid", "Euclidean algorithm", False, "correct"),
        ("the orthocentre", "orthocenter", False, "correct"),
        ("Euclidean geometry", "Euclidean algorithm", False, "incorrect"),
        ("the algorithm of Euclid", "Euclidean geometry", False, "incorrect"),
        ("Converges", "The series converges.", True, "correct"),
        ("Converges", "The series diverges.", True, "incorrect"),
        ("Converges", "Both series converge.", True, "inconclusive"),
        ("Converges", "Conditionally converges.", True, "inconclusive"),
        ("True", "Sometimes true.", True, "inconclusive"),
        ("the series converges (its terms shrink fast enough)", "The series converges.", True, "correct"),
        ("the series converges (it does not converge)", "The series converges.", True, "inconclusive"),
    ],
)
def test_short_text_answers_in_another_word_form(predicted, reference, semantic, expected):
    assert compare_strings(predicted, reference, semantic=semantic).status == expected


def test_an_aside_that_hedges_is_not_an_explanation():
    reference = "The series converges."
    assert status("The answer is: the series converges (or maybe it diverges).", reference, "D2") == "inconclusive"
    assert status("The answer is: the series converges (its terms shrink fast).", reference, "D2") == "correct"


def test_a_sentence_reference_with_a_number_is_not_compared_as_math():
    assert status(
        "The answer is: a vertical line 2 units right of the y-axis.", "A vertical line through (2, 0)", "D2"
    ) == ("inconclusive")


# A power of a variable in an exponent is cheap to evaluate; a tower of numbers is not.
def test_bounded_exponent_towers_are_evaluated():
    check_cost("e^{x^2} + C")
    check_cost("e^{-x^{2}/2}")
    for text in ("2^{3^{4}}", "x^{x^{x^{x}}}", "2^{x^{40}}"):
        with pytest.raises(TooExpensive):
            check_cost(text)
    assert status("So $\\boxed{e^{x^{2}} + C}$.", "e^{x^2}+C", "B1") == "correct"
    assert status("So $\\boxed{e^{x^{3}} + C}$.", "e^{x^2}+C", "B1") == "incorrect"


# An integration constant written first is the same constant.
@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("So $\\boxed{C + \\sin x}$.", "\\sin x + C", "correct"),
        ("So $\\boxed{\\sin x + C}$.", "C + \\sin x", "correct"),
        ("So $\\boxed{C + \\cos x}$.", "\\sin x + C", "incorrect"),
        ("So $\\boxed{C + e^{x^2}}$.", "e^{x^2}+C", "correct"),
    ],
)
def test_a_leading_integration_constant(completion, reference, expected):
    assert status(completion, reference, "B1") == expected
