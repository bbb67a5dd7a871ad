"""Splitting an answer into its values: top-level separators, the delimiters around a group, 'and' / 'or' lists."""

from __future__ import annotations

import re

from grading.answercheck.normalize import clean_latex, strip_assignment

_OPENERS, _CLOSERS = "([{", ")]}"


def split_top_level(text: str, separators: str = ",;") -> list[str]:
    """Split on separators that are not nested inside brackets or braces."""
    parts, depth, current = [], 0, []
    index = 0
    while index < len(text):
        char = text[index]
        if text.startswith("\\{", index) or text.startswith("\\langle", index):
            depth += 1
        elif text.startswith("\\}", index) or text.startswith("\\rangle", index):
            depth -= 1
        elif char in _OPENERS:
            depth += 1
        elif char in _CLOSERS:
            depth -= 1
        if text.startswith("\\\\", index) and depth == 0 and "\\" in separators:
            parts.append("".join(current))
            current = []
            index += 1
        elif char in separators and char != "\\" and depth == 0:
            parts.append("".join(current))
            current = []
        elif char == "\\" and text.startswith("\\\\", index):
            # A LaTeX line break inside brackets: keep both characters together.
            current.append("\\\\")
            index += 1
        else:
            current.append(char)
        index += 1
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


IN_PREFIX = re.compile(r"^\s*[a-zA-Z]\s*(?:\\in|∈)\s*")  # "x \\in (0, 1)"

WORD_SEPARATORS = re.compile(
    r"\s*(?:\\text\{\s*(?:and|or)\s*\}|\\(?:quad|qquad)|\b(?:and|or)\b|\\lor|\\vee)\s*", re.IGNORECASE
)


def delimited(text: str) -> tuple[str, str] | None:
    """('set'|'tuple'|'list'|'vector', inner) for text wrapped in one pair of matching delimiters."""
    text = text.strip()
    pairs = (
        ("\\{", "\\}", "set"),
        ("\\langle", "\\rangle", "vector"),
        ("(", ")", "tuple"),
        ("[", "]", "list"),
        ("{", "}", "group"),
    )
    for opener, closer, kind in pairs:
        if text.startswith(opener) and text.endswith(closer):
            inner = text[len(opener) : len(text) - len(closer)]
            # "(1,2) \cup (3,4)" starts and ends with parentheses that do not match each other.
            if _balanced(inner):
                return kind, inner
    return None


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        if char in _OPENERS:
            depth += 1
        elif char in _CLOSERS:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def split_values(text: str) -> list[str]:
    """'x = 1 or x = -2', '\\{1, -2\\}', '1 and -2', '1, -2' -> ['1', '-2']; expands ±."""
    text = IN_PREFIX.sub("", clean_latex(text))
    wrapper = delimited(text)
    if wrapper and wrapper[0] in ("set", "group"):
        text = wrapper[1]
    text = WORD_SEPARATORS.sub(",", text)
    values: list[str] = []
    for part in split_top_level(text, ",;"):
        part = strip_assignment(part)
        if "\\pm" in part or "\\mp" in part:
            values.append(part.replace("\\pm", "+").replace("\\mp", "-"))
            values.append(part.replace("\\pm", "-").replace("\\mp", "+"))
        else:
            values.append(part)
    return [value for value in values if value]
