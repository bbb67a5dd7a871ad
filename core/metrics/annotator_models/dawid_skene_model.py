"""A fitted Dawid-Skene model and what it reports: item posteriors, annotator estimates, accuracy per stratum.

Adaptive redundancy: `DawidSkeneModel.item_posterior` gives the posterior of one item from its labels so far with
the fitted confusions and class prior, without refitting.

The standard deviation of a confusion cell is the marginal one of the row's Dirichlet (expected counts +
pseudo-counts); it holds the item posteriors fixed (see `intervals` for what that leaves out).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from core.metrics.annotator_models.fitting import Convergence, softmax_columns
from core.metrics.annotator_models.weak_votes import cap_weak_evidence, weak_vote_log_likelihood


@dataclass(frozen=True)
class ItemPosterior:
    """Posterior over the classes of one item; `label` is the most probable class and `confidence` its probability.

    Gold items have a one-hot posterior and `gold` True. `n_labels` counts human labels, `n_weak_votes` the verifier
    votes that were applied (0 for a posterior without weak votes).
    """

    posterior: dict[Hashable, float]
    label: Hashable
    confidence: float
    n_labels: int
    n_weak_votes: int
    gold: bool


@dataclass(frozen=True)
class StratumAccuracy:
    """Accuracy of one annotator on the items of one stratum (e.g. one answer type).

    `accuracy` is the expected share of right labels under the item posteriors, shrunk towards the annotator's
    overall accuracy by `stratum_prior_strength` pseudo-labels; `accuracy_sd` is the matching Beta standard deviation.
    """

    n_labels: int
    accuracy: float
    accuracy_sd: float


@dataclass(frozen=True)
class AnnotatorEstimate:
    """Estimated reliability of one annotator.

    - confusion[true][given]: posterior mean of P(given | true); confusion_sd the Dirichlet standard deviation;
    - accuracy: P(a label of theirs is right) on their own mix of items (diagonal weighted by how many of their
      labels fall on each true class), accuracy_sd its standard deviation;
    - weight: how far one of their labels moves the posterior log-odds between the most and the least supported
      class, averaged over the labels they give. About 0 for a careless (random) annotator; large for a careful one
      and for an adversarial one, whose labels are informative once read inverted;
    - by_stratum: accuracy per stratum key, when the fit was given strata.
    """

    n_labels: int
    confusion: dict[Hashable, dict[Hashable, float]]
    confusion_sd: dict[Hashable, dict[Hashable, float]]
    accuracy: float
    accuracy_sd: float
    weight: float
    by_stratum: dict[Hashable, StratumAccuracy]


class DawidSkeneModel:
    """A fitted Dawid-Skene model: item posteriors, annotator confusions, class prior, convergence.

    Built by `fit_dawid_skene`; the arrays stay in numpy and per-item objects are made on request, so a model over
    hundreds of thousands of items is cheap to hold.
    """

    def __init__(
        self,
        *,
        classes: tuple[Hashable, ...],
        item_ids: list[Hashable],
        annotator_ids: list[Hashable],
        class_prior: np.ndarray,
        confusion_alpha: np.ndarray,
        confusion_counts: np.ndarray,
        posterior: np.ndarray,
        posterior_with_weak: np.ndarray,
        labels_per_item: np.ndarray,
        weak_votes_per_item: np.ndarray,
        is_gold: np.ndarray,
        stratum_accuracy: dict[Hashable, dict[Hashable, StratumAccuracy]],
        weak_log_likelihoods: dict[Hashable, dict[Hashable, np.ndarray]],
        max_weak_odds: float,
        prior_alpha: np.ndarray,
        convergence: Convergence,
    ) -> None:
        self.classes = classes
        self.convergence = convergence
        self.max_weak_odds = max_weak_odds
        self._item_ids = item_ids
        self._item_index = {item: position for position, item in enumerate(item_ids)}
        self._annotator_ids = annotator_ids
        self._annotator_index = {annotator: position for position, annotator in enumerate(annotator_ids)}
        self._class_prior = class_prior
        self._alpha = confusion_alpha  # (A, K, K): expected counts + pseudo-counts
        self._counts = confusion_counts  # (A, K, K): expected counts only
        self._confusion = confusion_alpha / confusion_alpha.sum(axis=2, keepdims=True)
        self._log_confusion = np.log(self._confusion)
        self._prior_log_confusion = np.log(prior_alpha / prior_alpha.sum(axis=1, keepdims=True))
        self._posterior = posterior  # (I, K)
        self._posterior_with_weak = posterior_with_weak
        self._labels_per_item = labels_per_item
        self._weak_votes_per_item = weak_votes_per_item
        self._is_gold = is_gold
        self._stratum_accuracy = stratum_accuracy
        self._weak_log_likelihoods = weak_log_likelihoods

    # -- items -----------------------------------------------------------------------------------------------------

    @property
    def class_prior(self) -> dict[Hashable, float]:
        return {c: float(p) for c, p in zip(self.classes, self._class_prior, strict=True)}

    @property
    def item_ids(self) -> list[Hashable]:
        return list(self._item_ids)

    def posterior_matrix(self, *, with_weak: bool = False) -> np.ndarray:
        """(items x classes) posterior probabilities, rows in the order of `item_ids`, columns in that of `classes`."""
        return (self._posterior_with_weak if with_weak else self._posterior).copy()

    def _item_posterior_at(self, position: int, with_weak: bool) -> ItemPosterior:
        row = (self._posterior_with_weak if with_weak else self._posterior)[position]
        best = int(np.argmax(row))
        return ItemPosterior(
            posterior={c: float(p) for c, p in zip(self.classes, row, strict=True)},
            label=self.classes[best],
            confidence=float(row[best]),
            n_labels=int(self._labels_per_item[position]),
            n_weak_votes=int(self._weak_votes_per_item[position]) if with_weak else 0,
            gold=bool(self._is_gold[position]),
        )

    def item(self, item_id: Hashable, *, with_weak: bool = False) -> ItemPosterior:
        """Posterior of one fitted item, from the human labels (and gold) alone or with the verifiers' votes."""
        return self._item_posterior_at(self._item_index[item_id], with_weak)

    def items(self, *, with_weak: bool = False) -> dict[Hashable, ItemPosterior]:
        return {item: self._item_posterior_at(position, with_weak) for position, item in enumerate(self._item_ids)}

    def map_labels(self, *, with_weak: bool = False) -> dict[Hashable, Hashable]:
        """`{item_id: most probable class}`; ties go to the class listed first."""
        best = np.argmax(self._posterior_with_weak if with_weak else self._posterior, axis=1)
        return {item: self.classes[code] for item, code in zip(self._item_ids, best.tolist(), strict=True)}

    # -- annotators ------------------------------------------------------------------------------------------------

    @property
    def annotator_ids(self) -> list[Hashable]:
        return list(self._annotator_ids)

    def confusion_matrix(self, annotator_id: Hashable) -> np.ndarray:
        """(K x K) posterior-mean confusion, row = true class, column = given label, in the order of `classes`."""
        return self._confusion[self._annotator_index[annotator_id]].copy()

    def annotator(self, annotator_id: Hashable) -> AnnotatorEstimate:
        position = self._annotator_index[annotator_id]
        alpha = self._alpha[position]
        row_total = alpha.sum(axis=1, keepdims=True)
        mean = alpha / row_total
        variance = mean * (1 - mean) / (row_total + 1)
        counts = self._counts[position]
        n_labels = counts.sum()
        share = counts.sum(axis=1) / n_labels if n_labels > 0 else np.full(len(self.classes), 1 / len(self.classes))
        diagonal = np.diagonal(mean)
        given_share = counts.sum(axis=0) / n_labels if n_labels > 0 else share
        log_mean = np.log(mean)
        spread = log_mean.max(axis=0) - log_mean.min(axis=0)
        return AnnotatorEstimate(
            n_labels=int(round(n_labels)),
            confusion=_matrix_dict(self.classes, mean),
            confusion_sd=_matrix_dict(self.classes, np.sqrt(variance)),
            accuracy=float(share @ diagonal),
            accuracy_sd=float(np.sqrt((share**2) @ np.diagonal(variance))),
            weight=float(given_share @ spread),
            by_stratum=dict(self._stratum_accuracy.get(annotator_id, {})),
        )

    def annotators(self) -> dict[Hashable, AnnotatorEstimate]:
        return {annotator: self.annotator(annotator) for annotator in self._annotator_ids}

    # -- incremental -----------------------------------------------------------------------------------------------

    def item_posterior(
        self,
        labels: Iterable[tuple[Hashable, Hashable]],
        weak_votes: Iterable[tuple[Hashable, Hashable]] = (),
    ) -> ItemPosterior:
        """Posterior of one item from its `(annotator_id, value)` labels so far, with the fitted model, no refit.

        For adaptive redundancy: after each label, ask whether the item is settled. An annotator the model has not
        seen gets the prior confusion (two right pseudo-labels to one wrong per row). `(source_id, value)` weak
        votes are applied with the same cap as in the fit.
        """
        class_index = {c: k for k, c in enumerate(self.classes)}
        logits = np.log(self._class_prior).copy()
        n_labels = 0
        for annotator, value in labels:
            if value not in class_index:
                raise ValueError(f"label value {value!r} is not one of the classes {self.classes!r}")
            position = self._annotator_index.get(annotator)
            log_confusion = self._prior_log_confusion if position is None else self._log_confusion[position]
            logits += log_confusion[:, class_index[value]]
            n_labels += 1
        weak = np.zeros(len(self.classes))
        n_weak = 0
        for source, value in weak_votes:
            weak += weak_vote_log_likelihood(self._weak_log_likelihoods, source, value)
            n_weak += 1
        logits += cap_weak_evidence(weak[:, None], self.max_weak_odds)[:, 0]
        posterior, _ = softmax_columns(logits[:, None])
        row = posterior[:, 0]
        best = int(np.argmax(row))
        return ItemPosterior(
            posterior={c: float(p) for c, p in zip(self.classes, row, strict=True)},
            label=self.classes[best],
            confidence=float(row[best]),
            n_labels=n_labels,
            n_weak_votes=n_weak,
            gold=False,
        )


