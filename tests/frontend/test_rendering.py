"""Markdown + TeX rendering: math delimiters, code, final-answer highlight, and untrusted input made inert."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from django.utils.safestring import SafeString

from frontend.rendering import ALLOWED_TAGS, FINAL_ANSWER_ID, render_markdown, render_with_final_answer


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.comments: list[str] = []
        self.math: list[tuple[str, str]] = []
        self._math_depth = 0
        self._math_text: list[str] = []
        self._math_display = ""
        self._stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.elements.append((tag, attributes))
        if tag in {"br", "hr"}:
            return
        self._stack.append(tag)
        if "math" in (attributes.get("class") or "").split() and not self._math_depth:
            self._math_depth = len(self._stack)
            self._math_display = attributes.get("data-display") or ""
            self._math_text = []

    def handle_endtag(self, tag):
        if self._stack:
            if self._math_depth and len(self._stack) == self._math_depth:
                self.math.append((self._math_display, "".join(self._math_text)))
                self._math_depth = 0
            self._stack.pop()

    def handle_data(self, data):
        if self._math_depth:
            self._math_text.append(data)

    def handle_comment(self, data):
        self.comments.append(data)


def parse(html: str) -> _Collector:
    collector = _Collector()
    collector.feed(str(html))
    collector.close()
    return collector


def math_of(html: str) -> list[tuple[str, str]]:
    return parse(html).math


def assert_inert(html: str) -> None:
    """Only allowlisted tags, no event handlers or styles, links only to http(s)/mailto with a safe rel."""
    collector = parse(html)
    assert not collector.comments
    for tag, attributes in collector.elements:
        assert tag in ALLOWED_TAGS, f"tag <{tag}> in {html!r}"
        for name, value in attributes.items():
            assert not name.startswith("on"), f"{name} on <{tag}>"
            assert name in {"href", "title", "class", "data-display", "id", "rel", "start"}, f"{name} on <{tag}>"
            if name == "class":
                assert set((value or "").split()) <= {"math", "final-answer", "final-answer-display"}
            if name == "id":
                assert value == FINAL_ANSWER_ID
        if tag == "a" and "href" in attributes:
            assert urlsplit(attributes["href"]).scheme in {"http", "https", "mailto"}, attributes["href"]
            assert attributes["rel"] == "noopener noreferrer nofollow"
    # Text may show these words (its "<" escaped as &lt;); a live tag may not.
    lowered = str(html).lower()
    for needle in ("<script", "<iframe", "<style", "<svg", "<img", "<object", "<embed", "<form", "<base", "<meta"):
        assert needle not in lowered, needle


# --- Math delimiters ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Let $x^2 + 1$ be given.", [("inline", "x^2 + 1")]),
        ("$$\\int_0^1 x\\,dx$$", [("block", "\\int_0^1 x\\,dx")]),
        ("$$\n\\frac{a}{b}\n$$", [("block", "\\frac{a}{b}")]),
        ("so $$a=b$$ inside a sentence", [("block", "a=b")]),
        ("Then \\(a+b\\) holds.", [("inline", "a+b")]),
        ("Then \\[c = d\\] in a paragraph.", [("block", "c = d")]),
        ("\\[\n a = b\n - c\n\\]", [("block", "a = b\n- c")]),
        (
            "\\begin{align}\na &= b \\\\\nc &= d\n\\end{align}",
            [("block", "\\begin{align}\na &= b \\\\\nc &= d\n\\end{align}")],
        ),
    ],
)
def test_every_delimiter_style_becomes_an_inert_math_element(text, expected):
    html = render_markdown(text)
    assert math_of(html) == expected
    assert_inert(html)


def test_result_is_a_safe_string():
    assert isinstance(render_markdown("plain"), SafeString)


def test_boxed_inside_math_is_kept_for_katex():
    html = render_markdown("The answer is $\\boxed{\\frac{1}{2}}$.")
    assert math_of(html) == [("inline", "\\boxed{\\frac{1}{2}}")]


def test_bare_boxed_outside_delimiters_becomes_math_with_nested_braces():
    html = render_markdown("Hence \\boxed{\\{1, 2\\} \\cup \\{x^{2}\\}} is the set.")
    assert math_of(html) == [("inline", "\\boxed{\\{1, 2\\} \\cup \\{x^{2}\\}}")]
    assert "is the set." in html


def test_math_keeps_markdown_characters_and_escapes_html():
    html = render_markdown("$a_1 * b_2 * c < d > e & f$")
    assert math_of(html) == [("inline", "a_1 * b_2 * c < d > e & f")]
    assert "&lt; d &gt; e &amp; f" in html
    assert "<em>" not in html


def test_latex_line_breaks_survive_in_display_math():
    html = render_markdown("$$\n\\begin{aligned} a &= 1 \\\\ b &= 2 \\end{aligned}\n$$")
    assert math_of(html) == [("block", "\\begin{aligned} a &= 1 \\\\ b &= 2 \\end{aligned}")]


def test_code_is_never_treated_as_math():
    text = "```python\nprice = '$5' + '$6'  # \\(x\\)\n```\n\nInline `$y$` and `\\[z\\]` and `\\boxed{1}`.\n\n    $indented$ code"
    html = render_markdown(text)
    assert math_of(html) == []
    assert "<pre><code>price = '$5' + '$6'  # \\(x\\)\n</code></pre>" in html
    assert "<code>$y$</code>" in html and "<code>\\[z\\]</code>" in html


def test_currency_and_escaped_dollars_stay_text():
    html = render_markdown("It costs $5 and $10 in total; \\$x\\$ is literal.")
    assert math_of(html) == []
    assert "$5 and $10" in html and "$x$ is literal" in html


def test_unclosed_delimiters_are_text():
    html = render_markdown("An unclosed $x and \\(y and\n\n$$ z")
    assert math_of(html) == []
    assert_inert(html)


def test_markdown_structure_still_renders():
    html = render_markdown("# Title\n\n- **bold** and *em*\n- ~~gone~~\n\n> quote\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    for fragment in (
        "<h1>Title</h1>",
        "<strong>bold</strong>",
        "<em>em</em>",
        "<s>gone</s>",
        "<blockquote>",
        "<table>",
        "<td>1</td>",
    ):
        assert fragment in html
    assert_inert(html)


def test_images_are_not_loaded_but_kept_as_links():
    html = render_markdown("![plot](https://example.org/plot.png)")
    assert "<img" not in html
    assert '<a href="https://example.org/plot.png" rel="noopener noreferrer nofollow">plot</a>' in html


def test_non_string_input_is_refused():
    with pytest.raises(TypeError):
        render_markdown(None)


# --- Final-answer highlight --------------------------------------------------------------------------


def highlighted(html: str) -> list[tuple[str, dict]]:
    return [(tag, attrs) for tag, attrs in parse(html).elements if attrs.get("id") == FINAL_ANSWER_ID]


def test_span_inside_inline_math_highlights_the_whole_formula():
    text = "We get $x = \\boxed{42}$.\n\nDone."
    start = text.index("42")
    html = render_with_final_answer(text, (start, start + 2))
    assert (
        '<mark class="final-answer" id="final-answer"><span class="math" data-display="inline">x = \\boxed{42}</span></mark>.'
        in html
    )
    assert math_of(html) == [("inline", "x = \\boxed{42}")]
    assert_inert(html)


def test_span_of_a_bare_boxed_answer():
    text = "So the result is \\boxed{7}."
    start = text.index("7")
    html = render_with_final_answer(text, (start, start + 1))
    assert highlighted(html) == [("mark", {"class": "final-answer", "id": "final-answer"})]
    assert math_of(html) == [("inline", "\\boxed{7}")]


def test_span_over_plain_text_wraps_just_that_text():
    text = "Some work.\n\n**Final answer:** the triangle is isosceles"
    start = text.index("the triangle")
    html = render_with_final_answer(text, (start, len(text)))
    assert (
        '<strong>Final answer:</strong> <mark class="final-answer" id="final-answer">the triangle is isosceles</mark>'
        in html
    )


def test_span_starting_at_a_list_marker_keeps_the_list():
    text = "Steps\n\n- answer: **7**"
    html = render_with_final_answer(text, (text.index("- answer"), len(text)))
    assert '<ul>\n<li><mark class="final-answer" id="final-answer">answer: <strong>7</strong></mark></li>' in html


def test_span_crossing_blocks_wraps_the_blocks():
    text = "First paragraph ends with x.\n\nSecond one holds $y$.\n\nThird is untouched."
    html = render_with_final_answer(text, (text.index("ends"), text.index("holds") + 5))
    assert '<div class="final-answer" id="final-answer">\n<p>First paragraph' in html
    assert 'holds <span class="math" data-display="inline">y</span>.</p>\n</div>\n<p>Third' in html
    assert_inert(html)


def test_span_over_a_display_block_keeps_the_display_math():
    text = "Work\n\n$$\n\\boxed{3}\n$$\n\nEnd"
    html = render_with_final_answer(text, (text.index("$$"), text.rindex("$$") + 2))
    assert math_of(html) == [("block", "\\boxed{3}")]
    assert len(highlighted(html)) == 1
    assert '<div class="final-answer" id="final-answer">\n<div class="math" data-display="block">' in html


def test_span_that_would_split_emphasis_falls_back_to_the_block():
    text = "The **answer is 12** and more words."
    html = render_with_final_answer(text, (text.index("12"), len(text)))
    assert (
        '<div class="final-answer" id="final-answer">\n<p>The <strong>answer is 12</strong> and more words.</p>\n</div>'
        in html
    )


def test_highlight_with_the_extractor_span_when_available():
    extract = pytest.importorskip("grading.answercheck.extract")
    text = "Thus $\\boxed{\\dfrac{3}{4}}$ is the probability."
    span = extract.final_answer_span(text)
    html = render_with_final_answer(text, span)
    assert len(highlighted(html)) == 1
    assert math_of(html) == [("inline", "\\boxed{\\dfrac{3}{4}}")]


def test_no_span_renders_without_highlight():
    assert highlighted(render_with_final_answer("no answer", None)) == []


@pytest.mark.parametrize("span", [(-1, 2), (3, 3), (5, 2), (0, 99)])
def test_span_outside_the_text_is_a_clear_error(span):
    with pytest.raises(ValueError, match="final-answer span"):
        render_with_final_answer("short text", span)


def test_private_use_characters_in_the_text_cannot_forge_the_highlight():
    text = "a \ue000 b \ue001 c $x$"
    html = render_with_final_answer(text, (text.index("c"), text.index("c") + 1))
    assert len(highlighted(html)) == 1
    assert "\ue000" not in html and "\ue001" not in html


# --- XSS battery ----------------------------------------------------------------------------------------

XSS_PAYLOADS = [
    "<script>window.__pwned = 1</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    '<img src=x onerror="window.__pwned=1">',
    "<svg onload=\"document.title='pwned'\"><circle r=1></circle></svg>",
    "<svg><script>window.__pwned=1</script></svg>",
    "[click](javascript:window.__pwned=1)",
    "[click](JaVaScRiPt:alert(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    '<a href="javascript:alert(1)">html link</a>',
    '<a href="data:text/html,<script>alert(1)</script>">data link</a>',
    '<a href="jav&#x09;ascript:alert(1)">tab entity</a>',
    "[tab](jav&#x09;ascript:alert(1))",
    "[newline](java\nscript:alert(1))",
    "<javascript:alert(1)>",
    '<iframe src="https://evil.example"></iframe>',
    '<iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>',
    "<style>body{background:url(https://evil.example/x)}</style>",
    '<div style="background:url(javascript:alert(1))">styled</div>',
    '<p style="position:fixed;top:0;left:0;width:100%;height:100%">overlay</p>',
    '<object data="https://evil.example/x.swf"></object><embed src="https://evil.example/x">',
    '<form action="https://evil.example"><input name=q><button>go</button></form>',
    "<!-- <script>window.__pwned=1</script> -->",
    "<!--[if IE]><script>alert(1)</script><![endif]-->",
    "$</span><script>window.__pwned=1</script>$",
    "$$</div><img src=x onerror=alert(1)>$$",
    "\\(</span><svg onload=alert(1)>\\)",
    "\\[</div><iframe src=//evil.example></iframe>\\]",
    "$\\href{javascript:alert(1)}{click}$",
    "\\boxed{<img src=x onerror=alert(1)>}",
    '$x$" onmouseover="alert(1)',
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<a href="https://ok.example" onclick="alert(1)">ok</a>',
    '[ok](https://ok.example "title\\" onmouseover=alert(1)")',
    '<base href="https://evil.example/"><meta http-equiv="refresh" content="0;url=https://evil.example">',
    "<link rel=stylesheet href=https://evil.example/x.css>",
    "```\n</code></pre><script>alert(1)</script>\n```",
    "`<script>alert(1)</script>`",
    "[relative](/admin/logout/)",
]


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_xss_payload_renders_inert(payload):
    assert_inert(render_markdown(payload))
    assert_inert(render_markdown(f"Some text before.\n\n{payload}\n\nAnd $x$ after."))


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_xss_payload_inside_the_final_answer_span_renders_inert(payload):
    text = f"Work.\n\nFinal answer: {payload}"
    start = text.index(payload)
    assert_inert(render_with_final_answer(text, (start, len(text))))


def test_raw_html_shows_as_text():
    html = render_markdown("<script>window.__pwned = 1</script>")
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html


def test_tex_href_stays_tex_for_katex_which_runs_untrusted():
    html = render_markdown("$\\href{javascript:alert(1)}{x}$")
    assert math_of(html) == [("inline", "\\href{javascript:alert(1)}{x}")]
    assert "<a" not in html
