"""Untrusted Markdown + TeX (questions, references, model completions) to safe HTML.

Math is never typeset on the server: every formula becomes an inert element holding its TeX as escaped
text, `<span class="math" data-display="inline">` or `<div class="math" data-display="block">`, which the
browser bundle typesets with KaTeX. Raw HTML in the input is escaped by the Markdown parser, and the
result is sanitized with nh3 against a strict allowlist, so markup can only come from this module.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import nh3
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.amsmath import amsmath_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin

FINAL_ANSWER_ID = "final-answer"
FINAL_ANSWER_CLASS = "final-answer"
# A highlight around display math inside a paragraph shows as a block, so the whole formula is marked.
FINAL_ANSWER_DISPLAY_CLASS = "final-answer-display"

# Private-use characters mark the final-answer span while the text goes through the parser.
_START = "\ue000"
_END = "\ue001"
_SENTINELS = re.compile("[\ue000\ue001]")

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
    if _START in content or _END in content:
        before = _START if _START in content else ""
        after = _END if _END in content else ""
        content = _SENTINELS.sub("", content)
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
    md.block.ruler.before("fence", "math_block_brackets", _bracket_math_block)
    md.inline.ruler.before("escape", "math_brackets", _bracket_math_inline)
    md.inline.ruler.before("escape", "math_boxed", _boxed_inline)
    md.add_render_rule("math_inline", _renderer("inline", "span"))
    md.add_render_rule("math_inline_double", _renderer("block", "span"))
    md.add_render_rule("math_block", _renderer("block", "div", "\n"))
    md.add_render_rule("amsmath", _renderer("block", "div", "\n"))
    return md


_markdown = build_markdown()


def _neutralise_sentinels(text: str) -> str:
    return _SENTINELS.sub("\ufffd", text) if ("\ue000" in text or "\ue001" in text) else text


def render_markdown(text: str) -> SafeString:
    """Markdown with TeX math to sanitized HTML; math stays as escaped TeX for the browser to typeset."""
    if not isinstance(text, str):
        raise TypeError(f"render_markdown expects str, got {type(text).__name__}")
    html = _markdown.render(_neutralise_sentinels(text))
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
    html = _markdown.renderInline(_neutralise_sentinels(flat)).replace('data-display="block"', 'data-display="inline"')
    return mark_safe(sanitize_html(html))  # noqa: S308 - sanitized just above


# --- Final-answer highlight ----------------------------------------------------------------------------

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
    if marked_html.count(_START) != 1 or marked_html.count(_END) != 1:
        return None
    start, end = marked_html.index(_START), marked_html.index(_END)
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
    tokens = _markdown.parse(text)
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
    return _markdown.renderer.render(tokens, _markdown.options, {})


def _highlight_within_one_paragraph(text: str, start: int, end: int) -> str | None:
    """The common case, in one parse: the span lies inside a single top-level paragraph or heading.

    Only that block's inline content is parsed again with the markers, and only if the markers leave its
    parse unchanged is the result used; anything else returns None and takes the general path.
    """
    env: dict = {}
    tokens = _markdown.parse(text, env)
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
    marked = f"{content[:relative_start]}{_START}{content[relative_start:relative_end]}{_END}{content[relative_end:]}"
    marked_children = _markdown.parseInline(marked, env)[0].children or []
    renderer, options = _markdown.renderer, _markdown.options
    if _SENTINELS.sub("", renderer.renderInline(marked_children, options, env)) != renderer.renderInline(
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
    text = _neutralise_sentinels(text)
    start = _skip_block_markers(text, start, end)
    html = _highlight_within_one_paragraph(text, start, end)
    if html is None:
        html = _highlight_by_reparsing(text, start, end)
    return mark_safe(sanitize_html(html))  # noqa: S308 - sanitized just above


def _highlight_by_reparsing(text: str, start: int, end: int) -> str:
    """The general path: parse the whole text twice, with and without the markers."""
    plain_html = _markdown.render(text)
    marked_html = _markdown.render(f"{text[:start]}{_START}{text[start:end]}{_END}{text[end:]}")
    html = None
    # The markers must not have changed how the text parses (e.g. a marker in front of "$$" on its own line).
    if _SENTINELS.sub("", marked_html) == plain_html:
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


def readable_time(iso: str) -> str:
    """An ISO 8601 timestamp as the server's local date and minute ("2026-05-04 14:03 UTC"); unparsable text as is."""
    moment = parse_datetime(iso) if isinstance(iso, str) else None
    if moment is None:
        return str(iso)
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, timezone.get_default_timezone())
    local = timezone.localtime(moment)
    return f"{local:%Y-%m-%d %H:%M} {local.tzname()}"


