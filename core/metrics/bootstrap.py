"""Percentile bootstrap confidence intervals for a mean, reproducible from a seed."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def bootstrap_mean_ci(
    values: Sequence[float],
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of `values`, resampling the values with replacement.

    Every call with the same seed and the same number of values draws the same resamples, so intervals
    of several metrics over the same questions are paired. Returns None when there is nothing to
    resample (`values` empty or `resamples` == 0).
    """
    if resamples < 0:
        raise ValueError(f"resamples must be >= 0, got {resamples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    data = np.asarray(values, dtype=float)
    if resamples == 0 or data.size == 0:
        return None
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, data.size, size=(resamples, data.size))
    means = data[indices].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def bootstrap_grouped_mean_ci(
    values: Sequence[float],
    weights: Sequence[int],
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """`bootstrap_mean_ci` of a list where `values[i]` appears `weights[i]` times, without building the list.

    Drawing N of the N values with replacement puts a multinomial number of draws in each group of equal values,
    so one resample is one multinomial draw over the groups: the same distribution of resampled means, in memory
    and time that grow with the number of groups, not of values. The draws differ from `bootstrap_mean_ci`'s for
    the same seed; calls with the same seed and the same weights draw the same resamples (paired intervals).
    """
    if resamples < 0:
        raise ValueError(f"resamples must be >= 0, got {resamples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    data = np.asarray(values, dtype=float)
    counts = np.asarray(weights, dtype=np.int64)
    total = int(counts.sum()) if counts.size else 0
    if resamples == 0 or total == 0:
        return None
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(total, counts / total, size=resamples)
    means = draws @ data / total
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)
