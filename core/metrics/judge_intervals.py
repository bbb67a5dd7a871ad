"""The uncertainty of a meta-evaluation: bootstrap intervals that resample questions, paired comparisons of two
verifiers, the humans' own error, and how many more labeled items a target interval width needs.

Pure module (numpy only). Its input is counted per question, never per item: each question of a scope adds a
vector of counts, its items' cells of the confusion matrix (`CELLS`), and the completions of one question are
resampled together, since they are correlated (one question is hard for every judge). A scope is given either by
its distinct vectors and how many questions have each (`QuestionCounts.from_histogram`), which the bootstrap
resamples exactly (one multinomial draw over the distinct vectors per resample: the same distribution as drawing
the questions with replacement, in time that grows with the distinct vectors, not the questions), or, for a scope of
more than `EXACT_QUESTIONS` questions, by the moments of its vectors (`from_moments`: the number of questions, the
sum and the sum of outer products), from which the resampled sums are drawn from their normal limit, with the same
mean and covariance as the exact resampling. Every draw comes from a generator seeded by the seed and the scope's
name, so a figure's interval does not depend on which other figures were asked for.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

# The cells of one verifier's per-question vector: (human label, verdict) with inconclusive verdicts apart, so both
# the macro-F1 (inconclusive counted as a wrong judgment) and the calibrated abstention figures can be computed.
CELLS = ("tp", "fn", "fn_inconclusive", "tn", "fp", "fp_inconclusive")
CELL_OF = {
    (True, "correct"): 0,
    (True, "incorrect"): 1,
    (True, "inconclusive"): 2,
    (False, "incorrect"): 3,
    (False, "correct"): 4,
    (False, "inconclusive"): 5,
}
WIDTH = len(CELLS)
# A pair's vector over the items both verifiers judged: the first verifier's cells, the second's, then the items
# only the first judged right and those only the second judged right (McNemar's discordant counts).
PAIR_WIDTH = 2 * WIDTH + 2
ONLY_FIRST_RIGHT, ONLY_SECOND_RIGHT = 2 * WIDTH, 2 * WIDTH + 1

FIGURES = ("accuracy", "macro_f1", "tpr", "tnr", "ppv", "npv", "decided_coverage", "decided_precision")
FIGURE_NAMES = {
    "accuracy": "accuracy",
    "macro_f1": "macro-F1",
    "tpr": "TPR",
    "tnr": "TNR",
    "ppv": "PPV",
    "npv": "NPV",
    "decided_coverage": "coverage (decided)",
    "decided_precision": "precision (decided)",
}
RESAMPLES = 1000
CONFIDENCE = 0.95
EXACT_QUESTIONS = 2000  # scopes up to this many questions are resampled exactly
TARGET_WIDTH = 0.10  # the default target: a 95% interval 10 points wide (about ±5)
UNCERTAIN_BELOW = 0.9  # a final label whose probability of being right is below this is uncertain
MIN_QUESTIONS = 2  # a scope of one question has no interval: every resample is that question


def cell_of(human_correct: bool, status: str) -> int:
    """The index in `CELLS` of an item with this final label and this verdict."""
    return CELL_OF[(bool(human_correct), status)]


def right(human_correct: bool, status: str) -> bool:
    """Whether the verdict matches the label (an inconclusive verdict never does)."""
    return status == ("correct" if human_correct else "incorrect")


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


def figures_of_sums(sums: np.ndarray) -> dict[str, np.ndarray]:
    """Every figure of `FIGURES` (and `n`) from summed cell vectors, shape (..., 6); NaN where undefined. The same
    ratios as `judge_eval.BinaryReport`, vectorised over resamples."""
    sums = np.asarray(sums, dtype=float)
    tp, tn = sums[..., 0], sums[..., 3]
    fn = sums[..., 1] + sums[..., 2]
    fp = sums[..., 4] + sums[..., 5]
    inconclusive = sums[..., 2] + sums[..., 5]
    n = tp + fn + tn + fp
    decided = n - inconclusive
    f1_correct = _ratio(2 * tp, 2 * tp + fp + fn)
    f1_incorrect = _ratio(2 * tn, 2 * tn + fn + fp)
    return {
        "n": n,
        "accuracy": _ratio(tp + tn, n),
        "macro_f1": (f1_correct + f1_incorrect) / 2,
        "tpr": _ratio(tp, tp + fn),
        "tnr": _ratio(tn, tn + fp),
        "ppv": _ratio(tp, tp + fp),
        "npv": _ratio(tn, tn + fn),
        "decided_coverage": _ratio(decided, n),
        "decided_precision": _ratio(tp + tn, decided),
    }


@dataclass
class QuestionCounts:
    """The per-question count vectors of one scope: their number, sum and sum of outer products, and, when known,
    the distinct vectors with how many questions have each."""

    questions: int
    sums: np.ndarray
    second: np.ndarray
    vectors: np.ndarray | None = None
    weights: np.ndarray | None = None

    @classmethod
    def empty(cls, width: int) -> QuestionCounts:
        return cls(0, np.zeros(width), np.zeros((width, width)), np.zeros((0, width)), np.zeros(0, dtype=np.int64))

    @classmethod
    def from_histogram(cls, vectors: Sequence[Sequence[int]], weights: Sequence[int], width: int) -> QuestionCounts:
        """Distinct vectors (rows) and the number of questions with each; zero vectors are dropped."""
        matrix = np.asarray(vectors, dtype=float).reshape(-1, width)
        counts = np.asarray(weights, dtype=np.int64).reshape(-1)
        keep = (counts > 0) & matrix.any(axis=1)
        matrix, counts = matrix[keep], counts[keep]
        return cls(
            questions=int(counts.sum()),
            sums=counts @ matrix,
            second=(matrix * counts[:, None]).T @ matrix,
            vectors=matrix,
            weights=counts,
        )

    @classmethod
    def from_moments(cls, questions: int, sums: Sequence[float] | np.ndarray, second: np.ndarray) -> QuestionCounts:
        return cls(int(questions), np.asarray(sums, dtype=float), np.asarray(second, dtype=float))

    @property
    def exact(self) -> bool:
        return self.vectors is not None

    def __add__(self, other: QuestionCounts) -> QuestionCounts:
        vectors = weights = None
        if self.vectors is not None and other.vectors is not None:
            vectors = np.vstack([self.vectors, other.vectors])
        if self.weights is not None and other.weights is not None and vectors is not None:
            weights = np.concatenate([self.weights, other.weights])
        return QuestionCounts(
            self.questions + other.questions,
            self.sums + other.sums,
            self.second + other.second,
            vectors,
            weights if vectors is not None else None,
        )


def generator(seed: int, scope: str) -> np.random.Generator:
    """The random generator of one scope: the same draws for the same seed and scope name, whatever else is
    computed."""
    return np.random.default_rng([int(seed), zlib.crc32(scope.encode("utf-8"))])


def resampled_sums(counts: QuestionCounts, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """`resamples` bootstrap resamples of the scope's summed vector, shape (resamples, width): the questions drawn
    with replacement (a multinomial over the distinct vectors) when the vectors are known, else the normal limit
    of that draw (same mean and covariance; sums below zero are cut to zero)."""
    width = counts.sums.shape[0]
    if counts.questions == 0 or resamples == 0:
        return np.zeros((0, width))
    if counts.vectors is not None and counts.weights is not None:
        picks = rng.multinomial(counts.questions, counts.weights / counts.questions, size=resamples)
        return picks @ counts.vectors
    mean = counts.sums / counts.questions
    covariance = counts.second / counts.questions - np.outer(mean, mean)
    draws = rng.multivariate_normal(
        counts.questions * mean, counts.questions * covariance, size=resamples, method="eigh", check_valid="ignore"
    )
    return np.clip(draws, 0, None)


def percentile_interval(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The percentile interval of the defined values; None when fewer than half the resamples define it."""
    defined = values[~np.isnan(values)]
    if defined.size == 0 or defined.size * 2 < values.size:
        return None
    tail = (1 - confidence) / 2
    low, high = np.quantile(defined, [tail, 1 - tail])
    return float(low), float(high)


