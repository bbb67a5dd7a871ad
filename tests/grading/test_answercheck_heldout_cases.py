"""One test per class of verifier failure found on the held-out set (fixtures/verifier_heldout.jsonl)."""

import pytest

from grading.answercheck import BatchItem, verify, verify_batch
from grading.answercheck.core import hedged, numeric_wording

REASONING = "Let me work through this step by step.\n\nThe setup gives the key relation, and simplifying it carefully leads to the result.\n\n"


def status(completion, reference, answer_type, question=None):
    return verify(REASONING + completion, reference, answer_type=answer_type, question=question).status


@pytest.mark.parametrize(
    ("completion", "reference", "answer_type", "expected"),
    [
        ("So there are $28$ handshakes in total.", "28", "A1 - Integer", "correct"),
        ("So there are $56$ handshakes in total.", "28", "A1 - Integer", "incorrect"),
        ("Hence the largest total number of items she can buy is $16$ items.", "16", "A1 - Integer", "correct"),
        ("So the ratio of juice to water is now $2:4$.", "1:2", "A3 - Fraction/Float", "correct"),
        ("The final result is $135 \\text{ degrees}$.", "135^\\circ", "A6 - Angle", "correct"),
        ("Hence the result is $\\frac{\\pi^2}{24}$.", "\\frac{\\pi^2}{24}", "A2 - Constant", "correct"),
        ("Hence the result is $\\frac{\\pi^2}{8}$.", "\\frac{\\pi^2}{24}", "A2 - Constant", "incorrect"),
    ],
)
def test_a_closing_sentence_or_result_phrase_states_the_answer(completion, reference, answer_type, expected):
    assert status(completion, reference, answer_type) == expected


def test_a_closing_sentence_with_two_pieces_of_math_is_not_read_as_one_answer():
    assert status("So the value is $4$ or $6$ depending on the case.", "4", "A1 - Integer") == "inconclusive"


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (
            "A first pass gives $\\boxed{\\frac{n(n+1)(2n-1)}{6}}$.\n\nWait, that fails for $n=2$.\n\nAnswer: $\\frac{n(n+1)(2n+1)}{6}$",
            "correct",
        ),
        (
            "A first pass gives $\\boxed{\\frac{n(n+1)(2n+1)}{6}}$.\n\nWait, let me redo it.\n\nAnswer: $\\frac{n(n+1)(2n-1)}{6}$",
            "incorrect",
        ),
    ],
)
def test_an_explicit_answer_line_after_an_earlier_box_is_the_final_answer(completion, expected):
    assert status(completion, "\\frac{n(n+1)(2n+1)}{6}", "B1 - Algebraic formula") == expected


@pytest.mark.parametrize(
    ("completion", "reference", "answer_type"),
    [
        (
            "So the answer is $\\begin{pmatrix}-3\\\\6\\\\-3\\end{pmatrix}$, or possibly $(3, -6, 3)$ if the other reading is meant.",
            "\\begin{pmatrix}-3\\\\6\\\\-3\\end{pmatrix}",
            "B5 - Matrix/Vector",
        ),
        (
            "So the answer is $5\\pi$, or possibly $10\\pi$ if the other interpretation is intended.",
            "5\\pi",
            "A2 - Constant",
        ),
    ],
)
def test_an_answer_naming_several_candidates_is_never_correct(completion, reference, answer_type):
    assert status(completion, reference, answer_type) == "inconclusive"
    [batch_verdict] = verify_batch([BatchItem(REASONING + completion, reference, answer_type)])
    assert batch_verdict.status == "inconclusive"


def test_hedge_detection_leaves_single_answers_with_or_alone():
    assert hedged("$5\\pi$, or possibly $10\\pi$")
    assert not hedged("x = 2 \\text{ or } x = 3")


def test_a_matrix_followed_by_more_text_is_not_read_as_that_matrix():
    completion = "Answer: $\\begin{pmatrix}1\\\\2\\end{pmatrix}$ and also $(2, 1)$ works"
    assert status(completion, "\\begin{pmatrix}1\\\\2\\end{pmatrix}", "B5 - Matrix/Vector") != "correct"


