"""Completions of reasoning models: the `<think>` section folded away, the rest (where the answer is) shown.

A reasoning section is what lies between `<think>` and `</think>`; a completion holding only the closing tag (the
opening one belongs to the prompt template) reasons from its start, and one that opens a section it never closes
reasons to its end. Both sides are rendered as any completion is, and the final answer is highlighted in whichever
holds it; the fold is markup of this module around sanitized HTML, with nothing from the text in its attributes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from frontend.rendering.final_answer import render_with_final_answer

_OPEN = re.compile(r"<think>", re.IGNORECASE)
_CLOSE = re.compile(r"</think>", re.IGNORECASE)


@dataclass(frozen=True)
class ReasoningSection:
    start: int  # where the section begins, its tag included
    body_start: int
    body_end: int
    end: int  # past its closing tag (the text's end when it never closes)
    closed: bool


def reasoning_section(text: str) -> ReasoningSection | None:
    opening, closing = _OPEN.search(text), None
    if opening is not None:
        closing = _CLOSE.search(text, opening.end())
        if closing is None:
            return ReasoningSection(opening.start(), opening.end(), len(text), len(text), closed=False)
        return ReasoningSection(opening.start(), opening.end(), closing.start(), closing.end(), closed=True)
    closing = _CLOSE.search(text)
    if closing is None:
        return None
    return ReasoningSection(0, 0, closing.start(), closing.end(), closed=True)


def _render_part(text: str, offset: int, span: tuple[int, int] | None) -> str:
    if not text.strip():
        return ""
    inside = span is not None and offset <= span[0] and span[1] <= offset + len(text)
    return render_with_final_answer(text, (span[0] - offset, span[1] - offset) if inside else None)


def render_completion(text: str, span: tuple[int, int] | None) -> SafeString:
    """A completion as sanitized HTML with its final answer (`span` of `text`) highlighted and its reasoning section,
    if any, folded in a <details> that says how long it is."""
    section = reasoning_section(text)
    if section is None or not text[section.body_start : section.body_end].strip():
        if section is not None:  # an empty section: only its tags go
            text = text[: section.start] + text[section.end :]
            span = None
        return render_with_final_answer(text, span)
    body = text[section.body_start : section.body_end]
    length = len(body.strip())
    note = f"{length:,} characters" + ("" if section.closed else ", never closed")
    holds_answer = span is not None and section.body_start <= span[0] and span[1] <= section.body_end
    fold = (
        f'<details class="reasoning" data-reasoning{" data-holds-answer" if holds_answer else ""}>'
        f'<summary>Reasoning <span class="muted">({escape(note)})</span></summary>'
        f'<div class="reasoning-body">{_render_part(body, section.body_start, span)}</div></details>\n'
    )
    before = _render_part(text[: section.start], 0, span)
    after = _render_part(text[section.end :], section.end, span)
    return mark_safe(before + fold + after)  # noqa: S308 - each part is sanitized; the fold is this module's markup
