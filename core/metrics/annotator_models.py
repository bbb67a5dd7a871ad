"""Annotator models: Dawid-Skene for categorical labels, a bias-and-noise model for interval proof scores.

Pure numpy, no Django imports. Both models weigh each person by how reliable their labels have been, instead of
the plain majority that counts a careless annotator like a careful one.

Categorical labels: Dawid-Skene
===============================
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

Weak votes from automatic verifiers never enter the fit: they cannot teach the model anything about the humans and
may be wrong in correlated ways. They are applied afterwards, on top of the humans' posterior, through a fixed
confusion matrix given by the verifier's measured rates (`WeakSource`). Their combined evidence on one item is capped:
it may change the posterior odds between any two classes by at most `max_weak_odds` (default 3), so weak votes
alone can never carry an item far from its prior (with an even prior at most 0.75 for two classes) and cannot
overrule agreeing careful annotators; they shift close calls. Posteriors are available with and without them.

Adaptive redundancy: `DawidSkeneModel.item_posterior` gives the posterior of one item from its labels so far with
the fitted confusions and class prior, without refitting.

Per-annotator uncertainty: each confusion row is summarised by the Dirichlet with parameters (expected counts +
pseudo-counts); the standard deviation of a cell is that Dirichlet's marginal one. It treats the soft counts as
observed, i.e. it holds the item posteriors fixed. With a small panel and two or three labels per item the
likelihood is flat along trade-offs between annotators (a better, b worse) and the estimates move several times
more from sample to sample than that: `bootstrap_annotators` refits on resampled items and gives percentile
intervals that include this. Neither corrects a known finite-sample bias of Dawid-Skene: in such panels the best
annotator's accuracy tends to come out a few points low (about 3 points for a 0.95 annotator among 0.6-0.8 ones,
1,500 items, three labels each, in simulation).

How much gold the anchor needs: in the mirror-image solution every label on a gold item is a likely label read as
an unlikely one, which has to outweigh the prior's preference for annotators better than chance (about
log(right/wrong odds) per confusion row). In simulation two or three gold labels per annotator and class were
enough to recover a panel that flips 90% of its labels; one per annotator was not.

Proof scores (interval 0..7): graders with bias and noise
=========================================================
`fit_grader_model` fits score = truth_p + bias_g + noise, noise ~ N(0, sigma_g^2), truth_p ~ N(mu, tau^2), by EM
with the true scores as latent variables (conditional maximisation of biases then noise variances). Priors:

- bias_g ~ N(0, `bias_prior_sd`^2), default 0.5 points: a grader with n grades and noise sigma is shrunk by
  n / (n + sigma^2 / 0.25) towards no bias, i.e. by 4 pseudo-grades at sigma = 1;
- sigma_g^2 gets `noise_prior_dof` = 4 pseudo-grades whose squared residual is the pooled within-proof variance of
  the data, so a grader with few grades keeps close to the panel's typical noise; `min_noise_sd` = 0.1 stops a
  grader who happens to agree exactly from being treated as noiseless.

Limits, to keep in mind with 2-3 grades per proof:

- without gold proofs the absolute position of the scale is set by assuming the graders are unbiased on average
  (the biases are centred to average exactly 0): a panel that is harsh as a whole cannot be detected, only graders
  harsher or milder than the others. Gold proofs anchor the scale;
- with two grades per proof only the sum of the two graders' noise variances is identified from that proof; the
  split between graders comes from how the pairs are rotated across the panel. Fixed pairs (a always with b) leave
  it to the prior, which then splits it about evenly. The standard deviations account for this (a grade is
  compared with the proof's truth as estimated without it), so they are about twice as large as with a known truth;
- scores are bounded and discrete while the model is Gaussian: posterior means are clipped to `score_range`, and
  a proof at 0 or 7 has a standard deviation that is somewhat too large;
- standard deviations are plug-in (empirical Bayes): they do not include the uncertainty of mu, tau and the other
  graders' parameters, so they are slightly too small for small panels.

Neither model comes from a package: crowd-kit, the maintained Dawid-Skene implementation on PyPI, works on pandas
frames, pulls scikit-learn, nltk and transformers, and has neither Dirichlet smoothing, nor verifier votes of fixed
confusion, nor per-cell uncertainty.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, cast

import numpy as np

LabelTriple = tuple[Hashable, Hashable, Hashable]
"""`(item_id, annotator_id, value)` for labels, `(item_id, source_id, value)` for weak votes."""

GradeTriple = tuple[Hashable, Hashable, float]
"""`(proof_id, grader_id, score)`."""

_MIN_PROBABILITY = 1e-6  # floor of a weak source's confusion cells, so that no single vote is absolute


# ---------------------------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------------------------


def _encode(values: Sequence[Hashable], index: dict[Hashable, int]) -> np.ndarray:
    """Integer codes of `values`, adding unseen values to `index`.

    Integer ids (database keys) on an empty index go through numpy and are coded in sorted order; anything else in
    order of first appearance. Either way equal ids get equal codes, which is all the models need.
    """
    if not index and values and type(values[0]) is int:
        try:
            array = np.asarray(values)
        except OverflowError:
            array = None
        if array is not None and array.dtype.kind == "i" and array.ndim == 1:
            distinct, codes = np.unique(array, return_inverse=True)
            index.update(zip(distinct.tolist(), range(distinct.size), strict=True))
            return codes.astype(np.int64, copy=False)
    for value in dict.fromkeys(values):  # one pass in C, then a Python loop over the distinct values only
        if value not in index:
            index[value] = len(index)
    return np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))


def _unzip3(rows: Iterable[tuple[Any, Any, Any]], what: str) -> tuple[Sequence[Any], Sequence[Any], Sequence[Any]]:
    rows = rows if isinstance(rows, list | tuple) else list(rows)
    if any(length != 3 for length in set(map(len, rows))):
        raise ValueError(f"every {what} must be a triple")
    return tuple(list(map(itemgetter(position), rows)) for position in range(3))  # type: ignore[return-value]


def _softmax_columns(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise softmax of a (K, n) array and the column-wise log-sum-exp (in place where possible)."""
    peak = logits.max(axis=0)
    weights = logits - peak
    np.exp(weights, out=weights)
    total = weights.sum(axis=0)
    weights /= total
    np.log(total, out=total)
    total += peak
    return weights, total


