"""Completions as reasoning models and word problems write them: a `<think>` section folded with its length, the
final answer highlighted wherever it is, and a currency dollar sign kept as text instead of opening a formula."""

from __future__ import annotations

import re

import pytest

from frontend.rendering import final_answer_span, render_completion, render_markdown
from frontend.rendering.reasoning import reasoning_section


def formulas(html: str) -> list[str]:
    return re.findall(r'<span class="math" data-display="inline">(.*?)</span>', html)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("She pays $120 each week, so in 3 weeks she pays $360.", []),
        ("She pays $120 each week, i.e. $x$ dollars with $x=120$.", ["x", "x=120"]),
        ("$5 per hour for $h$ hours", ["h"]),
        ("It costs $2.50, and we have $\\frac{1}{2}$ left", ["\\frac{1}{2}"]),
        ("The pen costs $5 and the book costs $ 7 more.", []),
        ("Profit is $1,200 - $800 = $400.", []),
        # formulas that start with a number stay formulas
        ("So $2 \\text{ apples and } 3$ and $12$ and $3x + 2y$", ["2 \\text{ apples and } 3", "12", "3x + 2y"]),
        ("$5 \\cdot 3 = 15$ so $15$ in all", ["5 \\cdot 3 = 15", "15"]),
        ("Let $2 < x < 5$ hold", ["2 &lt; x &lt; 5"]),
    ],
)
def test_a_dollar_sign_before_an_amount_in_running_prose_is_currency(text, expected):
    html = str(render_markdown(text))
    assert formulas(html) == expected, html
    assert "<em>" not in html


def test_a_closed_reasoning_section_is_folded_with_its_length_and_the_answer_after_it_is_highlighted():
    thinking = "Let me compute $2+2$. " * 40
    text = f"<think>{thinking}</think>\n\nThe answer is $\\boxed{{4}}$."
    html = str(render_completion(text, final_answer_span(text)))
    assert html.startswith('<details class="reasoning" data-reasoning>')
    assert f"({len(thinking.strip()):,} characters)" in html
    assert "&lt;think&gt;" not in html and "think>" not in html
    fold_end = html.index("</details>")
    assert html.index('id="final-answer"') > fold_end
    assert " open" not in html[: html.index(">")]


def test_a_completion_with_only_the_closing_tag_reasons_from_its_start():
    text = "Okay, so we need x. Try $x=3$: works.\n</think>\nFinal: $x = 3$"
    section = reasoning_section(text)
    assert (section.start, section.body_start, section.closed) == (0, 0, True)
    html = str(render_completion(text, final_answer_span(text)))
    assert html.index("<details") == 0 and "Final:" in html[html.index("</details>") :]


def test_an_answer_that_never_left_the_reasoning_is_highlighted_inside_the_fold():
    text = "<think>We get $7$. So the answer is $\\boxed{7}$"
    span = final_answer_span(text)
    assert span is not None
    html = str(render_completion(text, span))
    assert "data-holds-answer" in html and "never closed" in html
    assert html.index('id="final-answer"') < html.index("</details>")


def test_a_completion_without_reasoning_renders_as_before_and_an_empty_section_disappears():
    plain = "We add: $1+1=2$. The answer is $\\boxed{2}$."
    assert "<details" not in str(render_completion(plain, final_answer_span(plain)))
    empty = "<think>\n</think>The answer is 5."
    html = str(render_completion(empty, None))
    assert "<details" not in html and "think" not in html and "The answer is 5." in html


def test_markup_in_a_reasoning_section_stays_inert():
    text = "<think><script>alert(1)</script><img src=x onerror=alert(1)> $x$</think>Answer: 1"
    html = str(render_completion(text, None))
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;" in html
