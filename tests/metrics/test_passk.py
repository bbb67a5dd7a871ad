"""Pass@k, G-Pass@k_tau and mG-Pass@k: hand-computed values, properties and a brute-force check."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.metrics.passk import (
    evaluate_models,
    follows_recommendation,
    g_pass_at_k,
    g_pass_at_k_exact,
    mg_pass_at_k,
    mg_pass_at_k_exact,
    pass_at_k,
    pass_at_k_exact,
    suggested_ks,
    tau_fraction,
)


def test_hand_computed_n4_c2_k2():
    # C(4,2) = 6 subsets of two samples; 5 hold at least one correct sample, 1 holds two.
    assert pass_at_k_exact(4, 2, 2) == Fraction(5, 6)
    assert g_pass_at_k_exact(4, 2, 2, 0.5) == Fraction(5, 6)
    assert g_pass_at_k_exact(4, 2, 2, 1.0) == Fraction(1, 6)
    # mG-Pass@2 sums i from ceil(2/2)+1 = 2 to 2: (2/2) * G-Pass@2_1.
    assert mg_pass_at_k_exact(4, 2, 2) == Fraction(1, 6)


def test_hand_computed_n5_c3_k3():
    assert pass_at_k(5, 3, 3) == 1.0  # only two incorrect samples, so every triple holds a correct one
    # at least 2 correct of 3: C(3,2)C(2,1) + C(3,3)C(2,0) = 6 + 1 out of C(5,3) = 10
    assert g_pass_at_k_exact(5, 3, 3, Fraction(2, 3)) == Fraction(7, 10)
    assert g_pass_at_k_exact(5, 3, 3, 1) == Fraction(1, 10)
    # i from ceil(1.5)+1 = 3 to 3: (2/3) * 1/10
    assert mg_pass_at_k_exact(5, 3, 3) == Fraction(1, 15)


def test_hand_computed_mg_pass_n8_c4_k4():
    # G-Pass@4_{3/4} = (C(4,3)C(4,1) + C(4,4)) / C(8,4) = 17/70; G-Pass@4_1 = 1/70
    assert mg_pass_at_k_exact(8, 4, 4) == Fraction(2, 4) * (Fraction(17, 70) + Fraction(1, 70))
    assert mg_pass_at_k(8, 4, 4) == pytest.approx(9 / 70)


def test_mg_pass_at_1_is_an_empty_sum():
    assert mg_pass_at_k(3, 3, 1) == 0.0


def test_tau_given_as_float_is_read_exactly():
    # 0.7 * 10 is 7.000000000000001 in floating point; the threshold must still be 7 correct samples.
    assert g_pass_at_k(10, 7, 10, 0.7) == 1.0
    assert g_pass_at_k(10, 7, 10, "0.7") == 1.0
    assert tau_fraction(0.75) == Fraction(3, 4)
    assert tau_fraction("0.25") == Fraction(1, 4)


def test_no_correct_and_all_correct():
    assert pass_at_k(10, 0, 3) == 0.0
    assert g_pass_at_k(10, 0, 3, 0.5) == 0.0
    assert pass_at_k(10, 10, 3) == 1.0
    assert g_pass_at_k(10, 10, 3, 1.0) == 1.0
    assert mg_pass_at_k(10, 10, 4) == 1.0


@pytest.mark.parametrize(
    ("n", "c", "k"),
    [(3, 1, 4), (0, 0, 1), (5, 6, 2), (5, -1, 2), (5, 2, 0), (5, 2, 2.0), (True, 1, 1)],
)
def test_bad_counts_raise(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


@pytest.mark.parametrize("tau", [0, -0.5, 1.01, "abc", True, float("nan")])
def test_bad_tau_raises(tau):
    with pytest.raises(ValueError):
        g_pass_at_k(10, 5, 4, tau)


def brute_force_share(n: int, c: int, k: int, least_correct: int) -> Fraction:
    samples = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    hits = sum(1 for subset in subsets if sum(samples[i] for i in subset) >= least_correct)
    return Fraction(hits, len(subsets))


small_cases = st.integers(min_value=1, max_value=12).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
)
taus = st.fractions(min_value=Fraction(1, 1000), max_value=1, max_denominator=1000).filter(lambda t: t > 0)


@settings(max_examples=150, deadline=None)
@given(small_cases, taus)
def test_matches_brute_force_enumeration_of_k_subsets(case, tau):
    n, c, k = case
    assert pass_at_k_exact(n, c, k) == brute_force_share(n, c, k, 1)
    assert g_pass_at_k_exact(n, c, k, tau) == brute_force_share(n, c, k, math.ceil(tau * k))
    expected_mg = Fraction(2, k) * sum(
        (brute_force_share(n, c, k, i) for i in range(math.ceil(Fraction(k, 2)) + 1, k + 1)), Fraction(0)
    )
    assert mg_pass_at_k_exact(n, c, k) == expected_mg


@settings(max_examples=200, deadline=None)
@given(small_cases, taus, taus)
def test_g_pass_does_not_rise_with_tau(case, tau_a, tau_b):
    n, c, k = case
    low, high = sorted((tau_a, tau_b))
    assert g_pass_at_k_exact(n, c, k, high) <= g_pass_at_k_exact(n, c, k, low)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_limits_of_tau_and_range(case):
    n, c, k = case
    pass_k = pass_at_k_exact(n, c, k)
    assert g_pass_at_k_exact(n, c, k, Fraction(1, k)) == pass_k
    assert g_pass_at_k_exact(n, c, k, 1e-9) == pass_k
    assert g_pass_at_k_exact(n, c, k, 1) == Fraction(math.comb(c, k), math.comb(n, k))
    for value in (pass_k, g_pass_at_k_exact(n, c, k, 0.5), mg_pass_at_k_exact(n, c, k)):
        assert 0 <= value <= 1
    assert 0.0 <= mg_pass_at_k(n, c, k) <= g_pass_at_k(n, c, k, 0.5) <= pass_at_k(n, c, k) <= 1.0


def test_n_1000_is_exact():
    n, c, k = 1000, 500, 100
    assert pass_at_k_exact(n, c, k) == 1 - Fraction(math.comb(500, 100), math.comb(1000, 100))
    assert g_pass_at_k_exact(n, c, k, 1.0) == Fraction(math.comb(500, 100), math.comb(1000, 100))
    # At least t of k correct, or at least k-t+1 of k incorrect: exactly one of the two always holds.
    for t in (1, 37, 50, 51, 100):
        total = g_pass_at_k_exact(n, c, k, Fraction(t, k)) + g_pass_at_k_exact(n, n - c, k, Fraction(k - t + 1, k))
        assert total == 1
    value = g_pass_at_k(n, 731, 1000, 0.731)  # every sample drawn: exactly 731 correct
    assert value == 1.0
    assert 0.0 < mg_pass_at_k(n, 731, 64) < 1.0


def rows_for(model, question, outcomes, *, greedy=None):
    rows = [
        {"question_id": question, "model": model, "correct": outcome, "sample_index": index}
        for index, outcome in enumerate(outcomes)
    ]
    if greedy is not None:
        rows.append({"question_id": question, "model": model, "correct": greedy, "greedy": True})
    return rows


def test_evaluate_models_averages_over_questions():
    rows = rows_for("m", "q1", [True, True, False, False], greedy=True) + rows_for(
        "m", "q2", [True, True, True, True], greedy=False
    )
    result = evaluate_models(rows, [2], ["0.5", 1.0], bootstrap=200, seed=3)
    model = result["models"]["m"]
    assert model["n_questions"] == 2
    assert model["samples_per_question"] == {"min": 4, "max": 4}
    assert model["accuracy"] == pytest.approx(6 / 8)
    assert model["greedy_accuracy"] == pytest.approx(0.5)
    assert model["pass@2"] == pytest.approx((5 / 6 + 1) / 2)
    assert model["g-pass@2_0.5"] == pytest.approx((5 / 6 + 1) / 2)
    assert model["g-pass@2_1.0"] == pytest.approx((1 / 6 + 1) / 2)
    assert model["mg-pass@2"] == pytest.approx((1 / 6 + 1) / 2)
    low, high = model["ci"]["pass@2"]
    assert 5 / 6 <= low <= model["pass@2"] <= high <= 1
    assert any("fewer than 3k = 6 samples for k=2" in warning for warning in result["warnings"])


def test_evaluate_models_skips_k_beyond_the_samples_and_says_so():
    rows = rows_for("m", "q1", [True, False, True]) + rows_for("m", "q2", [True] * 8)
    result = evaluate_models(rows, [4], [0.5], bootstrap=0)
    model = result["models"]["m"]
    assert model["pass@4"] == 1.0  # q2 only
    assert model["questions"]["pass@4"] == 1
    assert model["ci"]["pass@4"] is None  # bootstrap turned off
    assert any("k=4 exceeds the number of samples of 1 question(s) (q1)" in w for w in result["warnings"])

    result = evaluate_models(rows_for("m", "q1", [True]), [2], [0.5], bootstrap=10)
    assert result["models"]["m"]["pass@2"] is None
    assert result["models"]["m"]["ci"]["pass@2"] is None


def test_evaluate_models_bootstrap_is_reproducible():
    rows = []
    for question in range(10):
        rows += rows_for("m", f"q{question}", [question % 3 == 0, question % 2 == 0, True, False, False, True])
    first = evaluate_models(rows, [2], [0.5], bootstrap=300, seed=7)
    second = evaluate_models(list(reversed(rows)), [2], [0.5], bootstrap=300, seed=7)
    assert first["models"]["m"]["ci"] == second["models"]["m"]["ci"]


def test_evaluate_models_rejects_bad_rows():
    with pytest.raises(ValueError, match="row 2: missing field"):
        evaluate_models([{"question_id": 1, "model": "m", "correct": True}, {"model": "m"}], [1], [1])
    with pytest.raises(ValueError, match="correct must be true or false"):
        evaluate_models([{"question_id": 1, "model": "m", "correct": "yes"}], [1], [1])
    with pytest.raises(ValueError, match="sample_index 0 repeats"):
        evaluate_models(rows_for("m", "q", [True]) + rows_for("m", "q", [False]), [1], [1])
    with pytest.raises(ValueError, match="k must be a positive integer"):
        evaluate_models(rows_for("m", "q", [True]), [0], [1])


# ---------------------------------------------------------------- k values that fit the samples


@pytest.mark.parametrize(
    "n, ks",
    [
        (48, [4, 8, 16]),  # LiveMathBench: 48 samples, k up to 16
        (100, [8, 16, 32]),
        (24, [2, 4, 8]),
        (12, [2, 4]),
        (6, [2]),
        # below 6 samples no k >= 2 has n >= 3k: the largest powers of two with n >= k
        (5, [2, 4]),
        (4, [2, 4]),
        (2, [2]),
        (1, [1]),  # one sample: Pass@1 only
    ],
)
def test_suggested_ks_prefer_three_samples_per_k_and_always_fit(n, ks):
    assert suggested_ks(n) == ks
    assert all(k <= n for k in ks)
    assert follows_recommendation(n, ks) == (n >= 6)


def test_suggested_ks_count_and_bad_counts():
    assert suggested_ks(1000, count=1) == [256]
    assert suggested_ks(1000, count=5) == [16, 32, 64, 128, 256]
    for bad in (0, -3, 2.0, True):
        with pytest.raises(ValueError, match="samples per question"):
            suggested_ks(bad)


def test_one_sample_per_question_is_not_flagged_for_k1_but_is_for_larger_k():
    rows = [{"question_id": q, "model": "m", "correct": q % 2 == 0} for q in range(4)]
    result = evaluate_models(rows, [1, 2], ["1.0"], bootstrap=0)
    assert result["models"]["m"]["pass@1"] == pytest.approx(0.5)
    assert result["models"]["m"]["pass@2"] is None
    assert not any("k=1" in warning for warning in result["warnings"])
    assert any("k=2 exceeds the number of samples" in warning for warning in result["warnings"])
