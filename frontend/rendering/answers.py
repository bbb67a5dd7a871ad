"""Short answers (reference answers, extracted answers, verifier explanations) made ready for the Markdown renderer.

Files store short answers as bare TeX as often as delimited: `as_math_source` decides what is TeX and delimits it,
`undouble_backslashes` undoes a JSON encoding applied twice, and the results go through `render_markdown`. The rule-based
verifier quotes answers in its explanations with Python's repr (`extracted '\\\\frac{1}{2}' from the completion`):
`explanation_source` reads those quotes back and delimits the TeX inside them.
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
# A quoted fragment: opened after a space, a bracket or the start, closed before the end, a space or punctuation, so
# apostrophes (`the model's`) open nothing and primes inside (`"f'(x)"`) close nothing. A backslash and the character
# after it are read together, so an escaped quote (`'it\'s'`) does not close the fragment either.
_QUOTED = re.compile(r"""(?<![^\s(\[{])(['"])((?:\\.|(?!\1)[^\\\n]|\1(?![\s.,;:!?)\]}]|$))+?)\1(?=[\s.,;:!?)\]}]|$)""")
_BACKSLASH_RUN = re.compile(r"\\+")
_REPR_DOUBLED_COMMAND = re.compile(r"(?<!\\)\\\\[a-zA-Z]")
_REPR_ESCAPE = re.compile(r"\\(.)")
_REPR_ESCAPED = {"\\": "\\", "'": "'", '"': '"', "n": " ", "r": " ", "t": " "}


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
    return _delimit_tex(undouble_backslashes(text.strip()), display=True)


def _delimit_tex(text: str, *, display: bool) -> str:
    if not text or _MATH_DELIMITERS.search(text):
        return text
    if not (_TEX_COMMAND.search(text) or _TEX_SIGNS.search(text)):
        return text
    if _PROSE.search(_TEX_COMMAND.sub(" ", _TEXT_GROUP.sub(" ", text))):
        return wrap_bare_tex(text)
    if display and ("\\begin{" in text or "\n" in text):
        return f"$$\n{text}\n$$"
    return f"${text}$"


def unrepr_quoted(body: str) -> str:
    """The text inside a quote written by Python's repr (`\\\\frac{1}{2}`, `\\\\text{it\\'s}`) as it was written
    (`\\frac{1}{2}`). Only when every backslash run is even, or repr's escapes for a line break, a tab or a quote
    stand beside doubled commands, is the body taken for repr's: `'\\frac{1}{2}'` with its single backslash is kept."""
    runs = list(_BACKSLASH_RUN.finditer(body))
    if all(len(run.group()) % 2 == 0 for run in runs):
        return body.replace("\\\\", "\\")
    escapes_only = all(len(run.group()) % 2 == 0 or body[run.end() : run.end() + 1] in "nrt'\"" for run in runs)
    odd_followers = {body[run.end() : run.end() + 1] for run in runs if len(run.group()) % 2}
    if escapes_only and (_REPR_DOUBLED_COMMAND.search(body) or odd_followers <= {"'", '"'}):
        return _REPR_ESCAPE.sub(lambda escape: _REPR_ESCAPED[escape.group(1)], body)
    return body


def explanation_source(text: str) -> str:
    """A verifier's explanation as Markdown whose TeX is delimited. A quoted fragment (`'\\\\frac{1}{2}'`, repr's
    escaping undone) that is TeX becomes a formula inside its quotes; the text between fragments gets its bare TeX
    wrapped run by run, its backslashes undoubled when every command there is doubled. Text that delimits its math
    itself (a judge's Markdown) is kept but for doubled backslashes."""
    if _MATH_DELIMITERS.search(_QUOTED.sub("", text)):
        return undouble_backslashes(text)
    parts = []
    position = 0
    for fragment in _QUOTED.finditer(text):
        parts.append(wrap_bare_tex(undouble_backslashes(text[position : fragment.start()])))
        quote, body = fragment.group(1), unrepr_quoted(fragment.group(2))
        parts.append(f"{quote}{_delimit_tex(body.strip(), display=False)}{quote}")
        position = fragment.end()
    parts.append(wrap_bare_tex(undouble_backslashes(text[position:])))
    return "".join(parts)


def cut_explanation(text: str, limit: int) -> str:
    """`text` cut after `limit` characters with an ellipsis, before a quoted fragment the limit falls inside."""
    if len(text) <= limit:
        return text
    cut = limit
    for fragment in _QUOTED.finditer(text):
        if fragment.start() < cut < fragment.end():
            cut = fragment.start()
    return text[:cut].rstrip() + "…"


def render_answer(text: str) -> SafeString:
    """A reference or extracted answer rendered as math, whether or not its TeX came with `$` delimiters."""
    if not isinstance(text, str):
        raise TypeError(f"render_answer expects str, got {type(text).__name__}")
    return render_markdown(as_math_source(text))


def render_explanation(text: str, limit: int = 600) -> SafeString:
    """A verifier's explanation: Markdown with math, quoted answers read back from repr, cut after `limit` characters."""
    if not isinstance(text, str):
        raise TypeError(f"render_explanation expects str, got {type(text).__name__}")
    return render_markdown(explanation_source(cut_explanation(text, limit)))


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
