"""The final-answer highlight: a `(start, end)` character span of the source marked in the rendered HTML.

The span is marked with two private-use characters while the text goes through the Markdown parser, and the
marks become a <mark> around inline content or a <div> around the whole blocks the span touches. A span inside
one paragraph takes a fast path that parses once; anything else parses the whole text again with the marks.
"""

from __future__ import annotations

import re

from django.utils.safestring import SafeString, mark_safe
from markdown_it.token import Token

from frontend.rendering.markdown import (
    FINAL_ANSWER_CLASS,
    FINAL_ANSWER_DISPLAY_CLASS,
    FINAL_ANSWER_ID,
    HIGHLIGHT_END,
    HIGHLIGHT_MARKS,
    HIGHLIGHT_START,
    neutralise_sentinels,
    parser,
    render_markdown,
    sanitize_html,
)

_LEADING_BLOCK_MARKERS = re.compile(r"[ \t]*(?:(?:>[ \t]?)|(?:[-*+][ \t]+)|(?:\d{1,9}[.)][ \t]+)|(?:#{1,6}[ \t]+))*")
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>")
_VOID_TAGS = frozenset({"br", "hr", "img", "input"})
_BLOCK_TAGS = frozenset(
    {
        "div",
        "p",
        "pre",
        "ul",
        "ol",
        "li",
        "table",
        "blockquote",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
    }
)
_LINE_BREAK = re.compile(r"\r\n?|\n")


def _skip_block_markers(text: str, start: int, end: int) -> int:
    """Keep the span's start out of a line's list, heading or quote marker, so the marker still parses."""
    line_start = text.rfind("\n", 0, start) + 1
    markers_end = _LEADING_BLOCK_MARKERS.match(text, line_start).end()
    return min(max(start, markers_end), end) if start <= markers_end else start


def _is_balanced(fragment: str) -> tuple[bool, bool]:
    """Whether an HTML fragment closes every tag it opens (and opens none it closes); and whether it has block tags."""
    stack: list[str] = []
    has_block = False
    for match in _TAG.finditer(fragment):
        closing, name = match.group(1), match.group(2).lower()
        has_block = has_block or name in _BLOCK_TAGS
        if name in _VOID_TAGS:
            continue
        if closing:
            if not stack or stack.pop() != name:
                return False, has_block
        else:
            stack.append(name)
    return not stack, has_block


def _wrap_inline(marked_html: str) -> str | None:
    if marked_html.count(HIGHLIGHT_START) != 1 or marked_html.count(HIGHLIGHT_END) != 1:
        return None
    start, end = marked_html.index(HIGHLIGHT_START), marked_html.index(HIGHLIGHT_END)
    if start > end:
        return None
    inner = marked_html[start + 1 : end]
    balanced, has_block = _is_balanced(inner)
    if not balanced or not inner.strip():
        return None
    tag = "div" if has_block else "mark"
    classes = FINAL_ANSWER_CLASS
    if tag == "mark" and 'data-display="block"' in inner:
        classes = f"{FINAL_ANSWER_CLASS} {FINAL_ANSWER_DISPLAY_CLASS}"
    return (
        f'{marked_html[:start]}<{tag} class="{classes}" id="{FINAL_ANSWER_ID}">{inner}</{tag}>{marked_html[end + 1 :]}'
    )


def _top_level_groups(tokens: list[Token]) -> list[tuple[int, int]]:
    """(first, last) token indexes of each top-level block."""
    groups = []
    index = 0
    while index < len(tokens):
        first = index
        if tokens[index].nesting == 1:
            depth = 0
            while True:
                depth += tokens[index].nesting
                if depth == 0:
                    break
                index += 1
        groups.append((first, index))
        index += 1
    return groups


def _wrap_blocks(text: str, start: int, end: int) -> str:
    """Highlight the whole top-level blocks (paragraphs, lists, display math...) that the span touches."""
    tokens = parser.parse(text)
    first_line = len(_LINE_BREAK.findall(text, 0, start))
    last_line = len(_LINE_BREAK.findall(text, 0, max(start, end - 1)))
    touched = [
        (first, last)
        for first, last in _top_level_groups(tokens)
        if tokens[first].map and tokens[first].map[0] <= last_line and first_line < tokens[first].map[1]
    ]
    if touched:
        open_token = Token("html_block", "", 0)
        open_token.content = f'<div class="{FINAL_ANSWER_CLASS}" id="{FINAL_ANSWER_ID}">\n'
        close_token = Token("html_block", "", 0)
        close_token.content = "</div>\n"
        tokens.insert(touched[-1][1] + 1, close_token)
        tokens.insert(touched[0][0], open_token)
    return parser.renderer.render(tokens, parser.options, {})


