"""The meta-evaluation's uncertainty against independent computations: exact McNemar p-values by hand and from
scipy's binomial test, the bootstrap against a hand-rolled one with the same seed, against resampling question
indices and against scipy's bootstrap, and the normal limit against the exact resampling."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from scipy import stats

from core.metrics import judge_intervals as ji
from core.metrics.judge_eval import BinaryReport

STATUSES = ("correct", "incorrect", "inconclusive")


def question_vectors(questions: int, seed: int = 5) -> np.ndarray:
    """Per-question cell vectors of a made-up verifier: 1 to 4 labeled items per question, a question-level
    difficulty so that a question's items are correlated."""
    rng = np.random.default_rng(seed)
    vectors = np.zeros((questions, ji.WIDTH), dtype=int)
    for q in range(questions):
        hard = rng.random() < 0.3
        for _ in range(rng.integers(1, 5)):
            human = bool(rng.random() < 0.45)
            draw = rng.random()
            status = (
                ("inconclusive" if draw < 0.1 else ("incorrect" if human else "correct"))
                if hard and draw < 0.6
                else ("correct" if human else "incorrect")
            )
            if not hard and draw < 0.08:
                status = "incorrect" if human else "correct"
            vectors[q, ji.cell_of(human, status)] += 1
    return vectors


def histogram(vectors: np.ndarray) -> ji.QuestionCounts:
    distinct, counts = np.unique(vectors, axis=0, return_counts=True)
    return ji.QuestionCounts.from_histogram(distinct.tolist(), counts.tolist(), ji.WIDTH)


def test_exact_mcnemar_on_small_tables_by_hand():
    assert ji.mcnemar_exact(1, 6) == pytest.approx(2 * (1 + 7) / 2**7)
    assert ji.mcnemar_exact(0, 5) == pytest.approx(2 / 2**5)
    assert ji.mcnemar_exact(2, 8) == pytest.approx(2 * (1 + 10 + 45) / 2**10)
    assert ji.mcnemar_exact(4, 4) == 1.0
    assert ji.mcnemar_exact(0, 0) == 1.0
    assert ji.mcnemar_exact(3, 4) == 1.0  # twice the tail is more than 1
    with pytest.raises(ValueError):
        ji.mcnemar_exact(-1, 2)


@pytest.mark.parametrize("only_first,only_second", [(1, 6), (7, 19), (30, 12), (480, 530), (900, 1040), (5, 2000)])
def test_exact_mcnemar_equals_scipys_binomial_test(only_first, only_second):
    expected = stats.binomtest(only_first, only_first + only_second, 0.5).pvalue
    assert ji.mcnemar_exact(only_first, only_second) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_figures_of_sums_equal_the_binary_report():
    rng = np.random.default_rng(1)
    for _ in range(50):
        cells = rng.integers(0, 6, size=ji.WIDTH)
        report = BinaryReport()
        for (human, status), index in ji.CELL_OF.items():
            report.add(human, status, int(cells[index]))
        figures = ji.figures_of_sums(cells)
        for figure in ji.FIGURES:
            expected = getattr(report, figure)
            value = float(figures[figure])
            assert (np.isnan(value) and expected is None) or value == pytest.approx(expected)


def test_exact_bootstrap_equals_a_hand_rolled_one_with_the_same_seed():
    vectors = question_vectors(300)
    counts = histogram(vectors)
    result = ji.scope_intervals(counts, scope="judge-a|overall|all", seed=11, resamples=400)
    assert result["method"] == "exact" and result["questions"] == 300

    rng = np.random.default_rng([11, zlib.crc32(b"judge-a|overall|all")])
    draws = rng.multinomial(counts.questions, counts.weights / counts.questions, size=400)
    accuracies, tprs = [], []
    for draw in draws:
        tp = fn = tn = fp = 0
        for times, vector in zip(draw, counts.vectors):
            tp += times * vector[0]
            fn += times * (vector[1] + vector[2])
            tn += times * vector[3]
            fp += times * (vector[4] + vector[5])
        accuracies.append((tp + tn) / (tp + tn + fp + fn))
        tprs.append(tp / (tp + fn))
    for figure, values in (("accuracy", accuracies), ("tpr", tprs)):
        low, high = np.quantile(values, [0.025, 0.975])
        assert result[figure]["low"] == pytest.approx(low)
        assert result[figure]["high"] == pytest.approx(high)
    point = vectors.sum(axis=0)
    assert result["accuracy"]["value"] == pytest.approx((point[0] + point[3]) / point.sum())


