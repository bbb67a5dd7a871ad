"""Answer forms: retracted answers and concluding "Hence:" lines; numbers in text wrappers or E-notation, powers of a variable in an exponent."""

import pytest

from grading.answercheck import verify
from grading.answercheck.extract import extract_final_answer
from grading.answercheck.normalize import plain_number
from grading.answercheck.parsing import TooExpensive, check_cost


def status(completion, reference, answer_type=None, question=None):
    return verify(completion, reference, answer_type=answer_type, question=question).status


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


# A power of a variable in an exponent is cheap to evaluate; a tower of numbers is not.
def test_bounded_exponent_towers_are_evaluated():
    check_cost("e^{x^2} + C")
    check_cost("e^{-x^{2}/2}")
    for text in ("2^{3^{4}}", "x^{x^{x^{x}}}", "2^{x^{40}}"):
        with pytest.raises(TooExpensive):
            check_cost(text)
    assert status("So $\\boxed{e^{x^{2}} + C}$.", "e^{x^2}+C", "B1") == "correct"
    assert status("So $\\boxed{e^{x^{3}} + C}$.", "e^{x^2}+C", "B1") == "incorrect"
