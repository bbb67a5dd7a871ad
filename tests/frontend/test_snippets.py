"""One-line previews of untrusted text: formulas typeset whole, nothing executable, length bounded."""

import pytest
from django.template import Context, Template

from frontend.rendering import render_snippet


def test_inline_formula_becomes_a_math_element():
    html = render_snippet(r"Question 2: compute $\int_0^{2} 2x\,dx$.", 90)
    assert html == r'Question 2: compute <span class="math" data-display="inline">\int_0^{2} 2x\,dx</span>.'


def test_a_formula_across_the_limit_is_kept_whole_when_it_ends_soon_after():
    text = "Evaluate " + r"$\frac{1}{2} + \frac{1}{3}$" + " and then a long tail of words" * 5
    html = render_snippet(text, 15)
    assert r'<span class="math" data-display="inline">\frac{1}{2} + \frac{1}{3}</span>' in html
    assert html.endswith("\u2026")


def test_a_long_formula_across_the_limit_is_dropped_rather_than_cut():
    text = "Evaluate $" + "x+" * 200 + "1$ please"
    html = render_snippet(text, 20)
    assert html == "Evaluate\u2026"
    assert "$" not in html


def test_display_math_is_shown_inline_and_lines_are_joined():
    html = render_snippet("Find\n\n$$x^2 = 4$$\n\nfor x.", 100)
    assert html == 'Find <span class="math" data-display="inline">x^2 = 4</span> for x.'


@pytest.mark.parametrize(
    "hostile",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "[click](javascript:alert(1))",
        "$</span><script>alert(1)</script>$",
    ],
)
def test_nothing_executable_survives(hostile):
    html = render_snippet(hostile, 200)
    assert "<script" not in html and "<img" not in html and 'href="javascript' not in html


def test_template_filter_renders_and_tolerates_empty_values():
    template = Template("{% load snippets %}[{{ text|math_snippet:40 }}][{{ missing|math_snippet:40 }}]")
    out = template.render(Context({"text": r"Show $\sqrt{2}$ is irrational."}))
    assert out == r'[Show <span class="math" data-display="inline">\sqrt{2}</span> is irrational.][]'