@dataclass(frozen=True)
class Convergence:
    """How an EM fit ended.

    `log_likelihood` is the log-probability of the observed labels (or scores) under the fitted parameters,
    `log_objective` adds the log prior terms and is what the EM maximises; `history` holds it after every iteration.
    """

    iterations: int
    converged: bool
    log_likelihood: float
    log_objective: float
    start: str
    history: tuple[float, ...]


# ---------------------------------------------------------------------------------------------------------------
# Dawid-Skene
# ---------------------------------------------------------------------------------------------------------------


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
            weak += _weak_vote_log_likelihood(self._weak_log_likelihoods, source, value)
            n_weak += 1
        logits += _cap_weak_evidence(weak[:, None], self.max_weak_odds)[:, 0]
        posterior, _ = _softmax_columns(logits[:, None])
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


def _weak_vote_log_likelihood(
    tables: Mapping[Hashable, Mapping[Hashable, np.ndarray]], source: Hashable, value: Hashable
) -> np.ndarray:
    if source not in tables:
        raise KeyError(f"weak vote from unknown source {source!r}: give its confusion in weak_sources")
    if value not in tables[source]:
        raise ValueError(f"weak source {source!r} has no confusion column for value {value!r}")
    return tables[source][value]


def _cap_weak_evidence(weak_logits: np.ndarray, max_odds: float) -> np.ndarray:
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


def _sorted_if_possible(values: Iterable[Hashable]) -> tuple[Hashable, ...]:
    unique = list(dict.fromkeys(values))
    try:
        return tuple(sorted(unique))  # type: ignore[type-var]
    except TypeError:
        return tuple(unique)


