"""One group of tests per class of failure found on Math-Verify's own suite and on human-labeled rows."""

import pytest

from grading.answercheck import extract_final_answer, verify
from grading.answercheck.core import reference_final_answer
from grading.answercheck.normalize import plain_number, strip_labels


def status(completion, reference, answer_type=None, question=None):
    return verify(completion, reference, answer_type=answer_type, question=question).status


# 1. No answer marker: the last stated expression, or the whole text when it is only an answer.
@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("$[0,1)$", "$[0,1)$", "correct"),
        ("$[0,1)$", "$[0,9)$", "incorrect"),
        ("7,425,000", "7425000", "correct"),
        ("We find that $x \\lt 3$.", "$x<3$", "correct"),
        ("Therefore $x < 5$ is the solution.", "$x > 5$", "incorrect"),
        ("So the volume of the box is 120.", "120", "correct"),
        ("Therefore, the probability that Alice wins is 2/3. <|im_start|>user", "2/3", "correct"),
        ("the number is not 10 which is 1,000.99", "1000.99", "correct"),
    ],
)
def test_the_last_stated_expression_is_the_answer(completion, reference, expected):
    assert status(completion, reference) == expected


@pytest.mark.parametrize(
    "completion",
    [
        "Answer $ \n 9 \n $",  # inline math cannot span lines
        "Answer \\( \n 9 \n \\)",
        "Let me check: maybe it is 9, but wait.",
        "So the value is 9 or 10.",
        "Hmm, it is not 9.",
    ],
)
def test_no_answer_is_guessed_from_doubtful_or_broken_text(completion):
    assert status(completion, "9") != "correct"


# 2. Closing lines after the answer.
@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("The final answer is 14400. I hope it is correct.", "14400"),
        ("Final Answer: The largest $n$ is 34.", "34"),
        ("Final Answer: The final answer is $(0, 1)$. I hope it is correct. <|im_start|>user", "(0, 1)"),
    ],
)
def test_closing_remarks_are_not_part_of_the_answer(completion, expected):
    assert extract_final_answer(completion) == expected


# 3. References that are not bare answers.
@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("We compare the options one by one, and so the final answer is (B) 1.", "(B) 1"),
        ("\\boxed{1}\\boxed{2}", "1, 2"),
        ("$$\\boxed{2}, \\boxed{3}, \\boxed{5}$$", "2, 3, 5"),
        ("\\boxed{W(n) = 1 \\text{ and } W(n) = -1", "W(n) = 1 \\text{ and } W(n) = -1"),
        ("42", "42"),
    ],
)
def test_references_are_read_like_completions(reference, expected):
    assert reference_final_answer(reference, reference_is_solution=False) == expected


def test_a_run_of_boxes_in_the_reference_is_not_just_its_last_box():
    assert status("\\boxed{2}", "\\boxed{1}\\boxed{2}") == "incorrect"
    assert status("\\boxed{1, 2}", "\\boxed{1}\\boxed{2}") == "correct"


@pytest.mark.parametrize(
    ("labelled", "value"),
    [
        ("AB=4, CD=5", "4, 5"),
        ("(p,q)=(3,2)", "(3,2)"),
        ("S_{MBCN}:S=7:32", "7:32"),
        ("\\frac{NO}{BO}=\\frac{1}{\\sqrt{6}}", "\\frac{1}{\\sqrt{6}}"),
        ("p=5,q=2;p=7,q=2", "(5, 2), (7, 2)"),
        ("x = 5+5+1 = 7 = 11", "11"),
        ("y = 2x+1", "y = 2x+1"),
    ],
)
def test_labels_and_chains_give_their_value(labelled, value):
    assert strip_labels(labelled) == value


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("\\boxed{4, 5}", "AB=4, CD=5", "correct"),
        ("\\boxed{5, 4}", "AB=4, CD=5", "inconclusive"),
        ("\\boxed{4, 6}", "AB=4, CD=5", "incorrect"),
        ("\\boxed{7:32}", "S_{MBCN}:S=7:32", "correct"),
        ("\\boxed{\\frac{1}{\\sqrt{6}}}", "\\frac{NO}{BO}=\\frac{1}{\\sqrt{6}}", "correct"),
        ("\\boxed{a_{37} = 19, \\quad a_3 = 2}", "a_3 = 2, a_{37} = 19", "correct"),
        ("\\boxed{x = 1, y = 2}", "x=2, y=1", "incorrect"),
    ],
)
def test_labelled_references(completion, reference, expected):
    assert status(completion, reference) == expected


