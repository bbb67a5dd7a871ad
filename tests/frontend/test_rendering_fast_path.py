"""The one-paragraph fast path of the final-answer highlight must give exactly what the general path gives."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontend import rendering
from frontend.rendering import final_answer, markdown
from grading.answercheck.extract import final_answer_span

TEXTS = [
    "We add the numbers.\n\nSo the answer is $\\boxed{42}$.",
    "Intro with a [link](https://example.org).\n\nThus **the answer** is $\\boxed{\\frac{1}{2}}$ indeed.",
    "# Heading\n\nSome $x^2$ work.\n\n## Final answer: $\\boxed{7}$",
    "Line one\nline two with $a+b$ and \\(c\\) then \\boxed{x = 3} end.",
    "Text\n\n$$\n\\boxed{5}\n$$\n",
    "- item one\n- the answer is \\boxed{B}\n",
    "> quoted\n> Final answer: 12\n",
    "Code `\\boxed{1}` and then the answer is $\\boxed{2}$.",
    "Multi\nline\n\nparagraph *with emphasis* then\n**Answer:** (C)",
    "Ends with a table\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nThe answer is $\\boxed{3}$",
    "[ref]: https://example.org\n\nSee [ref] and $\\boxed{9}$.",
]


def general(text, span):
    start, end = span
    text = markdown.neutralise_sentinels(text)
    start = final_answer._skip_block_markers(text, start, end)
    return markdown.sanitize_html(final_answer._highlight_by_reparsing(text, start, end))


@pytest.mark.parametrize("text", TEXTS)
def test_fast_path_matches_general_path(text):
    span = final_answer_span(text)
    assert span is not None
    assert str(rendering.render_with_final_answer(text, span)) == general(text, span)
    assert 'id="final-answer"' in str(rendering.render_with_final_answer(text, span))


@settings(max_examples=200, deadline=None)
@given(
    paragraphs=st.lists(
        st.sampled_from(
            [
                "Plain words here.",
                "Math $x_1 + y$ inline.",
                "Display\n$$a=b$$",
                "**bold** and _em_",
                "- a\n- b",
                "1. one\n2. two",
                "> quote",
                "`code $x$`",
                "A \\(z\\) bracket.",
                "Line\nbreak $1$",
            ]
        ),
        min_size=0,
        max_size=4,
    ),
    ending=st.sampled_from(
        [
            "So $\\boxed{42}$.",
            "Final answer: 7",
            "The answer is $\\boxed{\\{1, 2\\}}$",
            "Answer: **(B)**",
            "\\boxed{x^2 - 1}",
            "Thus the result is $\\frac{3}{4}$.",
        ]
    ),
)
def test_fast_path_matches_general_path_on_generated_texts(paragraphs, ending):
    text = "\n\n".join(paragraphs + [ending])
    span = final_answer_span(text)
    if span is None:
        return
    assert str(rendering.render_with_final_answer(text, span)) == general(text, span)