def percentile_intervals(
    draws: Mapping[str, np.ndarray], confidence: float = CONFIDENCE
) -> dict[str, tuple[float, float] | None]:
    """`percentile_interval` of several figures' resampled values, with one quantile computation for all those
    that every resample defines."""
    names = list(draws)
    found: dict[str, tuple[float, float] | None] = {}
    complete = [name for name in names if draws[name].size and not np.isnan(draws[name]).any()]
    if complete:
        tail = (1 - confidence) / 2
        ends = np.quantile(np.vstack([draws[name] for name in complete]), [tail, 1 - tail], axis=1)
        for position, name in enumerate(complete):
            found[name] = (float(ends[0, position]), float(ends[1, position]))
    for name in names:
        if name not in found:
            found[name] = percentile_interval(draws[name], confidence)
    return found


def _point(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def scope_intervals(
    counts: QuestionCounts,
    *,
    scope: str,
    seed: int = 0,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> dict[str, Any]:
    """Every figure of one verifier on one scope with its percentile interval: `{"questions", "method",
    <figure>: {"value", "low", "high"}}`; `low`/`high` are None when the figure is undefined, without resamples, or
    for a scope of fewer than `MIN_QUESTIONS` questions."""
    point = figures_of_sums(counts.sums)
    result: dict[str, Any] = {
        "questions": counts.questions,
        "method": "exact" if counts.exact else "normal",
    }
    intervals: dict[str, tuple[float, float] | None] = {}
    if resamples and counts.questions >= MIN_QUESTIONS:
        draws = figures_of_sums(resampled_sums(counts, resamples, generator(seed, scope)))
        intervals = percentile_intervals({figure: draws[figure] for figure in FIGURES}, confidence)
    for figure in FIGURES:
        interval = intervals.get(figure)
        value = _point(float(point[figure]))
        result[figure] = {
            "value": value,
            "low": interval[0] if interval and value is not None else None,
            "high": interval[1] if interval and value is not None else None,
        }
    return result


# ---------------------------------------------------------------- paired comparisons


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts: twice the binomial tail of the smaller count
    under Bin(b + c, 1/2), at most 1. Exact rational arithmetic up to 1,000 discordant items, logarithms beyond."""
    if only_first < 0 or only_second < 0:
        raise ValueError("discordant counts must be >= 0")
    n, k = only_first + only_second, min(only_first, only_second)
    if n == 0 or only_first == only_second:
        return 1.0
    if n <= 1000:
        tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n)
        return float(min(Fraction(1), 2 * tail))
    steps = np.arange(1, k + 1, dtype=float)
    logs = np.concatenate([[0.0], np.cumsum(np.log((n - steps + 1) / steps))]) - n * math.log(2)
    top = logs.max()
    log_tail = top + math.log(float(np.exp(logs - top).sum()))
    return float(min(1.0, 2 * math.exp(log_tail)))


def paired_comparison(
    counts: QuestionCounts,
    *,
    scope: str,
    seed: int = 0,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> dict[str, Any]:
    """Two verifiers on the items both judged, from pair vectors (`PAIR_WIDTH` cells): for each figure the first
    minus the second with its paired-bootstrap interval (the same resampled questions for both), and McNemar's
    exact test on the items exactly one of them judged right."""
    first_point = figures_of_sums(counts.sums[:WIDTH])
    second_point = figures_of_sums(counts.sums[WIDTH : 2 * WIDTH])
    only_first, only_second = int(round(counts.sums[ONLY_FIRST_RIGHT])), int(round(counts.sums[ONLY_SECOND_RIGHT]))
    result: dict[str, Any] = {
        "questions": counts.questions,
        "items": int(round(float(first_point["n"]))),
        "method": "exact" if counts.exact else "normal",
        "only_first_right": only_first,
        "only_second_right": only_second,
        "mcnemar_p": mcnemar_exact(only_first, only_second),
    }
    intervals: dict[str, tuple[float, float] | None] = {}
    if resamples and counts.questions >= MIN_QUESTIONS:
        sums = resampled_sums(counts, resamples, generator(seed, scope))
        first, second = figures_of_sums(sums[:, :WIDTH]), figures_of_sums(sums[:, WIDTH : 2 * WIDTH])
        intervals = percentile_intervals({figure: first[figure] - second[figure] for figure in FIGURES}, confidence)
    for figure in FIGURES:
        one, other = float(first_point[figure]), float(second_point[figure])
        difference = None if math.isnan(one) or math.isnan(other) else one - other
        interval = intervals.get(figure)
        result[figure] = {
            "first": _point(one),
            "second": _point(other),
            "difference": difference,
            "low": interval[0] if interval and difference is not None else None,
            "high": interval[1] if interval and difference is not None else None,
        }
    return result


def _points(value: float) -> str:
    return f"{100 * value:+.1f}".replace("+0.0", "0.0").replace("-0.0", "0.0")


def comparison_sentence(
    first: str, second: str, scope: str, comparison: Mapping[str, Any], figure: str = "accuracy"
) -> str | None:
    """One plain sentence about one figure of a paired comparison, e.g. "judge-a is more accurate than judge-b on
    B - Expressions: +4.1 points, 95% interval +1.2 to +7.0." The better one is named first; when the interval
    holds zero the two are called not distinguishable. None when the difference is undefined."""
    entry = comparison[figure]
    difference, low, high = entry["difference"], entry["low"], entry["high"]
    if difference is None:
        return None
    where = f" on {scope}" if scope else ""
    if low is None or high is None:
        return f"{first} minus {second} in {FIGURE_NAMES[figure]}{where}: {_points(difference)} points (no interval)."
    if low <= 0 <= high:
        return (
            f"{first} and {second} are not distinguishable in {FIGURE_NAMES[figure]}{where}: "
            f"{_points(difference)} points, 95% interval {_points(low)} to {_points(high)}."
        )
    better, worse = (first, second) if difference > 0 else (second, first)
    if difference < 0:
        difference, low, high = -difference, -high, -low
    quality = "more accurate" if figure == "accuracy" else f"better in {FIGURE_NAMES[figure]}"
    return (
        f"{better} is {quality} than {worse}{where}: {_points(difference)} points, "
        f"95% interval {_points(low)} to {_points(high)}."
    )


# ---------------------------------------------------------------- how many more labeled items


def items_needed(items: int, width: float | None, target: float, *, worst_case_share: float = 0.5) -> int | None:
    """More labeled items a scope needs for its interval to be `target` wide. An interval narrows as one over the
    square root of the items (at the scope's present items per question), so `items * (width / target)**2`
    items are needed in all; without an interval, the binomial worst case (a share of 0.5) with no clustering gives a
    lower bound. 0 when the interval is already narrow enough."""
    if target <= 0:
        raise ValueError("the target width must be > 0")
    if width is None or items <= 0:
        spread = worst_case_share * (1 - worst_case_share)
        return max(0, math.ceil((2 * 1.959964) ** 2 * spread / target**2) - max(items, 0))
    if width <= target:
        return 0
    return max(0, math.ceil(items * (width / target) ** 2) - items)


# ---------------------------------------------------------------- the humans' own error


def one_coin_accuracy(raw_agreement: float | None) -> float | None:
    """The accuracy `a` of an annotator under a symmetric one-coin model that gives two independent labels this
    raw agreement: a² + (1 - a)² = agreement; 0.5 when the agreement is at most chance."""
    if raw_agreement is None:
        return None
    return (1 + math.sqrt(max(0.0, 2 * raw_agreement - 1))) / 2


def label_probability(basis: str, human_correct: bool, accuracy: float, prior_correct: float) -> float:
    """The probability that a final label reached without a posterior is right, under the one-coin model with the
    class prior of the final labels: two agreeing labels (`agreement`), or one label against another settled by a
    third person (`contested`: a tie-break majority, an adjudication or an override)."""
    prior = prior_correct if human_correct else 1 - prior_correct
    if basis == "agreement":
        yes, no = prior * accuracy**2, (1 - prior) * (1 - accuracy) ** 2
    elif basis == "contested":
        yes, no = prior * accuracy, (1 - prior) * (1 - accuracy)
    else:
        raise ValueError(f"unknown basis {basis!r}")
    return yes / (yes + no) if yes + no else 0.5


def expected_cells(
    counts: Mapping[tuple[bool, str], float], right_mass: Mapping[tuple[bool, str], float]
) -> np.ndarray:
    """The confusion cells expected when each final label is right with some probability: `counts[(human,
    status)]` items, whose labels are right with total probability `right_mass[(human, status)]`, put that mass in
    their own cell and the rest in the cell of the other label."""
    cells = np.zeros(WIDTH)
    for (human, status), items in counts.items():
        mass = float(right_mass.get((human, status), items))
        cells[cell_of(human, status)] += mass
        cells[cell_of(not human, status)] += items - mass
    return cells


def noise_figures(cells: np.ndarray) -> dict[str, float | None]:
    figures = figures_of_sums(cells)
    return {figure: _point(float(figures[figure])) for figure in FIGURES}