def _highlight_within_one_paragraph(text: str, start: int, end: int) -> str | None:
    """The common case, in one parse: the span lies inside a single top-level paragraph or heading.

    Only that block's inline content is parsed again with the markers, and only if the markers leave its
    parse unchanged is the result used; anything else returns None and takes the general path.
    """
    env: dict = {}
    tokens = parser.parse(text, env)
    first_line = len(_LINE_BREAK.findall(text, 0, start))
    last_line = len(_LINE_BREAK.findall(text, 0, max(start, end - 1)))
    target = next(
        (
            token
            for token in tokens
            if token.type == "inline"
            and token.level == 1
            and token.map
            and token.map[0] <= first_line
            and last_line < token.map[1]
        ),
        None,
    )
    if target is None:
        return None
    line_offsets = [0] + [match.end() for match in _LINE_BREAK.finditer(text)]
    block_start = line_offsets[target.map[0]]
    block_end = line_offsets[target.map[1]] if target.map[1] < len(line_offsets) else len(text)
    block = text[block_start:block_end]
    if target.content != block.strip():
        return None  # indented or prefixed lines: offsets in the content no longer match the source
    offset = block_start + len(block) - len(block.lstrip())
    relative_start, relative_end = start - offset, end - offset
    if not (0 <= relative_start < relative_end <= len(target.content)):
        return None
    content = target.content
    marked = f"{content[:relative_start]}{HIGHLIGHT_START}{content[relative_start:relative_end]}{HIGHLIGHT_END}{content[relative_end:]}"
    marked_children = parser.parseInline(marked, env)[0].children or []
    renderer, options = parser.renderer, parser.options
    if HIGHLIGHT_MARKS.sub("", renderer.renderInline(marked_children, options, env)) != renderer.renderInline(
        target.children or [], options, env
    ):
        return None
    target.children = marked_children
    return _wrap_inline(renderer.render(tokens, options, env))


def render_with_final_answer(text: str, span: tuple[int, int] | None) -> SafeString:
    """Like render_markdown, with the final answer (a `(start, end)` character span of `text`) highlighted.

    The highlight is an element with id="final-answer": a <mark> around inline content, or a <div> around
    the whole blocks the span touches when it crosses block boundaries. Formulas are never cut: a span that
    starts or ends inside math highlights the whole formula. `span=None` renders without highlight.
    """
    if span is None:
        return render_markdown(text)
    if not isinstance(text, str):
        raise TypeError(f"render_with_final_answer expects str, got {type(text).__name__}")
    start, end = span
    if not (0 <= start < end <= len(text)):
        raise ValueError(f"final-answer span {span!r} is not inside a text of {len(text)} characters")
    text = neutralise_sentinels(text)
    start = _skip_block_markers(text, start, end)
    html = _highlight_within_one_paragraph(text, start, end)
    if html is None:
        html = _highlight_by_reparsing(text, start, end)
    return mark_safe(sanitize_html(html))  # noqa: S308 - sanitized just above


def _highlight_by_reparsing(text: str, start: int, end: int) -> str:
    """The general path: parse the whole text twice, with and without the markers."""
    plain_html = parser.render(text)
    marked_html = parser.render(f"{text[:start]}{HIGHLIGHT_START}{text[start:end]}{HIGHLIGHT_END}{text[end:]}")
    html = None
    # The markers must not have changed how the text parses (e.g. a marker in front of "$$" on its own line).
    if HIGHLIGHT_MARKS.sub("", marked_html) == plain_html:
        html = _wrap_inline(marked_html)
    if html is None:
        html = _wrap_blocks(text, start, end)
    return html


def final_answer_span(text: str) -> tuple[int, int] | None:
    """The final answer's span as found by the grading extractor, or None when it finds none (or is not installed)."""
    try:
        from grading.answercheck.extract import final_answer_span as extract_span
    except ImportError:
        return None
    span = extract_span(text)
    if span is None:
        return None
    start, end = span
    return (start, end) if 0 <= start < end <= len(text) else None
