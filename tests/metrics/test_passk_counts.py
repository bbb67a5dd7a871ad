"""Pass@k and G-Pass@k from counts per (n, c) equal the figures computed over every sample."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.metrics import passk
from core.metrics.bootstrap import bootstrap_grouped_mean_ci, bootstrap_mean_ci
from reports import evaluation


def same_figures(one, other) -> bool:
    if isinstance(one, dict) and isinstance(other, dict):
        return one.keys() == other.keys() and all(same_figures(one[key], other[key]) for key in one)
    if isinstance(one, float) and isinstance(other, float):
        return one == pytest.approx(other, rel=1e-12, abs=1e-12)
    return one == other


SAMPLE = st.tuples(st.sampled_from(["m1", "m2", "m3"]), st.integers(1, 30), st.booleans(), st.booleans())


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(SAMPLE, max_size=120), ks=st.sampled_from([[1], [1, 2], [2, 4, 8], [3]]))
def test_figures_from_counts_equal_the_figures_over_every_sample(rows, ks):
    samples = [
        {"question_id": question, "model": model, "correct": correct, "greedy": greedy and question % 7 == 0}
        for model, question, correct, greedy in rows
    ]
    taus = ["0.25", "0.5", "1.0"]
    full = passk.evaluate_models(samples, ks, taus, bootstrap=0)
    counts = evaluation.counts_of_samples(samples)
    kept = passk.evaluate_counts(counts.question_counts, counts.greedy, ks, taus, bootstrap=0, examples=counts.examples)
    assert same_figures(kept["models"], full["models"])
    assert kept["warnings"] == full["warnings"]
    assert evaluation.choose_ks_from_counts(counts.question_counts) == evaluation.choose_ks(samples)


def test_the_grouped_bootstrap_resamples_like_the_bootstrap_over_every_value():
    generator = random.Random(4)
    values = [generator.choice([0.0, 0.25, 1.0]) for _ in range(400)]
    groups = {value: values.count(value) for value in set(values)}
    full = bootstrap_mean_ci(values, resamples=4000, seed=1)
    grouped = bootstrap_grouped_mean_ci(list(groups), list(groups.values()), resamples=4000, seed=1)
    assert grouped == pytest.approx(full, abs=0.01)
    assert grouped == bootstrap_grouped_mean_ci(list(groups), list(groups.values()), resamples=4000, seed=1)
    assert grouped[0] < np.mean(values) < grouped[1]
    assert bootstrap_grouped_mean_ci([1.0], [0]) is None
    assert bootstrap_grouped_mean_ci([1.0], [3], resamples=0) is None


def test_counts_out_of_range_are_refused():
    with pytest.raises(ValueError, match="c=3 of n=2"):
        passk.evaluate_counts({"m": {(2, 3): 1}}, {}, [1], ["1.0"])


def test_warnings_without_examples_count_the_questions():
    result = passk.evaluate_counts({"m": {(1, 1): 4}}, {}, [2], ["1.0"], bootstrap=0)
    assert result["warnings"] == ["m: k=2 exceeds the number of samples of 4 question(s); k=2 is skipped for them"]
    assert result["models"]["m"]["pass@2"] is None
