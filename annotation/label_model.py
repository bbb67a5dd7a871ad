"""A project's fitted annotator model as stored and as used on the label path. Pure module, no Django imports.

The refit job (annotation.refit) fits Dawid-Skene (core.metrics.annotator_models) over every label of a project and
keeps what the label path needs as plain JSON: the classes (label tokens), the class prior, each annotator's
confusion matrix, and each automatic verifier's measured confusion against the project's known answers (gold items
and human final labels). `FittedParameters.posterior` then gives one item's posterior from its labels so far in a
few array operations, without a refit; `decide` turns it into the item's next state.

Verifier votes are weak: each counts with its confusion measured on the project's known answers, and their combined
evidence on one item may change the odds between two classes by at most `WEAK_VOTE_MAX_ODDS` (9: never more than
one label of a 90%-accurate annotator, however good the verifier measured), and an item is never resolved without a
human label or to a value no human gave.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.labels import UNSUITABLE
from core.metrics.annotator_models import DawidSkeneModel

from . import workflow

MAJORITY = "majority"
MODEL = "model"
AGGREGATIONS = (MAJORITY, MODEL)

WEAK_VOTE_MAX_ODDS = 9.0
# Dirichlet pseudo-counts of a verifier's measured confusion rows: one vote spread over what it can answer.
_WEAK_PSEUDOCOUNT = 1.0
_PRIOR_RIGHT, _PRIOR_WRONG = 2.0, 1.0  # an annotator the model has not seen: as in fit_dawid_skene's prior


def token_key(token: Any) -> str:
    """A JSON object key for a label token (True and "true" must not meet)."""
    return f"{type(token).__name__}:{token}"


@dataclass(frozen=True)
class Posterior:
    """Posterior over the classes of one item; `label` is its most probable class, `confidence` that probability."""

    posterior: dict[str, float]  # keyed by token_key(token), for display and storage
    label: Any
    confidence: float
    n_labels: int
    n_weak_votes: int


@dataclass(frozen=True)
class FittedParameters:
    classes: list[Any]
    class_prior: list[float]
    confusion: dict[str, list[list[float]]]  # annotator id (as a string) -> K x K, row = true class
    weak: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # verifier -> {answer: P(answer | class)}
    max_weak_odds: float = WEAK_VOTE_MAX_ODDS

    # -- storage ---------------------------------------------------------------------------------------------------

    def as_json(self) -> dict:
        return {
            "classes": self.classes,
            "class_prior": self.class_prior,
            "confusion": self.confusion,
            "weak": self.weak,
            "max_weak_odds": self.max_weak_odds,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FittedParameters:
        return cls(
            classes=list(data["classes"]),
            class_prior=[float(p) for p in data["class_prior"]],
            confusion={str(k): v for k, v in data["confusion"].items()},
            weak=dict(data.get("weak") or {}),
            max_weak_odds=float(data.get("max_weak_odds", WEAK_VOTE_MAX_ODDS)),
        )

    @classmethod
    def from_model(
        cls,
        model: DawidSkeneModel,
        weak: Mapping[str, Mapping[str, list[float]]] | None = None,
        *,
        max_weak_odds: float = WEAK_VOTE_MAX_ODDS,
    ) -> FittedParameters:
        return cls(
            classes=list(model.classes),
            class_prior=[model.class_prior[c] for c in model.classes],
            confusion={str(a): model.confusion_matrix(a).tolist() for a in model.annotator_ids},
            weak={
                str(source): {str(answer): list(map(float, row)) for answer, row in table.items()}
                for source, table in (weak or {}).items()
            },
            max_weak_odds=max_weak_odds,
        )

    # -- the label path --------------------------------------------------------------------------------------------

    def covers(self, tokens: Iterable[Any]) -> bool:
        """Whether every token is one of the fitted classes (a value first seen after the fit is not)."""
        known = {token_key(c) for c in self.classes}
        return all(token_key(token) in known for token in tokens)

    def posterior(
        self, labels: Sequence[tuple[Hashable, Any]], weak_votes: Sequence[tuple[str, str]] = ()
    ) -> Posterior:
        """Posterior of one item from its `(annotator_id, token)` labels and `(verifier, answer)` weak votes.

        An annotator the model has not seen gets the prior confusion (two right pseudo-labels to one wrong); a
        verifier without a measured confusion, or an answer it was never measured on, is ignored.
        """
        k = len(self.classes)
        index = {token_key(c): i for i, c in enumerate(self.classes)}
        logits = np.log(np.asarray(self.class_prior, dtype=float))
        prior_right = math.log(_PRIOR_RIGHT / (_PRIOR_RIGHT + _PRIOR_WRONG))
        prior_wrong = math.log(_PRIOR_WRONG / (k - 1) / (_PRIOR_RIGHT + _PRIOR_WRONG)) if k > 1 else 0.0
        for annotator, token in labels:
            column = index[token_key(token)]
            matrix = self.confusion.get(str(annotator))
            if matrix is None:
                logits += np.where(np.arange(k) == column, prior_right, prior_wrong)
            else:
                logits += np.log(np.maximum(np.asarray(matrix, dtype=float)[:, column], 1e-12))
        weak = np.zeros(k)
        n_weak = 0
        for source, answer in weak_votes:
            row = self.weak.get(str(source), {}).get(str(answer))
            if row is None:
                continue
            weak += np.log(np.maximum(np.asarray(row, dtype=float), 1e-6))
            n_weak += 1
        if n_weak:
            centred = weak - weak.max()
            spread = -centred.min()
            limit = math.log(self.max_weak_odds)
            logits += centred * (limit / spread if spread > limit else 1.0)
        probabilities = np.exp(logits - logits.max())
        probabilities /= probabilities.sum()
        best = int(np.argmax(probabilities))
        return Posterior(
            posterior={token_key(c): float(p) for c, p in zip(self.classes, probabilities, strict=True)},
            label=self.classes[best],
            confidence=float(probabilities[best]),
            n_labels=len(labels),
            n_weak_votes=n_weak,
        )


def measured_weak_confusion(observations: Iterable[tuple[Any, str]], classes: Sequence[Any]) -> dict[str, list[float]]:
    """A verifier's confusion from `(known true token, answer)` pairs: `{answer: [P(answer | class) per class]}`.

    Each row is smoothed with one pseudo-vote spread over the answers seen, so a rare class is not read as certain.
    Returns {} when there is nothing to measure on.
    """
    index = {token_key(c): i for i, c in enumerate(classes)}
    rows, answers = [], []
    for truth, answer in observations:
        position = index.get(token_key(truth))
        if position is None:
            continue
        row = np.zeros(len(classes))
        row[position] = 1.0
        rows.append(row)
        answers.append(str(answer))
    if not rows:
        return {}
    return fit_weak_confusion(np.stack(rows), answers, iterations=0)


def fit_weak_confusion(
    human_posterior: np.ndarray, answers: Sequence[str], *, iterations: int = 50
) -> dict[str, list[float]]:
    """A verifier's confusion measured against the humans' labels: `{answer: [P(answer | class) per class]}`.

    `human_posterior` is (items x classes): each item's posterior from its human labels alone (one-hot for gold
    items), `answers` the verifier's answer on each. The true class of an item is uncertain, so the confusion is
    fitted by EM with the human posteriors held fixed: weigh each item's classes by the human posterior times the
    verifier's current confusion, count, normalise (rows smoothed with one pseudo-vote). Every labeled item counts,
    however many labels it has: measuring only on the items the humans settled alone would keep the hard ones, on
    which verifiers fail too. `iterations=0` counts with the human posteriors as they are.
    """
    if len(answers) == 0:
        return {}
    names = sorted(set(answers))
    code = np.array([names.index(a) for a in answers])
    prior = np.asarray(human_posterior, dtype=float)
    k = prior.shape[1]
    one_hot = np.zeros((len(names), len(answers)))
    one_hot[code, np.arange(len(answers))] = 1.0

    def confusion(weights: np.ndarray) -> np.ndarray:  # (answers, K)
        table = one_hot @ weights + _WEAK_PSEUDOCOUNT / len(names)
        return table / table.sum(axis=0, keepdims=True)

    table = confusion(prior)
    for _ in range(iterations):
        weights = prior * table[code]  # (items, K)
        weights /= np.maximum(weights.sum(axis=1, keepdims=True), 1e-300)
        updated = confusion(weights)
        if np.abs(updated - table).max() < 1e-9:
            table = updated
            break
        table = updated
    return {answer: table[i].tolist() for i, answer in enumerate(names)} if k else {}


@dataclass(frozen=True)
class Rule:
    """How a project turns labels into a final label (see AnnotationProject)."""

    aggregation: str = MAJORITY
    adaptive: bool = False
    confidence_target: float = 0.98
    max_labels: int = 4


def decide(
    rule: Rule, current_state: str, protocol: workflow.Outcome, tokens: Sequence[Any], posterior: Posterior | None
) -> tuple[workflow.Outcome, float | None]:
    """The item's next state and the confidence to record, given the fixed protocol's outcome and the posterior.

    - majority, or no usable fitted model yet: the fixed protocol decides (no confidence).
    - model: the protocol says when enough labels are in; the final label is the posterior's most probable class
      (resolution "model"); an item the protocol sends to adjudication resolves by the model when confident.
    - adaptive: after each label, resolve by the model once the posterior reaches the target; otherwise ask for one
      more label until `max_labels`, then adjudication.
    A value no human gave never becomes the final label.
    """
    if rule.aggregation != MODEL or posterior is None:
        return protocol, None
    human_given = {token_key(t) for t in tokens}
    confident = posterior.confidence >= rule.confidence_target and token_key(posterior.label) in human_given
    n = len(tokens)
    if rule.adaptive:
        if confident:
            return _by_model(posterior, n), posterior.confidence
        if n >= rule.max_labels:
            return workflow.Outcome(workflow.NEEDS_ADJUDICATION, n), posterior.confidence
        waiting = (
            current_state if current_state in (workflow.IN_PROGRESS, workflow.NEEDS_TIEBREAK) else workflow.IN_PROGRESS
        )
        return workflow.Outcome(waiting, n + 1), posterior.confidence
    if protocol.state == workflow.RESOLVED and token_key(posterior.label) in human_given:
        return _by_model(posterior, protocol.required_labels), posterior.confidence
    if protocol.state == workflow.NEEDS_ADJUDICATION and confident:
        return _by_model(posterior, protocol.required_labels), posterior.confidence
    return protocol, (posterior.confidence if protocol.state != workflow.RESOLVED else None)


def _by_model(posterior: Posterior, required: int) -> workflow.Outcome:
    excluded = posterior.label == UNSUITABLE
    return workflow.Outcome(
        workflow.RESOLVED, required, workflow.BY_MODEL, None if excluded else posterior.label, excluded=excluded
    )