# --- Short answers: reference answers, extracted answers, verifier explanations -------------------------

_MATH_DELIMITERS = re.compile(r"(?<!\\)\$|\\\(|\\\[")
_TEX_COMMAND = re.compile(r"\\[a-zA-Z]+")
_TEX_SIGNS = re.compile(r"[\^_{}]|\\[,;!{}]")
_DOUBLED_COMMAND = re.compile(r"\\\\[a-zA-Z]")
_SINGLE_COMMAND = re.compile(r"(?<!\\)\\[a-zA-Z]")
_PROSE = re.compile(r"[A-Za-z]{3,}\s+[A-Za-z]{3,}")
_TEXT_GROUP = re.compile(r"\\(?:text|mathrm|textbf|operatorname)\{[^{}]*\}")
_BARE_TEX_RUN = re.compile(r"[^\s$]*\\[a-zA-Z]+[^\s$]*")


def wrap_bare_tex(text: str) -> str:
    """Prose with undelimited TeX (`so \\frac{1}{2} is right`): each run of TeX between spaces becomes a formula."""
    if _MATH_DELIMITERS.search(text):
        return text

    def wrap(match: re.Match) -> str:
        run = match.group(0)
        core = run.rstrip(".,;:")
        return f"${core}${run[len(core) :]}"

    return _BARE_TEX_RUN.sub(wrap, text)


def undouble_backslashes(text: str) -> str:
    """Text whose every TeX command has two backslashes (`\\\\frac`, written by a JSON encoder twice) with one."""
    if not _DOUBLED_COMMAND.search(text) or _SINGLE_COMMAND.search(text):
        return text
    return text.replace("\\\\", "\\")


def as_math_source(text: str) -> str:
    """A short answer as Markdown whose TeX is delimited: bare TeX (`\\frac{\\pi}{2}`, `\\begin{pmatrix}...`,
    `x^2`) is wrapped as one formula, display math when it holds an environment; delimited text is kept."""
    text = undouble_backslashes(text.strip())
    if not text or _MATH_DELIMITERS.search(text):
        return text
    if not (_TEX_COMMAND.search(text) or _TEX_SIGNS.search(text)):
        return text
    if _PROSE.search(_TEXT_GROUP.sub(" ", _TEX_COMMAND.sub(" ", text))):
        return wrap_bare_tex(text)
    if "\\begin{" in text or "\n" in text:
        return f"$$\n{text}\n$$"
    return f"${text}$"


def render_answer(text: str) -> SafeString:
    """A reference or extracted answer rendered as math, whether or not its TeX came with `$` delimiters."""
    if not isinstance(text, str):
        raise TypeError(f"render_answer expects str, got {type(text).__name__}")
    return render_markdown(as_math_source(text))


def render_explanation(text: str, limit: int = 600) -> SafeString:
    """A verifier's explanation: Markdown with math, doubled backslashes undone, cut after `limit` characters."""
    if not isinstance(text, str):
        raise TypeError(f"render_explanation expects str, got {type(text).__name__}")
    text = undouble_backslashes(text)
    if len(text) > limit:
        text = text[:limit].rstrip() + "…"
    return render_markdown(wrap_bare_tex(text))


def verdict_rows(verdicts: list[dict]) -> list[dict]:
    """Verdicts with their extracted answer typeset as math and their explanation as Markdown with math."""
    return [
        {
            **verdict,
            "extracted_html": render_answer(verdict["extracted_answer"]) if verdict.get("extracted_answer") else "",
            "explanation_html": render_explanation(verdict["explanation"]) if verdict.get("explanation") else "",
        }
        for verdict in verdicts
    ]
