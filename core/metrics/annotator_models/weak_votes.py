"""Votes of automatic verifiers as weak labels: `WeakSource` (a fixed, measured confusion) and the cap on their evidence.

Weak votes from automatic verifiers never enter the fit: they cannot teach the model anything about the humans and
may be wrong in correlated ways. They are applied afterwards, on top of the humans' posterior, through a fixed
confusion matrix given by the verifier's measured rates (`WeakSource`). Their combined evidence on one item is capped:
it may change the posterior odds between any two classes by at most `max_weak_odds` (default 3), so weak votes
alone can never carry an item far from its prior (with an even prior at most 0.75 for two classes) and cannot
overrule agreeing careful annotators; they shift close calls. Posteriors are available with and without them.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

_MIN_PROBABILITY = 1e-6  # floor of a weak source's confusion cells, so that no single vote is absolute


@dataclass(frozen=True)
class WeakSource:
    """An automatic verifier whose votes count as noisy labels with a fixed, measured confusion.

    `confusion[true_class][given_value]` = P(the verifier says given_value | true class). Every class of the model
    needs a row; the given values may include values that are not classes (an "inconclusive" verdict, say).
    """

    confusion: Mapping[Hashable, Mapping[Hashable, float]]

    @classmethod
    def symmetric(cls, accuracy: float, classes: Sequence[Hashable]) -> WeakSource:
        """Right with probability `accuracy`, otherwise one of the other classes uniformly."""
        if not 0 < accuracy < 1 or len(classes) < 2:
            raise ValueError("accuracy must be in (0, 1) and there must be at least two classes")
        wrong = (1 - accuracy) / (len(classes) - 1)
        return cls({true: {given: accuracy if given == true else wrong for given in classes} for true in classes})

    @classmethod
    def binary(cls, tpr: float, tnr: float, positive: Hashable = True, negative: Hashable = False) -> WeakSource:
        """From the true-positive and true-negative rates measured against human labels (judge_eval's TPR, TNR)."""
        if not (0 < tpr < 1 and 0 < tnr < 1):
            raise ValueError("tpr and tnr must be in (0, 1): a verifier that is never wrong is not a weak source")
        return cls({positive: {positive: tpr, negative: 1 - tpr}, negative: {positive: 1 - tnr, negative: tnr}})

    def log_likelihoods(self, classes: Sequence[Hashable]) -> dict[Hashable, np.ndarray]:
        """`{given value: log P(given | class) for each class}`, cells floored at 1e-6 and rows checked."""
        missing = [c for c in classes if c not in self.confusion]
        if missing:
            raise ValueError(f"weak source confusion has no row for class(es) {missing!r}")
        given_values: list[Hashable] = []
        for true in classes:
            row = self.confusion[true]
            if any(p < 0 for p in row.values()) or not math.isclose(sum(row.values()), 1.0, abs_tol=1e-6):
                raise ValueError(f"weak source confusion row {true!r} must be probabilities summing to 1")
            given_values.extend(v for v in row if v not in given_values)
        return {
            given: np.log(np.array([max(self.confusion[true].get(given, 0.0), _MIN_PROBABILITY) for true in classes]))
            for given in given_values
        }


def weak_vote_log_likelihood(
    tables: Mapping[Hashable, Mapping[Hashable, np.ndarray]], source: Hashable, value: Hashable
) -> np.ndarray:
    if source not in tables:
        raise KeyError(f"weak vote from unknown source {source!r}: give its confusion in weak_sources")
    if value not in tables[source]:
        raise ValueError(f"weak source {source!r} has no confusion column for value {value!r}")
    return tables[source][value]


def cap_weak_evidence(weak_logits: np.ndarray, max_odds: float) -> np.ndarray:
    """Scale each column of (K, n) weak log-likelihoods so that its spread is at most log(max_odds).

    Scaling keeps the order of the classes and caps the odds ratio between any two of them, for all weak votes of
    the item together, however many sources voted.
    """
    limit = math.log(max_odds)
    centred = weak_logits - weak_logits.max(axis=0)
    spread = -centred.min(axis=0)
    factor = np.ones_like(spread)
    np.divide(limit, spread, out=factor, where=spread > limit)
    return centred * factor
