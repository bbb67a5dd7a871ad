"""Untrusted Markdown + TeX (questions, references, model completions) to safe HTML, and one-line previews of it.

Math is never typeset on the server: every formula becomes an inert element holding its TeX as escaped
text, `<span class="math" data-display="inline">` or `<div class="math" data-display="block">`, which the
browser bundle typesets with KaTeX. Raw HTML in the input is escaped by the Markdown parser, and the
result is sanitized with nh3 against a strict allowlist, so markup can only come from this package.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from mdit_py_plugins.amsmath import amsmath_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin

from grading.answercheck.extract import is_price

FINAL_ANSWER_ID = "final-answer"
FINAL_ANSWER_CLASS = "final-answer"
# A highlight around display math inside a paragraph shows as a block, so the whole formula is marked.
FINAL_ANSWER_DISPLAY_CLASS = "final-answer-display"

# Private-use characters mark the final-answer span while the text goes through the parser.
HIGHLIGHT_START = "\ue000"
HIGHLIGHT_END = "\ue001"
HIGHLIGHT_MARKS = re.compile("[\ue000\ue001]")

ALLOWED_TAGS = frozenset(
    {
        "p",
        "br",
        "hr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "strong",
        "em",
        "del",
        "s",
        "code",
        "pre",
        "blockquote",
        "ul",
        "ol",
        "li",
        "a",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "span",
        "div",
        "mark",
    }
)
# Tags whose whole content goes, not only the tag (they never come from the renderer anyway).
REMOVED_WITH_CONTENT = frozenset(
    {
        "script",
        "style",
        "iframe",
        "object",
        "embed",
        "noscript",
        "template",
        "textarea",
        "title",
        "svg",
        "math",
        "frame",
        "frameset",
        "noembed",
        "noframes",
        "xmp",
        "select",
        "applet",
    }
)

_cleaner = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    clean_content_tags=set(REMOVED_WITH_CONTENT),
    attributes={"a": {"href", "title"}, "ol": {"start"}},
    tag_attribute_values={
        "span": {"data-display": {"inline", "block"}},
        "div": {"data-display": {"block"}, "id": {FINAL_ANSWER_ID}},
        "mark": {"id": {FINAL_ANSWER_ID}},
    },
    allowed_classes={
        "span": {"math"},
        "div": {"math", FINAL_ANSWER_CLASS},
        "mark": {FINAL_ANSWER_CLASS, FINAL_ANSWER_DISPLAY_CLASS},
    },
    url_schemes={"http", "https", "mailto"},
    link_rel="noopener noreferrer nofollow",
    # Only absolute http(s)/mailto links: a relative link in a completion would point into this app.
    url_relative="deny",
    strip_comments=True,
)


def sanitize_html(html: str) -> str:
    return _cleaner.clean(html)


# --- Math syntax the Markdown plugins do not cover: \( \), \[ \] and bare \boxed{} -------------------


def _preceded_by_odd_backslashes(src: str, pos: int) -> bool:
    count = 0
    while pos - 1 - count >= 0 and src[pos - 1 - count] == "\\":
        count += 1
    return count % 2 == 1


def _bracket_math_inline(state: StateInline, silent: bool) -> bool:
    """`\\(...\\)` inline, and `\\[...\\]` written inside a paragraph (display)."""
    src, pos = state.src, state.pos
    if src[pos] != "\\" or pos + 1 >= state.posMax:
        return False
    opener = src[pos + 1]
    if opener not in "([" or _preceded_by_odd_backslashes(src, pos):
        return False
    closer = "\\)" if opener == "(" else "\\]"
    end = src.find(closer, pos + 2, state.posMax)
    while end != -1 and _preceded_by_odd_backslashes(src, end):
        end = src.find(closer, end + 1, state.posMax)
    if end == -1 or not src[pos + 2 : end].strip():
        return False
    if not silent:
        token = state.push("math_inline" if opener == "(" else "math_inline_double", "math", 0)
        token.content = src[pos + 2 : end]
        token.markup = "\\" + opener
    state.pos = end + 2
    return True


def _currency_dollar(state: StateInline, silent: bool) -> bool:
    """`$120 each week ... $x$`: a dollar sign in front of an amount, whose would-be formula up to the next dollar
    sign is running prose, is a currency sign and stays text (it would otherwise pair with the next `$`). The rule is
    the verifier's, so what is highlighted as the answer and what is typeset agree."""
    src, pos = state.src, state.pos
    if src[pos] != "$" or _preceded_by_odd_backslashes(src, pos) or not is_price(src, pos, state.posMax):
        return False
    if not silent:
        state.push("text", "", 0).content = "$"
    state.pos = pos + 1
    return True


