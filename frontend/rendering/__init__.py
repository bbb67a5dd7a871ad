"""Untrusted text (questions, references, model completions, verifier explanations) to safe HTML.

Every page shows such text only through this package, which returns sanitized HTML:

- `markdown`: Markdown + TeX to sanitized HTML (math left as escaped TeX for KaTeX in the browser), one-line previews;
- `final_answer`: the same with the final answer's span highlighted;
- `reasoning`: a completion, its `<think>` section folded and its final answer highlighted;
- `answers`: short answers and verifier explanations, bare TeX delimited before rendering;
- `timestamps`: timestamps as local date and minute.
"""

from frontend.rendering.answers import (
    as_math_source,
    render_answer,
    render_explanation,
    undouble_backslashes,
    verdict_rows,
    wrap_bare_tex,
)
from frontend.rendering.final_answer import final_answer_span, render_with_final_answer
from frontend.rendering.markdown import (
    ALLOWED_TAGS,
    FINAL_ANSWER_CLASS,
    FINAL_ANSWER_DISPLAY_CLASS,
    FINAL_ANSWER_ID,
    REMOVED_WITH_CONTENT,
    build_markdown,
    render_markdown,
    render_snippet,
    sanitize_html,
)
from frontend.rendering.reasoning import render_completion
from frontend.rendering.timestamps import readable_time

__all__ = [
    "ALLOWED_TAGS",
    "FINAL_ANSWER_CLASS",
    "FINAL_ANSWER_DISPLAY_CLASS",
    "FINAL_ANSWER_ID",
    "REMOVED_WITH_CONTENT",
    "as_math_source",
    "build_markdown",
    "final_answer_span",
    "readable_time",
    "render_completion",
    "render_answer",
    "render_explanation",
    "render_markdown",
    "render_snippet",
    "render_with_final_answer",
    "sanitize_html",
    "undouble_backslashes",
    "verdict_rows",
    "wrap_bare_tex",
]
