"""Content hashes stored in Question.content_hash and Completion.content_hash.

A re-import compares these to find changed texts without reading the stored texts back. Anything else that creates
questions or completions must use the same functions so that a later import recognises its rows.
"""

from __future__ import annotations

import hashlib
import unicodedata

_SEPARATOR = "\x00"  # cannot occur inside a stored text (PostgreSQL rejects NUL), so parts cannot run together


def normalize_text(text: str) -> str:
    """NFC, Unix newlines, no surrounding whitespace: differences a reader cannot see do not count as changes."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return text.strip()


def _digest(parts: tuple[str, ...]) -> str:
    return hashlib.sha256(_SEPARATOR.join(normalize_text(part) for part in parts).encode("utf-8")).hexdigest()


def question_content_hash(text: str, final_answer: str = "", solution: str = "") -> str:
    """The question text together with its primary reference (golden answer and reference solution)."""
    return _digest(("question", text, final_answer, solution))


def completion_content_hash(model_name: str, text: str) -> str:
    return _digest(("completion", model_name, text))
