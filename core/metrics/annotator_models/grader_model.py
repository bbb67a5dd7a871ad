"""Proof scores (interval 0..7): graders with bias and noise, `fit_grader_model` and the fitted `GraderModel`.

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
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from core.metrics.annotator_models.fitting import Convergence, GradeTriple, encode, unzip3


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
    proof_ids_in, grader_ids_in, scores_in = unzip3(grades, "grade")
    proof_index: dict[Hashable, int] = {}
    proof = encode(proof_ids_in, proof_index)
    grader_index: dict[Hashable, int] = {}
    grader = encode(grader_ids_in, grader_index)
    score = np.asarray(scores_in, dtype=float)
    if score.size and not np.isfinite(score).all():
        raise ValueError("scores must be finite numbers")
    gold_proofs = encode(list(gold), proof_index)
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
