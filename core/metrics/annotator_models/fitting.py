"""What the annotator models share: the input triples, integer coding of ids, a column softmax, and `Convergence`.

Pure numpy. Every model codes its ids with `encode`, unpacks its input rows with `unzip3` and reports how its EM
ended as a `Convergence`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np

LabelTriple = tuple[Hashable, Hashable, Hashable]
"""`(item_id, annotator_id, value)` for labels, `(item_id, source_id, value)` for weak votes."""

GradeTriple = tuple[Hashable, Hashable, float]
"""`(proof_id, grader_id, score)`."""


def encode(values: Sequence[Hashable], index: dict[Hashable, int]) -> np.ndarray:
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


def unzip3(rows: Iterable[tuple[Any, Any, Any]], what: str) -> tuple[Sequence[Any], Sequence[Any], Sequence[Any]]:
    rows = rows if isinstance(rows, list | tuple) else list(rows)
    if any(length != 3 for length in set(map(len, rows))):
        raise ValueError(f"every {what} must be a triple")
    return tuple(list(map(itemgetter(position), rows)) for position in range(3))  # type: ignore[return-value]


def softmax_columns(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