QUESTION_EVEN = "Which of the following numbers are even? Select all that apply.\n(A) 4\n(B) 7\n(C) 10\n(D) 15\n(E) 22"


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("The even numbers are 4, 10 and 22, i.e. options (A), (C) and (E).", "correct"),
        ("So the even ones are A and C.", "incorrect"),
        ("Options (A), (C) and (E) are even.", "correct"),
        ("Options (A), (C), (D) and (E) are even.", "incorrect"),
    ],
)
def test_multi_select_letters_named_together_in_a_sentence(completion, expected):
    assert status(completion, "A, C, E", "C2 - Multiple Choice", QUESTION_EVEN) == expected


@pytest.mark.parametrize(
    ("answer", "reference", "question", "expected"),
    [
        ("0.38", "0.375", "What is the probability that it is red?", "incorrect"),
        ("0.38", "0.375", "What is the probability, rounded to the nearest hundredth?", "correct"),
        ("0.966", "\\frac{\\sqrt{6}+\\sqrt{2}}{4}", "Find the exact value of $\\cos 15^\\circ$.", "incorrect"),
        ("0.333", "\\frac{1}{3}", "What fraction of the balls are red?", "correct"),
        ("0.375", "0.375", "What is the probability that it is red?", "correct"),
    ],
)
def test_rounded_answers_count_only_when_the_reference_and_question_allow_it(answer, reference, question, expected):
    assert (
        status(f"Therefore, the final answer is $\\boxed{{{answer}}}$.", reference, "A3 - Fraction/Float", question)
        == expected
    )


def test_an_unreduced_fraction_is_wrong_when_lowest_terms_are_asked():
    question = "Write the repeating decimal $0.\\overline{36}$ as a fraction in lowest terms."
    assert (
        status("So the answer is $\\boxed{\\frac{12}{33}}$.", "\\frac{4}{11}", "A3 - Fraction/Float", question)
        == "incorrect"
    )
    assert (
        status("So the answer is $\\boxed{\\frac{4}{11}}$.", "\\frac{4}{11}", "A3 - Fraction/Float", question)
        == "correct"
    )
    assert (
        status("So the answer is $\\boxed{\\frac{12}{33}}$.", "\\frac{4}{11}", "A3 - Fraction/Float", "What is 12/33?")
        == "correct"
    )


def test_batch_and_single_verification_read_the_question_wording_alike():
    question = "Find the exact value of $\\cos 15^\\circ$."
    item = BatchItem(REASONING + "Answer: $0.966$", "\\frac{\\sqrt{6}+\\sqrt{2}}{4}", "A4 - Radical", question)
    [batch_verdict] = verify_batch([item])
    assert (
        batch_verdict.status
        == verify(item.completion, item.reference, answer_type=item.answer_type, question=question).status
        == "incorrect"
    )
    assert numeric_wording("Spend exactly $52.") is None


def test_a_remainder_written_with_its_modulus():
    assert status("Hence the result is $9 \\pmod{13}$.", "9", "A1 - Integer") == "correct"
    assert status("Hence the result is $12 \\pmod{13}$.", "9", "A1 - Integer") == "incorrect"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [("y = \\frac{x^2}{8}", "correct"), ("y = \\frac{x^2}{2}", "incorrect"), ("y^2 = 8x", "incorrect")],
)
def test_equations_with_fractions(answer, expected):
    assert status(f"Answer: ${answer}$", "x^2=8y", "B2 - Equation") == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("x \\le -1 \\text{ or } x \\ge 5", "correct"),
        ("x < -1 \\text{ or } x > 5", "incorrect"),
        ("x \\ge -1 \\text{ and } x \\le 5", "incorrect"),
    ],
)
def test_inequalities_joined_by_or_and_and(answer, expected):
    assert status(f"Hence the result is ${answer}$.", "(-\\infty,-1]\\cup[5,\\infty)", "B3 - Interval") == expected


def test_inequalities_joined_by_and_describe_their_intersection():
    assert status("Hence the result is $x > -2 \\text{ and } x < 3$.", "(-2,3)", "B3 - Interval") == "correct"
