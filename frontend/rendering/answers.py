"""Short answers (reference answers, extracted answers, verifier explanations) made ready for the Markdown renderer.

Files store short answers as bare TeX as often as delimited: `as_math_source` decides what is TeX and delimits it,
`undouble_backslashes` undoes a JSON encoding applied twice, and the results go through `render_markdown`.
"""

from __future__ import annotations

import re

from django.utils.safestring import SafeString

from frontend.rendering.markdown import render_markdown

_MATH_DELIMITERS = re.compile(r"(?<!\\)\$|\\\(|\\\[")
_TEX_COMMAND = re.compile(r"\\[a-zA-Z]+")
_TEX_SIGNS = re.compile(r"[\^_{}]|\\[,;!{} ]")
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
    if _PROSE.search(_TEX_COMMAND.sub(" ", _TEXT_GROUP.sub(" ", text))):
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
