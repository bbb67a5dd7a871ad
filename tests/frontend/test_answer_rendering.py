"""Short answers render as math whether or not they came with delimiters; doubled backslashes are undone."""

from __future__ import annotations

import pytest

from frontend.rendering import (
    as_math_source,
    final_answer_span,
    render_answer,
    render_explanation,
    render_with_final_answer,
    undouble_backslashes,
)


@pytest.mark.parametrize(
    ("answer", "source"),
    [
        (r"\frac{\pi}{2}", r"$\frac{\pi}{2}$"),
        (r"x^2+1", r"$x^2+1$"),
        (r"432_5", r"$432_5$"),
        (r"\begin{pmatrix} 1 & 8 \\ 0 & 9 \end{pmatrix}", "$$\n\\begin{pmatrix} 1 & 8 \\\\ 0 & 9 \\end{pmatrix}\n$$"),
        ("\\\\frac{1}{2}", r"$\frac{1}{2}$"),
        ("\\\\begin{pmatrix} 2 \\\\\\\\ 3 \\\\end{pmatrix}", "$$\n\\begin{pmatrix} 2 \\\\ 3 \\end{pmatrix}\n$$"),
        (r"$\frac{7}{3}$", r"$\frac{7}{3}$"),
        (r"\(\pi r^2\)", r"\(\pi r^2\)"),
        ("30", "30"),
        ("All bloops are lazzies.", "All bloops are lazzies."),
        (r"\text{Fundamental Theorem of Algebra}", r"$\text{Fundamental Theorem of Algebra}$"),
        (r"\text{The sequence converges to } 0", r"$\text{The sequence converges to } 0$"),
        (r"x = 3,\ x = 1", r"$x = 3,\ x = 1$"),
        (
            r"The answer \boxed{3} holds since \frac{a}{b} is whole.",
            r"The answer $\boxed{3}$ holds since $\frac{a}{b}$ is whole.",
        ),
    ],
)
def test_bare_tex_answers_get_delimiters_and_the_rest_is_kept(answer, source):
    assert as_math_source(answer) == source


def test_rendered_answers_hold_their_tex_in_inert_math_elements():
    assert render_answer(r"\frac{\pi}{2}") == '<p><span class="math" data-display="inline">\\frac{\\pi}{2}</span></p>\n'
    html = render_answer(r"\begin{pmatrix} 1 & 8 \\ 0 & 9 \end{pmatrix}")
    assert html.startswith('<div class="math" data-display="block">\\begin{pmatrix} 1 &amp; 8 \\\\ 0')
    assert "<script" not in render_answer("<script>alert(1)</script> \\frac12")


def test_only_text_whose_every_command_is_doubled_is_undoubled():
    assert undouble_backslashes("\\\\frac{1}{2} + \\\\sqrt{2}") == r"\frac{1}{2} + \sqrt{2}"
    matrix = r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}"
    assert undouble_backslashes(matrix) == matrix
    assert undouble_backslashes(r"a \\ b") == r"a \\ b"


def test_explanations_render_their_bare_tex_as_math_and_are_cut():
    html = render_explanation("The model says \\\\frac{1}{2} but the reference is \\\\sqrt{2}.")
    assert html == (
        '<p>The model says <span class="math" data-display="inline">\\frac{1}{2}</span> but the reference '
        'is <span class="math" data-display="inline">\\sqrt{2}</span>.</p>\n'
    )
    assert "…" in render_explanation("word " * 200, limit=50)


@pytest.mark.parametrize(
    "text",
    [
        "Thus $$\\boxed{42}$$",
        "Hence \\[\\boxed{x=1}\\]",
    ],
)
def test_a_final_answer_in_display_math_inside_a_paragraph_is_highlighted_as_a_block(text):
    html = render_with_final_answer(text, final_answer_span(text))
    assert (
        '<mark class="final-answer final-answer-display" id="final-answer"><span class="math" data-display="block">'
        in html
    )


def test_inline_final_answers_keep_the_inline_mark():
    text = "Answer: $\\boxed{3}$."
    html = render_with_final_answer(text, final_answer_span(text))
    assert '<mark class="final-answer" id="final-answer"><span class="math" data-display="inline">' in html
