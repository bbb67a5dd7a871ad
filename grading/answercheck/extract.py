"""Locate the final answer in a free-text completion or reference solution.

Pure functions with no Django imports. `final_answer_span` returns character offsets into the
raw text so a reader can highlight the answer; `extract_final_answer` returns the cleaned text.
"""
from __future__ import annotations

import re

_BOX_COMMANDS = ("\\boxed", "\\fbox")

# Phrases that introduce a final answer, strongest first. Each captures the rest of the line.
_ANSWER_PHRASES: tuple[re.Pattern[str], ...] = (
    re.compile(r"final\s+answer\s*(?:is|:)?\s*[:：]?\s*", re.IGNORECASE),
    re.compile(r"\*\*\s*(?:final\s+)?answer\s*[:：]?\s*\*\*\s*[:：]?\s*", re.IGNORECASE),
    re.compile(r"(?:^|\n)\s*#*\s*answer\s*[:：]\s*", re.IGNORECASE),
    re.compile(r"the\s+(?:correct\s+)?(?:answer|option|choice)\s+is\s*[:：]?\s*", re.IGNORECASE),
    re.compile(r"the\s+(?:final\s+)?result\s+is\s*[:：]?\s*", re.IGNORECASE),
    re.compile(r"(?:answer|result)\s*[:：]\s*", re.IGNORECASE),
)

# "Final answer: ..." and a line starting "Answer:" are explicit enough to override an earlier box
# ("A first pass gives \\boxed{7}. ... Answer: $8$").
_EXPLICIT_PHRASES = _ANSWER_PHRASES[:3]

# A closing sentence that states the result in one piece of inline math: "So there are $28$ handshakes."
_CONCLUDING_SENTENCE = re.compile(
    r"\s*(?:so|hence|thus|therefore|consequently|this gives|which gives)\b[^$\n]*\$([^$\n]+)\$[^$\n]*$",
    re.IGNORECASE,
)

_TRAILING_CHOICE = re.compile(
    r"(?:^|[\s:*])\(?\**([A-J])\**\)?[.)]?\s*\**\s*\.?\s*$",
)
_CHOICE_STATEMENT = re.compile(
    r"(?:option|choice)\s*\(?\**([A-J])\b\**\)?",
    re.IGNORECASE,
)

_SENTENCE_END = re.compile(r"(?<![0-9\\])\.(?=\s|$)(?![^$]*\$[^$]*$)")


def _matching_brace(text: str, open_index: int) -> int | None:
    """Index of the `}` closing the `{` at open_index, honouring escaped braces."""
    depth = 0
    index = open_index
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and text[index + 1] in "{}":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


def boxed_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the contents of every complete `\\boxed{...}` / `\\fbox{...}`, in order of appearance."""
    spans: list[tuple[int, int]] = []
    for match in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        open_index = match.end() - 1
        close_index = _matching_brace(text, open_index)
        if close_index is not None:
            spans.append((open_index + 1, close_index))
    # A bare `\boxed 5` (no braces) is legal TeX and appears in some outputs.
    for match in re.finditer(r"\\boxed\s+([^\s{$\\][^\s$]*)", text):
        spans.append((match.start(1), match.end(1)))
    spans.sort()
    return spans


def _outermost(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Drop spans nested inside another span (a boxed inside a boxed)."""
    result: list[tuple[int, int]] = []
    for start, end in spans:
        if result and start >= result[-1][0] and end <= result[-1][1]:
            continue
        result.append((start, end))
    return result


def _trim_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Shrink a span past surrounding whitespace, math delimiters, bold markers and final punctuation."""
    strip_chars = " \t\r\n*$`"
    while start < end and text[start] in strip_chars:
        start += 1
    while end > start and text[end - 1] in strip_chars + ".;,":
        end -= 1
    for opener, closer in (("\\(", "\\)"), ("\\[", "\\]")):
        if text.startswith(opener, start) and text[start:end].endswith(closer):
            start, end = start + len(opener), end - len(closer)
            while start < end and text[start] in strip_chars:
                start += 1
            while end > start and text[end - 1] in strip_chars + ".;,":
                end -= 1
    if start >= end:
        return None
    return start, end


def _phrase_span(text: str, patterns: tuple[re.Pattern[str], ...] = _ANSWER_PHRASES, after: int = 0) -> tuple[int, int] | None:
    """The text after the last answer-introducing phrase, up to the end of its line or sentence."""
    for pattern in patterns:
        matches = [match for match in pattern.finditer(text) if match.start() >= after]
        if not matches:
            continue
        match = matches[-1]
        start = match.end()
        line_end = text.find("\n", start)
        if line_end == -1:
            line_end = len(text)
        # An answer on the following line: "**Answer:**\n\n$x = 2$".
        if not text[start:line_end].strip():
            following = re.compile(r"\s*\n\s*(\S[^\n]*)").match(text, start)
            if following is None:
                continue
            start, line_end = following.start(1), following.end(1)
        segment = text[start:line_end]
        sentence_end = _SENTENCE_END.search(segment)
        end = start + sentence_end.start() if sentence_end else line_end
        span = _trim_span(text, start, end)
        if span is not None:
            return span
    return None


def _choice_span(text: str) -> tuple[int, int] | None:
    tail_start = max(0, len(text) - 200)
    tail = text[tail_start:]
    last_line_start = tail.rstrip().rfind("\n") + 1
    last_line = tail[last_line_start:].rstrip()
    match = _TRAILING_CHOICE.search(last_line)
    if match:
        offset = tail_start + last_line_start
        return offset + match.start(1), offset + match.end(1)
    statements = list(_CHOICE_STATEMENT.finditer(tail))
    if statements:
        match = statements[-1]
        return tail_start + match.start(1), tail_start + match.end(1)
    return None


def final_answer_span(text: str) -> tuple[int, int] | None:
    """Character span [start, end) in `text` of its final answer, or None when none is found.

    Order of preference: the last `\\boxed{}`/`\\fbox{}` (contents, braces matched), then the last
    answer phrase ("Final answer: ...", "**Answer:** ...", "The answer is ..."), then a trailing
    choice letter ("(B)" on the last line, "option C").
    """
    if not text:
        return None
    spans = _outermost(boxed_spans(text))
    if spans:
        start, end = spans[-1]
        later = _phrase_span(text, _EXPLICIT_PHRASES, after=end + 1)
        if later is not None:
            return later
        trimmed = _trim_span(text, start, end)
        return trimmed if trimmed is not None else (start, end)
    phrase = _phrase_span(text)
    if phrase is not None:
        return phrase
    concluding = _concluding_span(text)
    if concluding is not None:
        return concluding
    return _choice_span(text)


def _concluding_span(text: str) -> tuple[int, int] | None:
    """The inline math of a last line such as "Hence the total is $16$ items." (one math piece only)."""
    stripped = text.rstrip()
    line_start = stripped.rfind("\n") + 1
    match = _CONCLUDING_SENTENCE.match(stripped, line_start)
    if match is None:
        return None
    return _trim_span(text, match.start(1), match.end(1))


def all_boxed_answers(text: str) -> list[str]:
    """Contents of every outermost boxed answer in order (some solutions box each part)."""
    return [text[start:end].strip() for start, end in _outermost(boxed_spans(text))]


def extract_final_answer(text: str) -> str | None:
    """The final answer of `text` as a string, or None when no answer can be located."""
    span = final_answer_span(text)
    if span is None:
        return None
    answer = text[span[0]:span[1]].strip()
    return answer or None