class _DawidSkeneEM:
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
        posterior, log_evidence = _softmax_columns(logits)
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
class _LabelData:
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
    ) -> _LabelData:
        gold = dict(gold or {})
        label_items, label_annotators, label_values = _unzip3(labels, "label")
        if classes is None:
            classes = _sorted_if_possible([*dict.fromkeys(label_values), *gold.values()])
        classes = tuple(classes)
        if len(classes) < 2:
            raise ValueError(f"need at least two classes, got {classes!r}")
        if len(set(classes)) != len(classes):
            raise ValueError(f"classes must be distinct, got {classes!r}")
        class_index = {c: k for k, c in enumerate(classes)}
        item_index: dict[Hashable, int] = {}
        item = _encode(label_items, item_index)
        annotator_index: dict[Hashable, int] = {}
        annotator = _encode(label_annotators, annotator_index)
        try:
            value = np.fromiter(map(class_index.__getitem__, label_values), dtype=np.int64, count=len(label_values))
        except KeyError as error:
            raise ValueError(f"label value {error.args[0]!r} is not one of the classes {classes!r}") from None
        unknown_gold = [c for c in gold.values() if c not in class_index]
        if unknown_gold:
            raise ValueError(f"gold class {unknown_gold[0]!r} is not one of the classes {classes!r}")
        gold_items = _encode(list(gold), item_index)
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

    def em(self, confusion_pseudo: np.ndarray, class_pseudo: float) -> _DawidSkeneEM:
        return _DawidSkeneEM(
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


def _confusion_pseudocounts(n_classes: int, correct: float, wrong: float) -> np.ndarray:
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
    data = _LabelData.encode(labels, classes, gold)
    classes, k, n_fit_items = data.classes, len(data.classes), data.n_fit_items
    item, annotator, value = data.item, data.annotator, data.value
    item_index, annotator_ids = data.item_index, list(data.annotator_index)
    gold_items = data.gold_items
    weak_items, weak_source_ids, weak_values = _unzip3(weak_votes, "weak vote")
    weak_item = _encode(weak_items, item_index)  # items known only through weak votes come after the fitted ones
    n_items = len(item_index)
    item_ids = list(item_index)

    confusion_pseudo = _confusion_pseudocounts(k, confusion_prior_correct, confusion_prior_wrong)
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
        pair = _encode(list(zip(weak_source_ids, weak_values, strict=True)), pair_index)
        pairs = cast(list[tuple[Hashable, Hashable]], list(pair_index))
        table = np.stack([_weak_vote_log_likelihood(weak_tables, s, v) for s, v in pairs], axis=1)  # (K, P)
        weak_logits = np.stack(
            [np.bincount(weak_item, weights=table[true][pair], minlength=n_items) for true in range(k)]
        )
        shifted, _ = _softmax_columns(logits + _cap_weak_evidence(weak_logits, max_weak_odds))
        not_gold = ~is_gold
        posterior_with_weak[:, not_gold] = shifted[:, not_gold]

    stratum_accuracy = _stratum_accuracies(
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


@dataclass(frozen=True)
class AnnotatorInterval:
    """Percentile bootstrap intervals of one annotator's accuracy and confusion cells, over `resamples` refits."""

    resamples: int
    accuracy: tuple[float, float]
    confusion: dict[Hashable, dict[Hashable, tuple[float, float]]]


def bootstrap_annotators(
    labels: Iterable[LabelTriple],
    *,
    classes: Sequence[Hashable] | None = None,
    gold: Mapping[Hashable, Hashable] | None = None,
    resamples: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
    confusion_prior_correct: float = 2.0,
    confusion_prior_wrong: float = 1.0,
    class_pseudocount: float = 1.0,
    max_iterations: int = 200,
    tolerance: float = 1e-9,
) -> dict[Hashable, AnnotatorInterval]:
    """Bootstrap intervals of every annotator's accuracy and confusion, refitting on items drawn with replacement.

    The standard deviations of `AnnotatorEstimate` hold the item posteriors fixed. With two or three labels per
    item from a small panel the likelihood is flat along trade-offs between annotators (if a is better, b must be
    worse), and the estimates move far more from sample to sample than those figures say. Resampling whole items
    (with their labels and gold) and refitting captures that. Each resample costs one fit; `seed` makes it
    reproducible. An annotator absent from a resample is left out of it (`resamples` counts the others).
    """
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    data = _LabelData.encode(labels, classes, gold)
    k, n, n_annotators = len(data.classes), data.n_fit_items, len(data.annotator_index)
    pseudo = _confusion_pseudocounts(k, confusion_prior_correct, confusion_prior_wrong)
    labels_per_item = np.bincount(data.item, minlength=n)
    first_label = np.cumsum(labels_per_item) - labels_per_item
    gold_class_of = np.full(n, -1)
    gold_class_of[data.gold_items] = data.gold_classes
    rng = np.random.default_rng(seed)
    accuracy = np.full((resamples, n_annotators), np.nan)
    confusion = np.full((resamples, n_annotators, k, k), np.nan)
    for resample in range(resamples):
        chosen = rng.integers(0, n, n)
        lengths = labels_per_item[chosen]
        starts_in_resample = np.cumsum(lengths) - lengths
        positions = np.repeat(first_label[chosen] - starts_in_resample, lengths) + np.arange(lengths.sum())
        chosen_gold = gold_class_of[chosen]
        gold_items = np.flatnonzero(chosen_gold >= 0)
        em = _DawidSkeneEM(
            np.repeat(np.arange(n), lengths),
            data.annotator[positions],
            data.value[positions],
            n,
            n_annotators,
            k,
            gold_items,
            chosen_gold[gold_items],
            pseudo,
            class_pseudocount,
        )
        counts = em.fit(max_iterations, tolerance)[2]
        alpha = counts + pseudo
        mean = alpha / alpha.sum(axis=2, keepdims=True)
        per_class = counts.sum(axis=2)
        given = per_class.sum(axis=1)
        present = given > 0
        right = (per_class * np.diagonal(mean, axis1=1, axis2=2)).sum(axis=1)
        accuracy[resample, present] = right[present] / given[present]
        confusion[resample, present] = mean[present]
    tail = (1 - confidence) / 2
    result: dict[Hashable, AnnotatorInterval] = {}
    for position, annotator_id in enumerate(data.annotator_index):
        kept = ~np.isnan(accuracy[:, position])
        low, high = np.quantile(accuracy[kept, position], [tail, 1 - tail])
        cells = np.quantile(confusion[kept, position], [tail, 1 - tail], axis=0)
        result[annotator_id] = AnnotatorInterval(
            resamples=int(kept.sum()),
            accuracy=(float(low), float(high)),
            confusion={
                true: {given: (float(cells[0, i, j]), float(cells[1, i, j])) for j, given in enumerate(data.classes)}
                for i, true in enumerate(data.classes)
            },
        )
    return result


def _stratum_accuracies(
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


# ---------------------------------------------------------------------------------------------------------------
# Interval scores: grader bias and noise
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProofScoreEstimate:
    """Posterior of a proof's true score: mean (clipped to the score range) and standard deviation."""

    mean: float
    sd: float
    n_grades: int
    gold: bool


@dataclass(frozen=True)
class GraderEstimate:
    """A grader's estimated bias (score given minus true score, on average) and noise, each with a standard deviation.

    Both standard deviations come from the information each grade carries once the true score of its proof is
    estimated without it (other grades and the truth prior): with two grades per proof a grade compares the grader
    with one other grader, which is much less than a comparison with the truth. Prior terms are included.
    """

    n_grades: int
    bias: float
    bias_sd: float
    sigma: float
    sigma_sd: float


class GraderModel:
    """A fitted bias-and-noise model of proof graders; built by `fit_grader_model`."""

    def __init__(
        self,
        *,
        proof_ids: list[Hashable],
        grader_ids: list[Hashable],
        truth_mean: float,
        truth_sd: float,
        pooled_noise_sd: float,
        score_range: tuple[float, float] | None,
        proof_mean: np.ndarray,
        proof_variance: np.ndarray,
        grades_per_proof: np.ndarray,
        is_gold: np.ndarray,
        bias: np.ndarray,
        bias_sd: np.ndarray,
        sigma: np.ndarray,
        sigma_sd: np.ndarray,
        grades_per_grader: np.ndarray,
        convergence: Convergence,
    ) -> None:
        self.truth_mean = truth_mean
        self.truth_sd = truth_sd
        self.pooled_noise_sd = pooled_noise_sd
        self.score_range = score_range
        self.convergence = convergence
        self._proof_ids = proof_ids
        self._proof_index = {proof: position for position, proof in enumerate(proof_ids)}
        self._grader_ids = grader_ids
        self._grader_index = {grader: position for position, grader in enumerate(grader_ids)}
        self._proof_mean = proof_mean
        self._proof_variance = proof_variance
        self._grades_per_proof = grades_per_proof
        self._is_gold = is_gold
        self._bias, self._bias_sd = bias, bias_sd
        self._sigma, self._sigma_sd = sigma, sigma_sd
        self._grades_per_grader = grades_per_grader

    def _clip(self, value: float) -> float:
        if self.score_range is None:
            return value
        low, high = self.score_range
        return min(max(value, low), high)

    def _proof_at(self, position: int) -> ProofScoreEstimate:
        return ProofScoreEstimate(
            mean=self._clip(float(self._proof_mean[position])),
            sd=float(math.sqrt(self._proof_variance[position])),
            n_grades=int(self._grades_per_proof[position]),
            gold=bool(self._is_gold[position]),
        )

    def proof(self, proof_id: Hashable) -> ProofScoreEstimate:
        return self._proof_at(self._proof_index[proof_id])

    def proofs(self) -> dict[Hashable, ProofScoreEstimate]:
        return {proof: self._proof_at(position) for position, proof in enumerate(self._proof_ids)}

    def grader(self, grader_id: Hashable) -> GraderEstimate:
        g = self._grader_index[grader_id]
        return GraderEstimate(
            n_grades=int(self._grades_per_grader[g]),
            bias=float(self._bias[g]),
            bias_sd=float(self._bias_sd[g]),
            sigma=float(self._sigma[g]),
            sigma_sd=float(self._sigma_sd[g]),
        )

    def graders(self) -> dict[Hashable, GraderEstimate]:
        return {grader: self.grader(grader) for grader in self._grader_ids}

    def proof_posterior(self, grades: Iterable[tuple[Hashable, float]]) -> ProofScoreEstimate:
        """Posterior of one proof's true score from its `(grader_id, score)` grades so far, with the fitted model.

        A grader the model has not seen counts as unbiased with the pooled noise.
        """
        precision = 1 / self.truth_sd**2
        weighted = self.truth_mean * precision
        n_grades = 0
        for grader, score in grades:
            g = self._grader_index.get(grader)
            bias, sigma = (0.0, self.pooled_noise_sd) if g is None else (self._bias[g], self._sigma[g])
            precision += 1 / sigma**2
            weighted += (float(score) - bias) / sigma**2
            n_grades += 1
        return ProofScoreEstimate(
            mean=self._clip(weighted / precision), sd=math.sqrt(1 / precision), n_grades=n_grades, gold=False
        )


def fit_grader_model(
    grades: Iterable[GradeTriple],
    *,
    gold: Mapping[Hashable, float] | None = None,
    score_range: tuple[float, float] | None = (0.0, 7.0),
    bias_prior_sd: float = 0.5,
    noise_prior_dof: float = 4.0,
    min_noise_sd: float = 0.1,
    max_iterations: int = 500,
    tolerance: float = 1e-10,
) -> GraderModel:
    """Fit score = truth + bias_grader + N(0, sigma_grader^2) over `(proof_id, grader_id, score)` triples by EM.

    gold: `{proof_id: true score}`, fixed. See the module docstring for the priors and the limits of the model.
    """
    if bias_prior_sd <= 0 or noise_prior_dof < 0 or min_noise_sd <= 0:
        raise ValueError("bias_prior_sd and min_noise_sd must be positive, noise_prior_dof non-negative")
    if max_iterations < 1:
        raise ValueError("max_iterations must be >= 1")
    gold = {proof: float(score) for proof, score in (gold or {}).items()}
    proof_ids_in, grader_ids_in, scores_in = _unzip3(grades, "grade")
    proof_index: dict[Hashable, int] = {}
    proof = _encode(proof_ids_in, proof_index)
    grader_index: dict[Hashable, int] = {}
    grader = _encode(grader_ids_in, grader_index)
    score = np.asarray(scores_in, dtype=float)
    if score.size and not np.isfinite(score).all():
        raise ValueError("scores must be finite numbers")
    gold_proofs = _encode(list(gold), proof_index)
    gold_scores = np.fromiter(gold.values(), dtype=float, count=len(gold))
    n_proofs, n_graders = len(proof_index), len(grader_index)
    if n_graders == 0:
        raise ValueError("nothing to fit: no grades")

    grades_per_proof = np.bincount(proof, minlength=n_proofs)
    grades_per_grader = np.bincount(grader, minlength=n_graders).astype(float)
    is_gold = np.zeros(n_proofs, dtype=bool)
    is_gold[gold_proofs] = True
    not_gold = ~is_gold
    graded_not_gold = not_gold & (grades_per_proof > 0)

    # Pooled within-proof variance: the noise prior's scale and the start of every sigma.
    proof_sum = np.bincount(proof, weights=score, minlength=n_proofs)
    proof_average = np.divide(proof_sum, grades_per_proof, out=np.zeros(n_proofs), where=grades_per_proof > 0)
    replicated_dof = np.maximum(grades_per_proof - 1, 0).sum()
    if replicated_dof > 0:
        pooled_variance = float(((score - proof_average[proof]) ** 2).sum() / replicated_dof)
    else:
        pooled_variance = 1.0
    min_variance = min_noise_sd**2
    pooled_variance = max(pooled_variance, min_variance)
    scale = np.where(is_gold, 0.0, proof_average)
    scale[gold_proofs] = gold_scores
    mean_truth = float(scale.mean())
    min_truth_variance = 1e-4 if score_range is None else 1e-4 * (score_range[1] - score_range[0]) ** 2
    truth_variance = max(float(scale.var()) - pooled_variance / max(grades_per_proof.mean(), 1.0), min_truth_variance)

    bias = np.zeros(n_graders)
    variance = np.full(n_graders, pooled_variance)
    bias_prior_variance = bias_prior_sd**2
    history: list[float] = []
    converged = False
    log_2pi = math.log(2 * math.pi)

    def e_step() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        precision_of = 1 / variance[grader]
        grade_precision = np.bincount(proof, weights=precision_of, minlength=n_proofs)
        weighted = np.bincount(proof, weights=(score - bias[grader]) * precision_of, minlength=n_proofs)
        precision = 1 / truth_variance + grade_precision
        mean = (mean_truth / truth_variance + weighted) / precision
        posterior_variance = 1 / precision
        mean[gold_proofs] = gold_scores
        posterior_variance[gold_proofs] = 0.0
        return mean, posterior_variance, precision

    def log_likelihood() -> float:
        """Marginal log-likelihood: per ungraded-gold proof the grades are jointly normal, covariance tau^2 11' + D."""
        precision_of = 1 / variance[grader]
        residual = score - bias[grader] - np.where(is_gold, gold_scores_full, mean_truth)[proof]
        total_precision = np.bincount(proof, weights=precision_of, minlength=n_proofs)
        first = np.bincount(proof, weights=residual * precision_of, minlength=n_proofs)
        second = np.bincount(proof, weights=residual**2 * precision_of, minlength=n_proofs)
        log_variances = np.bincount(proof, weights=np.log(variance[grader]), minlength=n_proofs)
        shrink = 1 + truth_variance * total_precision
        free = graded_not_gold
        value = (
            -0.5
            * (
                grades_per_proof[free] * log_2pi
                + log_variances[free]
                + np.log(shrink[free])
                + second[free]
                - truth_variance * first[free] ** 2 / shrink[free]
            ).sum()
        )
        # Gold proofs: their grades given the known score, and the known score under the truth prior.
        value += -0.5 * (grades_per_proof[is_gold] * log_2pi + log_variances[is_gold] + second[is_gold]).sum()
        value += -0.5 * (log_2pi + math.log(truth_variance) + (gold_scores - mean_truth) ** 2 / truth_variance).sum()
        return float(value)

    def log_prior() -> float:
        bias_term = -0.5 * (bias**2).sum() / bias_prior_variance
        noise_term = -0.5 * noise_prior_dof * (np.log(variance) + pooled_variance / variance).sum()
        return float(bias_term + noise_term)

    gold_scores_full = np.zeros(n_proofs)
    gold_scores_full[gold_proofs] = gold_scores
    for _ in range(max_iterations):
        mean, posterior_variance, _ = e_step()
        # Conditional maximisation: truth prior, then biases given the noise, then the noise given the biases.
        mean_truth = float(mean.mean())
        truth_variance = max(float(((mean - mean_truth) ** 2 + posterior_variance).mean()), min_truth_variance)
        residual = score - mean[proof]
        bias = np.bincount(grader, weights=residual, minlength=n_graders) / (
            grades_per_grader + variance / bias_prior_variance
        )
        squared = (residual - bias[grader]) ** 2 + posterior_variance[proof]
        sum_squares = np.bincount(grader, weights=squared, minlength=n_graders)
        variance = np.maximum(
            (sum_squares + noise_prior_dof * pooled_variance) / (grades_per_grader + noise_prior_dof), min_variance
        )
        if not gold:
            # Without gold, shifting every bias by d and the truth mean by -d leaves the likelihood unchanged: EM
            # crawls along that ridge. Jump to its best point, where the biases average 0 (the prior's optimum).
            shift = float(bias.mean())
            bias = bias - shift
            mean_truth += shift
        objective = log_likelihood() + log_prior()
        if history and abs(objective - history[-1]) <= tolerance * abs(history[-1]):
            history.append(objective)
            converged = True
            break
        history.append(objective)

    mean, posterior_variance, precision = e_step()
    # Bias uncertainty: each grade compares the grader with the proof's truth as known from the other grades.
    grade_precision = 1 / variance[grader]
    others_variance = np.where(is_gold[proof], 0.0, 1 / np.maximum(precision[proof] - grade_precision, 1e-300))
    residual_variance = variance[grader] + others_variance
    information = np.bincount(grader, weights=1 / residual_variance, minlength=n_graders)
    bias_sd = 1 / np.sqrt(information + 1 / bias_prior_variance)
    # Noise: a residual of variance sigma^2 + u carries 1 / (2 (sigma^2 + u)^2) of information on sigma^2; with two
    # grades per proof u is about sigma^2 and each grade tells a quarter of what a direct residual would.
    variance_information = (
        np.bincount(grader, weights=0.5 / residual_variance**2, minlength=n_graders)
        + 0.5 * noise_prior_dof / variance**2
    )
    sigma = np.sqrt(variance)
    sigma_sd = 1 / np.sqrt(variance_information) / (2 * sigma)
    convergence = Convergence(
        iterations=len(history),
        converged=converged,
        log_likelihood=log_likelihood(),
        log_objective=history[-1],
        start="proof averages",
        history=tuple(history),
    )
    return GraderModel(
        proof_ids=list(proof_index),
        grader_ids=list(grader_index),
        truth_mean=mean_truth,
        truth_sd=math.sqrt(truth_variance),
        pooled_noise_sd=math.sqrt(pooled_variance),
        score_range=score_range,
        proof_mean=mean,
        proof_variance=posterior_variance,
        grades_per_proof=grades_per_proof,
        is_gold=is_gold,
        bias=bias,
        bias_sd=bias_sd,
        sigma=sigma,
        sigma_sd=sigma_sd,
        grades_per_grader=grades_per_grader,
        convergence=convergence,
    )