def _boxed_inline(state: StateInline, silent: bool) -> bool:
    """A `\\boxed{...}` written outside any math delimiters becomes inline math."""
    src, pos = state.src, state.pos
    if not src.startswith("\\boxed{", pos) or _preceded_by_odd_backslashes(src, pos):
        return False
    depth = 0
    index = pos + len("\\boxed")
    while index < state.posMax:
        char = src[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                break
        index += 1
    else:
        return False
    if not silent:
        token = state.push("math_inline", "math", 0)
        token.content = src[pos : index + 1]
        token.markup = "\\boxed"
    state.pos = index + 1
    return True


def _bracket_math_block(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """`\\[` at the start of a line up to the `\\]` ending a later (or the same) line; no blank lines inside."""
    if state.sCount[start_line] - state.blkIndent >= 4:
        return False
    begin = state.bMarks[start_line] + state.tShift[start_line]
    if not state.src.startswith("\\[", begin):
        return False
    lines: list[str] = []
    line = start_line
    first = True
    while line < end_line:
        line_start = begin + 2 if first else state.bMarks[line] + state.tShift[line]
        text = state.src[line_start : state.eMarks[line]]
        if not first and not text.strip():
            return False
        closing = text.rstrip()
        if closing.endswith("\\]") and not _preceded_by_odd_backslashes(closing, len(closing) - 2):
            lines.append(closing[:-2])
            break
        if "\\]" in text:
            return False  # text after the closing bracket: leave it to the paragraph's inline rule
        lines.append(text)
        line += 1
        first = False
    else:
        return False
    content = "\n".join(lines)
    if not content.strip():
        return False
    if not silent:
        token = state.push("math_block", "math", 0)
        token.block = True
        token.content = content
        token.markup = "\\["
        token.map = [start_line, line + 1]
    state.line = line + 1
    return True


def _math_element(content: str, display: str, tag: str) -> str:
    before = after = ""
    if HIGHLIGHT_START in content or HIGHLIGHT_END in content:
        before = HIGHLIGHT_START if HIGHLIGHT_START in content else ""
        after = HIGHLIGHT_END if HIGHLIGHT_END in content else ""
        content = HIGHLIGHT_MARKS.sub("", content)
    return f'{before}<{tag} class="math" data-display="{display}">{escapeHtml(content.strip())}</{tag}>{after}'


def _renderer(display: str, tag: str, suffix: str = "") -> Callable:
    def render(self, tokens, idx, options, env) -> str:
        return _math_element(tokens[idx].content, display, tag) + suffix

    return render


def build_markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    # Remote images would make the reader's browser fetch arbitrary URLs: images render as their link text.
    md.disable("image")
    dollarmath_plugin(
        md, allow_labels=False, allow_space=True, allow_digits=False, allow_blank_lines=False, double_inline=True
    )
    amsmath_plugin(md)
    md.inline.ruler.before("math_inline", "currency_dollar", _currency_dollar)
    md.block.ruler.before("fence", "math_block_brackets", _bracket_math_block)
    md.inline.ruler.before("escape", "math_brackets", _bracket_math_inline)
    md.inline.ruler.before("escape", "math_boxed", _boxed_inline)
    md.add_render_rule("math_inline", _renderer("inline", "span"))
    md.add_render_rule("math_inline_double", _renderer("block", "span"))
    md.add_render_rule("math_block", _renderer("block", "div", "\n"))
    md.add_render_rule("amsmath", _renderer("block", "div", "\n"))
    return md


parser = build_markdown()


def neutralise_sentinels(text: str) -> str:
    return HIGHLIGHT_MARKS.sub("\ufffd", text) if ("\ue000" in text or "\ue001" in text) else text


def render_markdown(text: str) -> SafeString:
    """Markdown with TeX math to sanitized HTML; math stays as escaped TeX for the browser to typeset."""
    if not isinstance(text, str):
        raise TypeError(f"render_markdown expects str, got {type(text).__name__}")
    html = parser.render(neutralise_sentinels(text))
    return mark_safe(sanitize_html(html))  # noqa: S308 - sanitized just above


# --- One-line previews ---------------------------------------------------------------------------------

_MATH_SPAN = re.compile(r"\$\$.+?\$\$|\$[^$]+?\$|\\\(.+?\\\)|\\\[.+?\\\]")
# A formula that would end the preview is kept whole when it ends at most this many characters past the limit.
_SNIPPET_MATH_GRACE = 60


def _snippet_cut(flat: str, limit: int) -> int:
    for span in _MATH_SPAN.finditer(flat):
        if span.start() >= limit:
            break
        if span.end() > limit:
            return span.end() if span.end() <= limit + _SNIPPET_MATH_GRACE else span.start()
    return limit


def render_snippet(text: str, limit: int) -> SafeString:
    """A one-line preview of untrusted Markdown + TeX: about `limit` characters, never cut inside a formula.

    Only inline markup survives (emphasis, code, links, math); every formula is typeset inline.
    """
    if not isinstance(text, str):
        raise TypeError(f"render_snippet expects str, got {type(text).__name__}")
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: _snippet_cut(flat, limit)].rstrip() + "\u2026"
    html = parser.renderInline(neutralise_sentinels(flat)).replace('data-display="block"', 'data-display="inline"')
    return mark_safe(sanitize_html(html))  # noqa: S308 - sanitized just above
