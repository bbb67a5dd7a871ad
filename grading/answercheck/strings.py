"""Short string answers (D1 specific wording) and semantic strings (D2)."""

from __future__ import annotations

import re

from grading.answercheck.normalize import normalize_words
from grading.answercheck.verdict import CORRECT, INCONCLUSIVE, INCORRECT, Comparison

_NEGATIONS = {"not", "no", "never", "neither", "nor", "cannot", "non", "isn't", "doesn't", "without"}
_STOPWORDS = {
    "is",
    "are",
    "was",
    "be",
    "of",
    "in",
    "on",
    "to",
    "and",
    "or",
    "it",
    "its",
    "this",
    "that",
    "which",
    "for",
    "by",
    "with",
    "as",
    "at",
    "from",
    "so",
    "answer",
    "final",
    "therefore",
    "thus",
    "they",
    "we",
}


def _content_words(text: str) -> set[str]:
    return {word for word in text.split() if word not in _STOPWORDS}


def compare_strings(predicted: str, reference: str, *, semantic: bool) -> Comparison:
    predicted_words, reference_words = normalize_words(predicted), normalize_words(reference)
    if not reference_words:
        return Comparison(INCONCLUSIVE, "the reference has no words to compare")
    if not predicted_words:
        return Comparison(INCORRECT, "the answer is empty after normalization")
    if predicted_words == reference_words:
        return Comparison(CORRECT, f"same wording after normalization: {reference_words!r}")
    predicted_negated = bool(_NEGATIONS & set(predicted_words.split()))
    reference_negated = bool(_NEGATIONS & set(reference_words.split()))
    contains = re.search(rf"(?<!\w){re.escape(reference_words)}(?!\w)", predicted_words) is not None
    if (
        contains
        and predicted_negated == reference_negated
        and len(predicted_words.split()) <= len(reference_words.split()) + 6
    ):
        return Comparison(CORRECT, f"the answer states the reference wording {reference_words!r}")
    shared = _content_words(predicted_words) & _content_words(reference_words)
    short = len(predicted_words.split()) <= 4 and len(reference_words.split()) <= 4
    # A paraphrase can share no word with the reference ("it blows up" / "diverges"), so a semantic
    # answer is only called different when it is a single word against a short reference.
    very_short = len(_content_words(predicted_words)) <= 1 and len(_content_words(reference_words)) <= 2
    if not shared and (very_short if semantic else short):
        return Comparison(INCORRECT, f"{predicted_words!r} and {reference_words!r} share no content word")
    if short and not semantic and not contains:
        return Comparison(INCORRECT, f"{predicted_words!r} does not contain the required wording {reference_words!r}")
    return Comparison(INCONCLUSIVE, f"{predicted_words!r} vs {reference_words!r} needs a semantic judgment")
