"""The three outcomes of a comparison, each with the reason shown to the reader."""

from __future__ import annotations

from grading.answercheck.verdict import CORRECT, INCONCLUSIVE, INCORRECT, Comparison


def ok(why: str) -> Comparison:
    return Comparison(CORRECT, why)


def wrong(why: str) -> Comparison:
    return Comparison(INCORRECT, why)


def unsure(why: str) -> Comparison:
    return Comparison(INCONCLUSIVE, why)