def _matrix_dict(classes: Sequence[Hashable], matrix: np.ndarray) -> dict[Hashable, dict[Hashable, float]]:
    return {true: {given: float(matrix[i, j]) for j, given in enumerate(classes)} for i, true in enumerate(classes)}


def stratum_accuracies(
    strata: Mapping[Hashable, Hashable] | None,
    item_index: Mapping[Hashable, int],
    item: np.ndarray,
    annotator: np.ndarray,
    value: np.ndarray,
    posterior: np.ndarray,
    counts: np.ndarray,
    confusion_pseudo: np.ndarray,
    annotator_ids: list[Hashable],
    strength: float,
) -> dict[Hashable, dict[Hashable, StratumAccuracy]]:
    """Per annotator and stratum: expected right labels (posterior of the value given), shrunk to overall accuracy."""
    if not strata or item.size == 0:
        return {}
    stratum_index: dict[Hashable, int] = {}
    item_stratum = np.full(len(item_index), -1, dtype=np.int64)
    for item_id, key in strata.items():
        position = item_index.get(item_id)
        if position is not None:
            item_stratum[position] = stratum_index.setdefault(key, len(stratum_index))
    label_stratum = item_stratum[item]
    has_stratum = label_stratum >= 0
    n_strata = len(stratum_index)
    if n_strata == 0:
        return {}
    cell = annotator[has_stratum] * n_strata + label_stratum[has_stratum]
    size = len(annotator_ids) * n_strata
    right = posterior[value[has_stratum], item[has_stratum]]
    n_labels = np.bincount(cell, minlength=size).reshape(len(annotator_ids), n_strata)
    expected_right = np.bincount(cell, weights=right, minlength=size).reshape(len(annotator_ids), n_strata)
    alpha = counts + confusion_pseudo
    mean = alpha / alpha.sum(axis=2, keepdims=True)
    row_counts = counts.sum(axis=2)
    total = row_counts.sum(axis=1)
    # Every annotator has labels (annotators are only known through them), so total > 0.
    overall = (row_counts * np.diagonal(mean, axis1=1, axis2=2)).sum(axis=1) / np.maximum(total, 1e-12)
    accuracy = (expected_right + strength * overall[:, None]) / (n_labels + strength)
    sd = np.sqrt(accuracy * (1 - accuracy) / (n_labels + strength + 1))
    keys = list(stratum_index)
    result: dict[Hashable, dict[Hashable, StratumAccuracy]] = {}
    for a, annotator_id in enumerate(annotator_ids):
        by_key = {
            key: StratumAccuracy(int(n_labels[a, s]), float(accuracy[a, s]), float(sd[a, s]))
            for s, key in enumerate(keys)
            if n_labels[a, s] > 0
        }
        if by_key:
            result[annotator_id] = by_key
    return result
