"""Short answers render as math whether or not they came with delimiters; doubled backslashes are undone; the answers
a verifier quotes in its explanations render as math inside their quotes."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from frontend.rendering import (
    as_math_source,
    final_answer_span,
    render_answer,
    render_explanation,
    render_with_final_answer,
    sanitize_html,
    undouble_backslashes,
)
from frontend.rendering.answers import explanation_source, unrepr_quoted
from grading.answercheck import verify

from .helpers import VISIBLE_TEXT, typeset_in_page


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


# Explanations as the rule-based verifier writes them: answers quoted with Python's repr, so backslashes are doubled
# inside the quotes and single outside; a double-quoted repr for an answer with an apostrophe or a prime.
VERIFIER_EXPLANATIONS = [
    "extracted '\\\\begin{pmatrix} 1 & 8 \\\\\\\\ 0 & 9 \\\\end{pmatrix}' from the completion and '80^\\\\circ' from the "
    "reference; compared as B5 (given): identical after removing presentation",
    "extracted '\\\\frac{4\\\\pi}{9}' from the completion and '80^\\\\circ' from the reference; compared as A6 (given): "
    "\\frac{4\\pi}{9} radians equals 80 degrees",
    "extracted '\\\\frac{1}{6}' from the completion and '\\\\frac{5}{36}' from the reference; compared as A3 (given): "
    "'\\\\frac{1}{6}' = 0.1666666667 differs from '\\\\frac{5}{36}' = 0.1388888889",
    "extracted '\\\\begin{pmatrix} 1 & 4 \\\\\\\\ 0 & 9 \\\\end{pmatrix}' from the completion and "
    "'\\\\begin{pmatrix} 1 & 8 \\\\\\\\ 0 & 9 \\\\end{pmatrix}' from the reference; compared as B5 (given): "
    "component 2: '4' vs '8': '4' = 4 differs from '8' = 8",
    "extracted '\\\\{-1, 0, 1, 2, 3, 4\\\\}' from the completion and '\\\\{0,1,2,3\\\\}' from the reference; compared as "
    "B4 (given): 6 value(s) given, 4 expected: ['-1', '0', '1', '2', '3', '4'] vs ['0', '1', '2', '3']",
    "extracted 'x = 3,\\\\ x = 1,\\\\ x = 2' from the completion and '1, 2, 3' from the reference; compared as A8 "
    "(given): the same 3 value(s) in any order",
    "extracted '\\\\text{Fundamental Theorem of Calculus}' from the completion and 'Fundamental Theorem of Algebra' "
    "from the reference; compared as D1 (given): 'fundamental theorem of calculus' does not contain the required "
    "wording 'fundamental theorem of algebra'",
    "extracted \"\\\\text{Bézout's theorem}\" from the completion and 'Fundamental Theorem of Algebra' from the "
    "reference; compared as D1 (given): 'bézout s theorem' does not contain the required wording "
    "'fundamental theorem of algebra'",
    'extracted "f\'(x) = \\\\frac{1}{x}" from the completion and "f\'(x)=\\\\frac{1}{x}" from the reference; '
    "compared as B2 (given): identical after removing presentation",
    "extracted '\\\\left[\\\\begin{matrix} 1 & 8 \\\\\\\\ 0 & 9 \\\\end{matrix}\\\\right]' from the completion and "
    "'\\\\begin{pmatrix} 1 & 8 \\\\\\\\ 0 & 9 \\\\end{pmatrix}' from the reference; compared as B5 (given): all 4 "
    "entries match",
    "the completion offers several candidate answers ('x = 1 \\\\text{ or } x = 2'); type A1 (detected)",
    "extracted '(-2, 3)' from the completion and '(-\\\\infty,-2)\\\\cup(3,\\\\infty)' from the reference; compared as "
    "B3 (given): answer Interval.open(-2, 3) differs from reference Union(Interval.open(-oo, -2), "
    "Interval.open(3, oo)) (endpoints or open/closed ends)",
    "extracted '2xe^{2x} + 2x^2e^{2x}' from the completion and '2x e^{2x}(x+1)' from the reference; compared as B1 "
    "(given): '2xe^{2x} + 2x^2e^{2x}' and '2x e^{2x}(x+1)' agree numerically at 8 random points",
    "no final answer found in the completion; type B5 (detected)",
]


_REPR_DOUBLED = re.compile(r"\\\\[a-zA-Z]")


class _MathAndText(HTMLParser):
    """The TeX of each math element and the text around them, which shows as it is."""

    def __init__(self):
        super().__init__()
        self.formulas: list[str] = []
        self.text: list[str] = []
        self.tags: list[tuple[str, dict]] = []
        self._math_depth = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if self._math_depth or "math" in (dict(attrs).get("class") or "").split():
            self._math_depth += 1
            if self._math_depth == 1:
                self.formulas.append("")

    def handle_endtag(self, tag):
        if self._math_depth:
            self._math_depth -= 1

    def handle_data(self, data):
        if self._math_depth:
            self.formulas[-1] += data
        else:
            self.text.append(data)


def parse(html: str) -> _MathAndText:
    parsed = _MathAndText()
    parsed.feed(html)
    return parsed


def math_and_text(html: str) -> tuple[list[str], str]:
    parsed = parse(html)
    return parsed.formulas, "".join(parsed.text)


@pytest.mark.parametrize("explanation", VERIFIER_EXPLANATIONS)
def test_the_answers_a_verifier_quotes_render_as_math_inside_their_quotes(explanation):
    formulas, text = math_and_text(render_explanation(explanation))
    assert "\\" not in text, text  # no raw \begin, \frac or doubled backslash outside the formulas
    for formula in formulas:
        assert not _REPR_DOUBLED.search(formula) and formula.count("{") == formula.count("}"), formula
        assert not formula.startswith(("'", '"')) and not formula.endswith(("'", '"')), formula


@pytest.mark.parametrize(
    ("completion", "reference", "answer_type"),
    [
        (
            "So $\\boxed{\\begin{pmatrix} 1 & 4 \\\\ 0 & 9 \\end{pmatrix}}$",
            "\\begin{pmatrix} 1 & 8 \\\\ 0 & 9 \\end{pmatrix}",
            "B5",
        ),
        ("The angle is $\\boxed{\\frac{4\\pi}{9}}$.", "80^\\circ", "A6"),
        ('$\\boxed{\\text{Bézout\'s "little" theorem}}$', "Fundamental Theorem of Algebra", "D1"),
        ("$\\boxed{f'(x) = \\frac{1}{x}}$", "f'(x)=\\frac{1}{x}", "B2"),
        ("It is $\\boxed{x = 1 \\text{ or } x = 2}$ or maybe $\\boxed{3}$", "3", "A1"),
        ("$\\boxed{\\{0, 1, 2, 3, 4\\}}$", "\\{0,1,2,3\\}", "B4"),
    ],
)
def test_explanations_the_verifier_writes_now_render_without_raw_tex(completion, reference, answer_type):
    explanation = verify(completion, reference, answer_type=answer_type).explanation
    assert "'" in explanation or '"' in explanation  # it quotes the answers
    formulas, text = math_and_text(render_explanation(explanation))
    assert formulas and "\\" not in text, (explanation, text)
    assert not any(_REPR_DOUBLED.search(formula) for formula in formulas), (explanation, formulas)


def test_the_example_matrix_and_angle_become_two_formulas_quoted_as_before():
    formulas, text = math_and_text(render_explanation(VERIFIER_EXPLANATIONS[0]))
    assert formulas == ["\\begin{pmatrix} 1 & 8 \\\\ 0 & 9 \\end{pmatrix}", "80^\\circ"]
    assert text.startswith("extracted '' from the completion and '' from the reference; compared as B5")


@pytest.mark.parametrize(
    ("quoted", "written"),
    [
        ("\\\\frac{1}{2}", "\\frac{1}{2}"),
        ("\\\\begin{pmatrix} 1 \\\\\\\\ 2 \\\\end{pmatrix}", "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}"),
        ("\\\\begin{pmatrix} 1 \\\\\\\\\\n 2 \\\\end{pmatrix}", "\\begin{pmatrix} 1 \\\\  2 \\end{pmatrix}"),
        ('\\\\text{Bézout\\\'s "theorem"}', '\\text{Bézout\'s "theorem"}'),
        ("it\\'s", "it's"),
        ("\\frac{1}{2}", "\\frac{1}{2}"),  # one backslash: not written by repr
        ("\\neq 0", "\\neq 0"),
        ("f'(x)", "f'(x)"),
    ],
)
def test_repr_escaping_is_undone_only_where_repr_wrote_it(quoted, written):
    assert unrepr_quoted(quoted) == written


@pytest.mark.parametrize(
    ("explanation", "source"),
    [
        ("the model's answer '\\frac{1}{2}' is right", "the model's answer '$\\frac{1}{2}$' is right"),
        ("the students' answers 'x^2' and \"f'(x)\" agree", "the students' answers '$x^2$' and \"f'(x)\" agree"),
        ("quoted '\\\\sqrt{2}'.", "quoted '$\\sqrt{2}$'."),
        ("both say 'no' (same word stem)", "both say 'no' (same word stem)"),
        ("The judge wrote $\\frac{1}{2}$ and 'x'", "The judge wrote $\\frac{1}{2}$ and 'x'"),
        ("candidates ('$\\\\boxed{1}$ or $\\\\boxed{2}$')", "candidates ('$\\boxed{1}$ or $\\boxed{2}$')"),
    ],
)
def test_explanation_sources_delimit_quoted_tex_and_keep_apostrophes_and_primes(explanation, source):
    assert explanation_source(explanation) == source


def test_a_cut_explanation_never_ends_inside_a_quoted_answer():
    explanation = VERIFIER_EXPLANATIONS[0]
    cut_inside_the_matrix = explanation.index("0 & 9")
    html = render_explanation(explanation, limit=cut_inside_the_matrix)
    formulas, text = math_and_text(html)
    assert formulas == [] and text.strip() == "extracted…"


@pytest.mark.parametrize(
    "explanation",
    [
        "extracted '<script>alert(1)</script>' from the completion and '\\\\frac{1}{2}' from the reference",
        "extracted '\\\\frac{<img src=x onerror=alert(1)>}{2}' from the completion",
        "extracted \"</span><img src=x onerror=alert(1)>\" from the completion and '<b onclick=alert(1)>x</b>'",
        "extracted '$</span><svg onload=alert(1)>$' from the completion",
    ],
)
def test_markup_quoted_in_an_explanation_stays_text(explanation):
    html = str(render_explanation(explanation))
    tags = parse(html).tags
    assert {tag for tag, _ in tags} <= {"p", "span"}, html
    assert all(set(attributes) <= {"class", "data-display"} for _, attributes in tags), html
    assert "alert(1)" in html  # shown as text
    assert sanitize_html(html) == html


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_verifier_explanations_typeset_in_the_browser_show_no_raw_tex(page, live_server, app_url, built_assets):
    page.goto(app_url("login"))
    page.wait_for_selector("html[data-math-ready='1']")
    html = "".join(
        f'<div class="prose" data-explanation="{index}">{render_explanation(explanation)}</div>'
        for index, explanation in enumerate(VERIFIER_EXPLANATIONS)
    )
    typeset_in_page(page, html, box_id="explanations")
    assert page.locator("#explanations .math-error").count() == 0
    assert page.locator("#explanations .katex").count() >= 20
    for index, explanation in enumerate(VERIFIER_EXPLANATIONS):
        shown = page.locator(f'[data-explanation="{index}"]').evaluate(VISIBLE_TEXT)
        assert "\\" not in shown, (explanation, shown)  # no raw \begin or \frac, no doubled backslash