# 4. Number formats.
@pytest.mark.parametrize(
    ("written", "plain"),
    [
        ("7,425,000", "7425000"),
        ("1 000", "1000"),
        ("1000,99", "1000.99"),
        ("0,111", "0.111"),
        ("-2,1", "-2,1"),
        ("1,000.5", "1000.5"),
    ],
)
def test_digit_groupings_and_decimal_commas(written, plain):
    assert plain_number(written) == plain


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("\\boxed{11,\\!111,\\!111,\\!100}", "11111111100", "correct"),
        ("\\boxed{\\$16,\\!386.20}", "16386.20", "correct"),
        ("\\boxed{1 000}", "0", "incorrect"),
        ("\\boxed{1 000}", "1000", "correct"),
        ("\\boxed{1000,99}", "1000.99", "correct"),
        ("\\boxed{28}", "28\\%", "correct"),
        ("\\boxed{28 percent}", "28\\%", "correct"),
        ("\\boxed{0.28}", "28\\%", "correct"),
        ("\\boxed{29}", "28\\%", "incorrect"),
        ("\\boxed{28}", "0.28", "incorrect"),
        ("The answer is 100%.", "100%", "correct"),
    ],
)
def test_number_formats(completion, reference, expected):
    assert status(completion, reference) == expected


# 5. Choices: a letter stands for the option's text when the question lists options.
QUESTION = "What is 6 times 7?\n(A) 36\n(B) 42\n(C) 48\n(D) 54"


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("\\boxed{42}", "B", "correct"),
        ("\\boxed{48}", "B", "incorrect"),
        ("The answer is Option B.", "42", "correct"),
        ("The answer is (C).", "42", "incorrect"),
    ],
)
def test_option_letters_map_to_option_values_for_numeric_types(completion, reference, expected):
    assert status(completion, reference, "A1 - Integer", QUESTION) == expected


@pytest.mark.parametrize(
    ("completion", "expected"), [("A. Because B is not valid", "correct"), ("Because B is valid", "incorrect")]
)
def test_a_short_reply_naming_one_option(completion, expected):
    assert status(completion, "A", "C1 - Single Choice") == expected


# 6. States and yes/no.
@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("Final answer: Disproven", "disproved", "correct"),
        ("Final answer: Proved", "disproved", "incorrect"),
        ("**Conclusion:** the claim holds for all n. **Proved.**", "Proven", "correct"),
        ("**Conclusion:** the claim fails. **Disproved.**", "Proven", "incorrect"),
        ("Final answer: Yes, because the series converges absolutely.", "Yes", "correct"),
        ("Final answer: No, since 4 is even.", "Yes", "incorrect"),
    ],
)
def test_states(completion, reference, expected):
    assert status(completion, reference, "C3") == expected


# 7. Identical strings, sets with duplicates, lists, trailing remarks.
@pytest.mark.parametrize("answer", ["12:00", "f(y) = y", "D = (0, 1)", "20\\%", "f(2) < f(1) < f(4)"])
def test_an_answer_identical_to_the_reference_is_correct(answer):
    assert status(f"\\boxed{{{answer}}}", answer) == "correct"


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("\\boxed{1:00}", "12:00", "incorrect"),
        ("\\boxed{(3,17,3,7), (3,17,3,7), (3,3,2,3)}", "(3,17,3,7),(3,3,2,3)", "correct"),
        ("\\boxed{(3,17,3,7), (3,3,2,3)}", "(3,17,3,7),(3,3,2,3),(1,1,1,1)", "incorrect"),
        ("\\boxed{(x, y) = (5, 8) \\quad \\text{and} \\quad (8, 5)}", "(5, 8), (8, 5)", "correct"),
        ("\\boxed{\\{1\\pm\\sqrt{5},-2\\}}", "\\{1+\\sqrt{5}, 1-\\sqrt{5}, -2\\}", "correct"),
        ("\\boxed{\\frac{737}{39}\\;\\text{(about }18.9\\text{ cards)}}", "\\frac{737}{39}", "correct"),
        ("\\boxed{\\frac{737}{38}\\;\\text{(about }19.4\\text{ cards)}}", "\\frac{737}{39}", "incorrect"),
    ],
)
def test_sets_tuples_and_remarks(completion, reference, expected):
    assert status(completion, reference) == expected