def test_the_multinomial_draw_resamples_questions_like_drawing_their_indices():
    vectors = question_vectors(400, seed=9)
    ours = ji.scope_intervals(histogram(vectors), scope="s", seed=3, resamples=4000)
    rng = np.random.default_rng(99)
    picks = rng.integers(0, len(vectors), size=(4000, len(vectors)))
    sums = vectors[picks].sum(axis=1)
    theirs = ji.figures_of_sums(sums)
    for figure in ("accuracy", "macro_f1", "tnr", "decided_precision"):
        low, high = np.quantile(theirs[figure], [0.025, 0.975])
        assert ours[figure]["low"] == pytest.approx(low, abs=0.01)
        assert ours[figure]["high"] == pytest.approx(high, abs=0.01)


def test_accuracy_interval_is_scipys_percentile_bootstrap_over_questions():
    vectors = question_vectors(250, seed=4)
    right = vectors[:, 0] + vectors[:, 3]
    items = vectors.sum(axis=1)
    expected = stats.bootstrap(
        (right, items),
        lambda r, n, axis=-1: r.sum(axis=axis) / n.sum(axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=5000,
        method="percentile",
        rng=np.random.default_rng(0),
    ).confidence_interval
    ours = ji.scope_intervals(histogram(vectors), scope="s", seed=1, resamples=5000)["accuracy"]
    assert ours["low"] == pytest.approx(expected.low, abs=0.01)
    assert ours["high"] == pytest.approx(expected.high, abs=0.01)


def test_the_normal_limit_of_a_large_scope_agrees_with_exact_resampling():
    vectors = question_vectors(5000, seed=2)
    exact = histogram(vectors)
    limit = ji.QuestionCounts.from_moments(exact.questions, exact.sums, exact.second)
    one = ji.scope_intervals(exact, scope="big", seed=0, resamples=3000)
    other = ji.scope_intervals(limit, scope="big", seed=0, resamples=3000)
    assert other["method"] == "normal"
    for figure in ji.FIGURES:
        assert other[figure]["value"] == pytest.approx(one[figure]["value"])
        assert other[figure]["low"] == pytest.approx(one[figure]["low"], abs=0.006)
        assert other[figure]["high"] == pytest.approx(one[figure]["high"], abs=0.006)


def test_the_same_seed_gives_the_same_intervals_and_one_question_none():
    counts = histogram(question_vectors(60))
    assert ji.scope_intervals(counts, scope="x", seed=4) == ji.scope_intervals(counts, scope="x", seed=4)
    assert ji.scope_intervals(counts, scope="x", seed=4) != ji.scope_intervals(counts, scope="x", seed=5)
    single = histogram(question_vectors(1))
    assert all(single["low"] is None for single in [ji.scope_intervals(single, scope="y")[f] for f in ji.FIGURES])
    assert ji.scope_intervals(counts, scope="x", resamples=0)["accuracy"]["low"] is None


def pair_vectors(questions: int) -> np.ndarray:
    """Two verifiers on the same items: the second is wrong more often on hard questions."""
    rng = np.random.default_rng(8)
    vectors = np.zeros((questions, ji.PAIR_WIDTH), dtype=int)
    for q in range(questions):
        hard = rng.random() < 0.4
        for _ in range(rng.integers(1, 4)):
            human = bool(rng.random() < 0.5)
            first = STATUSES[0 if human else 1] if rng.random() < 0.85 else STATUSES[1 if human else 0]
            good = 0.6 if hard else 0.85
            second = STATUSES[0 if human else 1] if rng.random() < good else STATUSES[2]
            vectors[q, ji.cell_of(human, first)] += 1
            vectors[q, ji.WIDTH + ji.cell_of(human, second)] += 1
            one, other = ji.right(human, first), ji.right(human, second)
            if one and not other:
                vectors[q, ji.ONLY_FIRST_RIGHT] += 1
            elif other and not one:
                vectors[q, ji.ONLY_SECOND_RIGHT] += 1
    return vectors


def test_paired_comparison_differences_intervals_and_mcnemar():
    vectors = pair_vectors(400)
    distinct, counts = np.unique(vectors, axis=0, return_counts=True)
    pair = ji.QuestionCounts.from_histogram(distinct.tolist(), counts.tolist(), ji.PAIR_WIDTH)
    result = ji.paired_comparison(pair, scope="a|b", seed=2, resamples=2000)
    first = ji.figures_of_sums(vectors[:, : ji.WIDTH].sum(axis=0))
    second = ji.figures_of_sums(vectors[:, ji.WIDTH : 2 * ji.WIDTH].sum(axis=0))
    for figure in ji.FIGURES:
        assert result[figure]["difference"] == pytest.approx(float(first[figure] - second[figure]))
    only_first, only_second = vectors[:, ji.ONLY_FIRST_RIGHT].sum(), vectors[:, ji.ONLY_SECOND_RIGHT].sum()
    assert (result["only_first_right"], result["only_second_right"]) == (only_first, only_second)
    assert result["mcnemar_p"] == pytest.approx(stats.binomtest(int(only_first), int(only_first + only_second)).pvalue)
    # the accuracy difference is the discordant items' difference over the items
    assert result["accuracy"]["difference"] == pytest.approx((only_first - only_second) / result["items"])
    # paired: the same resampled questions for both, by hand with the same seed
    rng = ji.generator(2, "a|b")
    draws = rng.multinomial(pair.questions, pair.weights / pair.questions, size=2000) @ pair.vectors
    differences = (
        ji.figures_of_sums(draws[:, : ji.WIDTH])["accuracy"]
        - ji.figures_of_sums(draws[:, ji.WIDTH : 2 * ji.WIDTH])["accuracy"]
    )
    low, high = np.quantile(differences, [0.025, 0.975])
    assert (result["accuracy"]["low"], result["accuracy"]["high"]) == (pytest.approx(low), pytest.approx(high))
    assert result["accuracy"]["low"] > 0  # the first is better, and the interval says so


def test_comparison_sentences():
    entry = {"accuracy": {"difference": 0.041, "low": 0.012, "high": 0.070}}
    assert ji.comparison_sentence("judge-a", "judge-b", "B - Expressions", entry) == (
        "judge-a is more accurate than judge-b on B - Expressions: +4.1 points, 95% interval +1.2 to +7.0."
    )
    flipped = {"accuracy": {"difference": -0.041, "low": -0.070, "high": -0.012}}
    assert ji.comparison_sentence("judge-b", "judge-a", "B - Expressions", flipped) == (
        "judge-a is more accurate than judge-b on B - Expressions: +4.1 points, 95% interval +1.2 to +7.0."
    )
    unclear = {"macro_f1": {"difference": 0.01, "low": -0.015, "high": 0.034}}
    assert ji.comparison_sentence("a", "b", "", unclear, "macro_f1") == (
        "a and b are not distinguishable in macro-F1: +1.0 points, 95% interval -1.5 to +3.4."
    )
    assert ji.comparison_sentence("a", "b", "", {"accuracy": {"difference": None, "low": None, "high": None}}) is None


def test_items_needed_for_a_target_width():
    assert ji.items_needed(100, 0.2, 0.1) == 300  # four times the items halve the width
    assert ji.items_needed(100, 0.08, 0.1) == 0
    assert ji.items_needed(0, None, 0.1) == 385  # (2 * 1.96)^2 * 0.25 / 0.01, rounded up
    assert ji.items_needed(40, None, 0.1) == 345
    with pytest.raises(ValueError):
        ji.items_needed(10, 0.2, 0)


def test_label_noise_under_the_one_coin_model():
    assert ji.one_coin_accuracy(0.82) == pytest.approx(0.9)
    assert ji.one_coin_accuracy(0.4) == 0.5
    assert ji.label_probability("agreement", True, 0.9, 0.5) == pytest.approx(0.81 / 0.82)
    assert ji.label_probability("contested", False, 0.9, 0.5) == pytest.approx(0.9)
    # a skewed prior: a contested "correct" is less likely right when correct answers are rare
    assert ji.label_probability("contested", True, 0.9, 0.2) == pytest.approx(0.2 * 0.9 / (0.2 * 0.9 + 0.8 * 0.1))
    # ten items labeled correct and judged correct, right with probability 0.8 in all: 8 TP and 2 FP expected
    cells = ji.expected_cells({(True, "correct"): 10}, {(True, "correct"): 8.0})
    assert cells[ji.cell_of(True, "correct")] == 8 and cells[ji.cell_of(False, "correct")] == 2
    assert ji.noise_figures(cells)["ppv"] == pytest.approx(0.8)
