"""Dawid-Skene for categorical labels: the EM over integer-coded labels and `fit_dawid_skene`.

Every annotator a has a confusion matrix theta_a[c, v] = P(a gives v | true class c) (row = true class, column =
given label), every item a true class drawn from the class prior pi. `fit_dawid_skene` fits both by EM over all
labels of a project:

- E-step: P(true = c | labels of the item) is proportional to pi[c] * prod over its labels of theta_a[c, v].
- M-step: expected counts (posterior-weighted) plus Dirichlet pseudo-counts, normalised per row.

Gold items (known answers) are anchors: their class is fixed, never estimated, and they enter the fit with weight
one on that class, so the confusion matrices are partly measured against known truth.

Priors (Dirichlet smoothing), with their defaults:

- each confusion row gets `confusion_prior_correct` = 2 pseudo-labels on the diagonal and
  `confusion_prior_wrong` = 1 pseudo-label spread evenly over the other K - 1 columns: a row is estimated as if
  the annotator had already given three labels for that true class, two right and one wrong. An annotator with
  three right labels is therefore at 5/6, not 1, and an annotator with no labels of a class at 2/3 for it, whatever
  the number of classes K;
- the class prior gets `class_pseudocount` = 1 pseudo-item per class.

The M-step uses the Dirichlet posterior mean (counts + pseudo-counts, normalised). That is the exact maximiser of
log-likelihood + sum of pseudo-count * log(parameter), which is what this EM climbs (reported as `log_objective`);
it never decreases from one iteration to the next.

Start and label switching: EM finds a local maximum. It is started from the majority vote (gold items fixed) and,
when there is gold, a second time from confusion matrices measured on the gold items alone; the start with the
higher objective wins. Without gold a panel of annotators that all flip the labels is indistinguishable from a
panel that is right (the likelihood is symmetric); with a few gold items the gold start finds the right reading and
wins on the objective. Both starts are deterministic, so a fit is reproducible.

Weak votes are applied after the fit (see `weak_votes`); the fitted model and its reports are in
`dawid_skene_model`.

How much gold the anchor needs: in the mirror-image solution every label on a gold item is a likely label read as
an unlikely one, which has to outweigh the prior's preference for annotators better than chance (about
log(right/wrong odds) per confusion row). In simulation two or three gold labels per annotator and class were
enough to recover a panel that flips 90% of its labels; one per annotator was not.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from core.metrics.annotator_models.dawid_skene_model import DawidSkeneModel, stratum_accuracies
from core.metrics.annotator_models.fitting import Convergence, LabelTriple, encode, softmax_columns, unzip3
from core.metrics.annotator_models.weak_votes import WeakSource, cap_weak_evidence, weak_vote_log_likelihood


def _sorted_if_possible(values: Iterable[Hashable]) -> tuple[Hashable, ...]:
    unique = list(dict.fromkeys(values))
    try:
        return tuple(sorted(unique))  # type: ignore[type-var]
    except TypeError:
        return tuple(unique)


class DawidSkeneEM:
    """The EM on integer-coded arrays; one instance per fit, reused across starts."""

    def __init__(
        self,
        item: np.ndarray,
        annotator: np.ndarray,
        value: np.ndarray,
        n_items: int,
        n_annotators: int,
        n_classes: int,
        gold_items: np.ndarray,
        gold_classes: np.ndarray,
        confusion_pseudo: np.ndarray,
        class_pseudo: float,
    ) -> None:
        self.item, self.annotator, self.value = item, annotator, value
        self.n_items, self.n_annotators, self.n_classes = n_items, n_annotators, n_classes
        self.gold_items, self.gold_classes = gold_items, gold_classes
        self.confusion_pseudo = confusion_pseudo
        self.class_pseudo = class_pseudo
        k = n_classes
        # Flat index of theta[annotator, true, value] for each label and each true class; confusion cell of a label.
        base = annotator * (k * k) + value
        self.cell_by_class = [base + true * k for true in range(k)]
        self.annotator_value = annotator * k + value
        self.labels_per_cell = np.bincount(self.annotator_value, minlength=n_annotators * k).reshape(n_annotators, k)

    def majority_start(self) -> np.ndarray:
        """(K, I) vote shares per item, gold items one-hot."""
        k, n = self.n_classes, self.n_items
        votes = np.bincount(self.item * k + self.value, minlength=n * k).reshape(n, k).T.astype(float)
        total = votes.sum(axis=0)
        start = np.divide(votes, total, out=np.full_like(votes, 1 / k), where=total > 0)
        start[:, self.gold_items] = 0.0
        start[self.gold_classes, self.gold_items] = 1.0
        return start

    def gold_start(self) -> np.ndarray:
        """(K, I) weights that count only the gold items: the first M-step measures everyone on known answers."""
        start = np.zeros((self.n_classes, self.n_items))
        start[self.gold_classes, self.gold_items] = 1.0
        return start

    def m_step(self, posterior: np.ndarray, *, complete: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Confusions and class prior from (K, I) item weights; `complete` when every item's weights sum to 1."""
        k, a = self.n_classes, self.n_annotators
        counts = np.empty((a, k, k))
        for true in range(k - 1 if complete else k):
            weights = posterior[true][self.item]
            counts[:, true, :] = np.bincount(self.annotator_value, weights=weights, minlength=a * k).reshape(a, k)
        if complete:
            # Weights sum to 1 per item, so the last row is what the others leave of each (annotator, value) count.
            counts[:, k - 1, :] = np.maximum(self.labels_per_cell - counts[:, : k - 1, :].sum(axis=1), 0.0)
        alpha = counts + self.confusion_pseudo
        confusion = alpha / alpha.sum(axis=2, keepdims=True)
        class_alpha = posterior.sum(axis=1) + self.class_pseudo
        return counts, confusion, class_alpha / class_alpha.sum()

    def e_step(self, confusion: np.ndarray, class_prior: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """Posterior (K, I), logits (K, I) before normalisation, and the log-likelihood of all labels."""
        k, n = self.n_classes, self.n_items
        log_confusion = np.log(confusion).ravel()
        logits = np.empty((k, n))
        for true in range(k):
            logits[true] = np.bincount(self.item, weights=log_confusion[self.cell_by_class[true]], minlength=n)
        logits += np.log(class_prior)[:, None]
        posterior, log_evidence = softmax_columns(logits)
        log_likelihood = float(log_evidence.sum())
        if self.gold_items.size:
            gold_logits = logits[self.gold_classes, self.gold_items]
            log_likelihood += float(gold_logits.sum() - log_evidence[self.gold_items].sum())
            posterior[:, self.gold_items] = 0.0
            posterior[self.gold_classes, self.gold_items] = 1.0
        return posterior, logits, log_likelihood

    def log_prior(self, confusion: np.ndarray, class_prior: np.ndarray) -> float:
        return float((self.confusion_pseudo * np.log(confusion)).sum() + self.class_pseudo * np.log(class_prior).sum())

    def run(
        self, start: np.ndarray, name: str, max_iterations: int, tolerance: float, *, complete_start: bool = True
    ) -> tuple[Any, ...]:
        """EM from (K, I) start weights; `complete_start` False when they do not sum to 1 per item (gold start)."""
        posterior = start
        history: list[float] = []
        converged = False
        for iteration in range(max_iterations):
            counts, confusion, class_prior = self.m_step(posterior, complete=complete_start or iteration > 0)
            posterior, logits, log_likelihood = self.e_step(confusion, class_prior)
            objective = log_likelihood + self.log_prior(confusion, class_prior)
            if history and abs(objective - history[-1]) <= tolerance * abs(history[-1]):
                history.append(objective)
                converged = True
                break
            history.append(objective)
        convergence = Convergence(
            iterations=len(history),
            converged=converged,
            log_likelihood=log_likelihood,
            log_objective=history[-1],
            start=name,
            history=tuple(history),
        )
        return posterior, logits, counts, class_prior, convergence

    def fit(self, max_iterations: int, tolerance: float) -> tuple[Any, ...]:
        """EM from the majority vote and, when some gold item has labels, from the gold items; the better wins."""
        best = self.run(self.majority_start(), "majority vote", max_iterations, tolerance)
        if self.gold_items.size and np.isin(self.item, self.gold_items).any():
            from_gold = self.run(self.gold_start(), "gold", max_iterations, tolerance, complete_start=False)
            if from_gold[4].log_objective > best[4].log_objective + 1e-9 * abs(best[4].log_objective):
                best = from_gold
        return best


@dataclass
class LabelData:
    """Labels and gold as integer arrays, labels grouped by item; items with labels first, then gold-only items."""

    classes: tuple[Hashable, ...]
    item_index: dict[Hashable, int]
    annotator_index: dict[Hashable, int]
    item: np.ndarray
    annotator: np.ndarray
    value: np.ndarray
    gold_items: np.ndarray
    gold_classes: np.ndarray
    n_fit_items: int

    @classmethod
    def encode(
        cls,
        labels: Iterable[LabelTriple],
        classes: Sequence[Hashable] | None,
        gold: Mapping[Hashable, Hashable] | None,
    ) -> LabelData:
        gold = dict(gold or {})
        label_items, label_annotators, label_values = unzip3(labels, "label")
        if classes is None:
            classes = _sorted_if_possible([*dict.fromkeys(label_values), *gold.values()])
        classes = tuple(classes)
        if len(classes) < 2:
            raise ValueError(f"need at least two classes, got {classes!r}")
        if len(set(classes)) != len(classes):
            raise ValueError(f"classes must be distinct, got {classes!r}")
        class_index = {c: k for k, c in enumerate(classes)}
        item_index: dict[Hashable, int] = {}
        item = encode(label_items, item_index)
        annotator_index: dict[Hashable, int] = {}
        annotator = encode(label_annotators, annotator_index)
        try:
            value = np.fromiter(map(class_index.__getitem__, label_values), dtype=np.int64, count=len(label_values))
        except KeyError as error:
            raise ValueError(f"label value {error.args[0]!r} is not one of the classes {classes!r}") from None
        unknown_gold = [c for c in gold.values() if c not in class_index]
        if unknown_gold:
            raise ValueError(f"gold class {unknown_gold[0]!r} is not one of the classes {classes!r}")
        gold_items = encode(list(gold), item_index)
        gold_classes = np.fromiter((class_index[c] for c in gold.values()), dtype=np.int64, count=len(gold))
        if not item_index:
            raise ValueError("nothing to fit: no labels and no gold items")
        # Labels grouped by item make every gather and bincount of the EM walk memory in order.
        order = np.argsort(item, kind="stable")
        return cls(
            classes,
            item_index,
            annotator_index,
            item[order],
            annotator[order],
            value[order],
            gold_items,
            gold_classes,
            len(item_index),
        )

    def em(self, confusion_pseudo: np.ndarray, class_pseudo: float) -> DawidSkeneEM:
        return DawidSkeneEM(
            self.item,
            self.annotator,
            self.value,
            self.n_fit_items,
            len(self.annotator_index),
            len(self.classes),
            self.gold_items,
            self.gold_classes,
            confusion_pseudo,
            class_pseudo,
        )


def confusion_pseudocounts(n_classes: int, correct: float, wrong: float) -> np.ndarray:
    """Dirichlet pseudo-counts of every confusion row: `correct` on the diagonal, `wrong` spread over the rest."""
    pseudo = np.full((n_classes, n_classes), wrong / (n_classes - 1))
    np.fill_diagonal(pseudo, correct)
    return pseudo


def fit_dawid_skene(
    labels: Iterable[LabelTriple],
    *,
    classes: Sequence[Hashable] | None = None,
    gold: Mapping[Hashable, Hashable] | None = None,
    weak_votes: Iterable[LabelTriple] = (),
    weak_sources: Mapping[Hashable, WeakSource] | None = None,
    strata: Mapping[Hashable, Hashable] | None = None,
    confusion_prior_correct: float = 2.0,
    confusion_prior_wrong: float = 1.0,
    class_pseudocount: float = 1.0,
    stratum_prior_strength: float = 2.0,
    max_weak_odds: float = 3.0,
    max_iterations: int = 200,
    tolerance: float = 1e-9,
) -> DawidSkeneModel:
    """Fit one confusion matrix per annotator and a posterior per item by EM (see the module docstring).

    - labels: `(item_id, annotator_id, value)` triples; values must be classes;
    - classes: the label values in order; by default every value seen in labels and gold, sorted when possible;
    - gold: `{item_id: true class}`, fixed during the fit;
    - weak_votes / weak_sources: `(item_id, source_id, value)` verifier votes and `{source_id: WeakSource}`;
      they change only the `with_weak=True` posteriors (capped by `max_weak_odds`), never the fit;
    - strata: `{item_id: stratum key}` (e.g. answer type) for per-annotator accuracy per stratum;
    - confusion_prior_correct / confusion_prior_wrong: Dirichlet pseudo-labels per confusion row on the diagonal /
      spread over the other columns; class_pseudocount: per class of the prior;
    - max_iterations / tolerance: EM stops when the objective changes by less than tolerance (relative), or after
      max_iterations (then `convergence.converged` is False).
    """
    if confusion_prior_correct <= 0 or confusion_prior_wrong <= 0 or class_pseudocount <= 0:
        raise ValueError("pseudo-counts must be positive: they keep every probability away from 0 and 1")
    if max_weak_odds < 1:
        raise ValueError("max_weak_odds must be >= 1 (1 ignores weak votes)")
    if max_iterations < 1:
        raise ValueError("max_iterations must be >= 1")
    weak_sources = dict(weak_sources or {})
    data = LabelData.encode(labels, classes, gold)
    classes, k, n_fit_items = data.classes, len(data.classes), data.n_fit_items
    item, annotator, value = data.item, data.annotator, data.value
    item_index, annotator_ids = data.item_index, list(data.annotator_index)
    gold_items = data.gold_items
    weak_items, weak_source_ids, weak_values = unzip3(weak_votes, "weak vote")
    weak_item = encode(weak_items, item_index)  # items known only through weak votes come after the fitted ones
    n_items = len(item_index)
    item_ids = list(item_index)

    confusion_pseudo = confusion_pseudocounts(k, confusion_prior_correct, confusion_prior_wrong)
    em = data.em(confusion_pseudo, class_pseudocount)
    fit_posterior, fit_logits, counts, class_prior, convergence = em.fit(max_iterations, tolerance)

    # Items known only through weak votes have the class prior as human posterior.
    logits = np.empty((k, n_items))
    logits[:, :n_fit_items] = fit_logits
    logits[:, n_fit_items:] = np.log(class_prior)[:, None]
    posterior = np.empty((k, n_items))
    posterior[:, :n_fit_items] = fit_posterior
    posterior[:, n_fit_items:] = class_prior[:, None]
    is_gold = np.zeros(n_items, dtype=bool)
    is_gold[gold_items] = True

    weak_tables = {source: spec.log_likelihoods(classes) for source, spec in weak_sources.items()}
    weak_per_item = np.bincount(weak_item, minlength=n_items)
    posterior_with_weak = posterior.copy()
    if weak_item.size:
        pair_index: dict[Hashable, int] = {}
        pair = encode(list(zip(weak_source_ids, weak_values, strict=True)), pair_index)
        pairs = cast(list[tuple[Hashable, Hashable]], list(pair_index))
        table = np.stack([weak_vote_log_likelihood(weak_tables, s, v) for s, v in pairs], axis=1)  # (K, P)
        weak_logits = np.stack(
            [np.bincount(weak_item, weights=table[true][pair], minlength=n_items) for true in range(k)]
        )
        shifted, _ = softmax_columns(logits + cap_weak_evidence(weak_logits, max_weak_odds))
        not_gold = ~is_gold
        posterior_with_weak[:, not_gold] = shifted[:, not_gold]

    stratum_accuracy = stratum_accuracies(
        strata,
        item_index,
        item,
        annotator,
        value,
        fit_posterior,
        counts,
        confusion_pseudo,
        annotator_ids,
        stratum_prior_strength,
    )
    return DawidSkeneModel(
        classes=classes,
        item_ids=item_ids,
        annotator_ids=annotator_ids,
        class_prior=class_prior,
        confusion_alpha=counts + confusion_pseudo,
        confusion_counts=counts,
        posterior=np.ascontiguousarray(posterior.T),
        posterior_with_weak=np.ascontiguousarray(posterior_with_weak.T),
        labels_per_item=np.bincount(item, minlength=n_items),
        weak_votes_per_item=weak_per_item,
        is_gold=is_gold,
        stratum_accuracy=stratum_accuracy,
        weak_log_likelihoods=weak_tables,
        max_weak_odds=max_weak_odds,
        prior_alpha=confusion_pseudo,
        convergence=convergence,
    )
