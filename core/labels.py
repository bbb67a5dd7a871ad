"""Label rules: what a label's value is, how values are validated, compared and combined.

Pure module, no Django imports. The workflow engine is generic over these; each subject kind (core.subjects) brings
its own rules, defined by the app that owns the subject.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

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


class LabelRules:
    """The rules of one kind of label. Subclasses implement `clean`; the rest has equality defaults."""

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


class ScoreRules(LabelRules):
    """Values are numeric scores; two scores agree when they differ by at most the threshold."""

    name = "score"
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
        close_pair = any(abs(a - b) <= threshold for i, a in enumerate(scores) for b in scores[i + 1 :])
        if close_pair:
            return True, statistics.median(scores)
        return False, None

    def display(self, value):
        return f"{value:g}" if isinstance(value, (int, float)) else str(value)
