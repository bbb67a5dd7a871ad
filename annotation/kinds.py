"""Judgement kinds: what a label's value is, how values are validated, compared and combined.

Pure module, no Django imports. The workflow engine is generic over these.
"""
from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

from core import taxonomy

CORRECTNESS = "correctness"
ANSWER_TYPE = "answer_type"
PROOF_GRADE = "proof_grade"
KIND_NAMES = (CORRECTNESS, ANSWER_TYPE, PROOF_GRADE)

UNSUITABLE = "__unsuitable__"


class InvalidValue(ValueError):
    pass


@dataclass(frozen=True)
class Vote:
    """One human label reduced to what the protocol compares."""

    annotator_id: int
    value: Any  # the kind's canonical value; ignored when unsuitable
    unsuitable: bool = False

    @property
    def token(self):
        return UNSUITABLE if self.unsuitable else self.value


class Kind:
    name: str
    numeric = False

    def clean(self, raw: Any) -> Any:
        """Validate a submitted value and return its canonical form."""
        raise NotImplementedError

    def agree(self, tokens: list, threshold: float) -> bool:
        return len(set(tokens)) == 1

    def combine_agreeing(self, tokens: list):
        return tokens[0]

    def majority(self, tokens: list, threshold: float):
        """Return (found, value) for a strict majority among the tokens."""
        value, count = Counter(tokens).most_common(1)[0]
        if count * 2 > len(tokens):
            return True, value
        return False, None

    def display(self, value: Any) -> str:
        return str(value)


class CorrectnessKind(Kind):
    name = CORRECTNESS
    ALIASES = {
        True: True, False: False,
        "correct": True, "incorrect": False, "true": True, "false": False,
        "yes": True, "no": False, "1": True, "0": False, 1: True, 0: False,
    }

    def clean(self, raw):
        key = raw.strip().lower() if isinstance(raw, str) else raw
        try:
            return self.ALIASES[key]
        except (KeyError, TypeError):  # TypeError: lists and objects are unhashable
            pass
        raise InvalidValue("value must be true (correct) or false (incorrect)")

    def display(self, value):
        return "Correct" if value else "Incorrect"


class AnswerTypeKind(Kind):
    name = ANSWER_TYPE

    def clean(self, raw):
        if not isinstance(raw, str):
            raise InvalidValue("value must be an answer-type code such as 'A1'")
        try:
            parsed = taxonomy.parse_answer_type(raw)
        except taxonomy.UnknownAnswerType as exc:
            raise InvalidValue(str(exc)) from exc
        if parsed is None:
            raise InvalidValue("value must be an answer-type code such as 'A1'")
        return parsed.code

    def display(self, value):
        answer_type = taxonomy.BY_CODE.get(value)
        return f"{value} - {answer_type.name}" if answer_type else str(value)


class ProofGradeKind(Kind):
    """Values are scores; two scores agree when they differ by at most the threshold."""

    name = PROOF_GRADE
    numeric = True

    def clean(self, raw):
        if isinstance(raw, dict):
            raw = raw.get("score")
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
            raise InvalidValue("value must be a numeric score")
        return float(raw)

    def agree(self, tokens, threshold):
        if any(token == UNSUITABLE for token in tokens):
            return len(set(tokens)) == 1
        return max(tokens) - min(tokens) <= threshold

    def combine_agreeing(self, tokens):
        if tokens[0] == UNSUITABLE:
            return UNSUITABLE
        return statistics.fmean(tokens)

    def majority(self, tokens, threshold):
        """Three scores: if some pair agrees within the threshold, the final score is the median."""
        unsuitable = sum(1 for token in tokens if token == UNSUITABLE)
        if unsuitable * 2 > len(tokens):
            return True, UNSUITABLE
        scores = sorted(token for token in tokens if token != UNSUITABLE)
        if len(scores) < 2 or unsuitable:
            return False, None
        close_pair = any(abs(a - b) <= threshold for i, a in enumerate(scores) for b in scores[i + 1:])
        if close_pair:
            return True, statistics.median(scores)
        return False, None

    def display(self, value):
        return f"{value:g}" if isinstance(value, (int, float)) else str(value)


KINDS: dict[str, Kind] = {kind.name: kind for kind in (CorrectnessKind(), AnswerTypeKind(), ProofGradeKind())}


def get_kind(name: str) -> Kind:
    try:
        return KINDS[name]
    except KeyError:
        raise InvalidValue(f"unknown kind {name!r}") from None
