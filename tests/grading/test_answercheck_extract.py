import pytest

from grading.answercheck import extract_final_answer, final_answer_span


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"so the result is $\boxed{\frac{1}{2}}$.", r"\frac{1}{2}"),
        (r"first \boxed{3}, then corrected: \boxed{\{1,2\}}", r"\{1,2\}"),
        (r"nested \boxed{\frac{a}{\sqrt{b_{1}}}} end", r"\frac{a}{\sqrt{b_{1}}}"),
        (r"\fbox{7}", "7"),
        (r"\boxed 5", "5"),
        ("Final answer: 42.", "42"),
        ("Final Answer: The final answer is $\\frac{3}{4}$. I hope it is correct.", r"\frac{3}{4}"),
        ("**Answer:** (B)", "(B)"),
        ("**Answer:**\n\n$x = 2$", "x = 2"),
        ("The answer is $x=3$.", "x=3"),
        ("The answer is 3.14.", "3.14"),
        ("Thus the correct option is (C).", "(C)"),
        ("I compared all options.\n\nB", "B"),
        ("After checking, I pick option D because it fits.", "D"),
        ("nothing to see here", None),
        ("", None),
        (r"unclosed \boxed{3 and then text", None),
    ],
)
def test_extract_final_answer(text, expected):
    assert extract_final_answer(text) == expected


def test_span_points_into_the_raw_text():
    text = r"Reasoning... so we get $\boxed{x^2 + 1}$."
    start, end = final_answer_span(text)
    assert text[start:end] == "x^2 + 1"


def test_span_prefers_last_boxed_over_answer_phrase():
    text = "The answer is 4, wait, no.\n\n$\\boxed{5}$"
    start, end = final_answer_span(text)
    assert text[start:end] == "5"


def test_span_is_none_without_answer():
    assert final_answer_span("I am not sure how to proceed") is None
