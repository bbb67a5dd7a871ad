"""Agreement between human annotators: raw agreement, Cohen's kappa, Krippendorff's alpha, per-annotator figures.

Pure functions, no Django imports. Labels are any hashable values (booleans, answer-type codes, verdicts);
proof scores are numbers and use the interval level of Krippendorff's alpha.

Ratios that are undefined for the data at hand (no shared items, a single category) are returned as None.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import krippendorff
import numpy as np

LabelsByItem = Mapping[Hashable, Mapping[Hashable, Any]]
"""`{item_id: {annotator_id: value}}`; an annotator absent from an item did not label it."""


def _check_paired(labels_a: Sequence[Any], labels_b: Sequence[Any]) -> None:
    if len(labels_a) != len(labels_b):
        raise ValueError(f"the two raters must label the same items: got {len(labels_a)} and {len(labels_b)} labels")


def raw_agreement(labels_a: Sequence[Any], labels_b: Sequence[Any]) -> float | None:
    """Share of items on which two raters give the same label; None when there are no items."""
    _check_paired(labels_a, labels_b)
    if not labels_a:
        return None
    return sum(a == b for a, b in zip(labels_a, labels_b)) / len(labels_a)


def cohens_kappa(labels_a: Sequence[Any], labels_b: Sequence[Any]) -> float | None:
    """Cohen's kappa of two raters on nominal labels: (p_o - p_e) / (1 - p_e).

    p_o is the observed agreement, p_e the agreement expected from each rater's own label frequencies.
    None when there are no items or p_e = 1 (both raters used one and the same category throughout).
    """
    _check_paired(labels_a, labels_b)
    n = len(labels_a)
    if n == 0:
        return None
    observed = sum(a == b for a, b in zip(labels_a, labels_b)) / n
    counts_a, counts_b = Counter(labels_a), Counter(labels_b)
    expected = sum(counts_a[label] * counts_b[label] for label in counts_a) / (n * n)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[Any]],
    level: Literal["nominal", "interval"] = "nominal",
) -> float | None:
    """Krippendorff's alpha over a units x raters table (one row per item, one column per rater).

    Missing ratings are None or NaN. Nominal labels may be any hashable values; interval values must be
    numbers. Returns None when alpha is undefined: no unit has two ratings, or the pairable ratings use a
    single value (no disagreement is possible). Computed with the `krippendorff` package.
    """
    if level not in ("nominal", "interval"):
        raise ValueError(f"level must be 'nominal' or 'interval', got {level!r}")
    rows = [list(row) for row in reliability_data]
    width = max((len(row) for row in rows), default=0)
    pairable = [[value for value in row if not _is_missing(value)] for row in rows]
    pairable = [values for values in pairable if len(values) >= 2]
    if not pairable or len({value for values in pairable for value in values}) < 2:
        return None

    if level == "nominal":
        codes: dict[Hashable, int] = {}
        for values in pairable:
            for value in values:
                codes.setdefault(value, len(codes))

        def to_number(value: Any) -> float:
            return float(codes.setdefault(value, len(codes)))

    else:

        def to_number(value: Any) -> float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"interval ratings must be numbers, got {value!r}")
            return float(value)

    matrix = np.full((width, len(rows)), np.nan)
    for unit, row in enumerate(rows):
        for rater, value in enumerate(row):
            if not _is_missing(value):
                matrix[rater, unit] = to_number(value)
    alpha = float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))
    return None if math.isnan(alpha) else alpha


def reliability_table(labels: LabelsByItem) -> tuple[list[Hashable], list[Hashable], list[list[Any]]]:
    """Turn `{item_id: {annotator_id: value}}` into (item_ids, annotator_ids, units x raters rows with None gaps)."""
    items = list(labels)
    annotators = sorted({annotator for by_annotator in labels.values() for annotator in by_annotator}, key=str)
    rows = [[labels[item].get(annotator) for annotator in annotators] for item in items]
    return items, annotators, rows


def alpha_from_labels(labels: LabelsByItem, level: Literal["nominal", "interval"] = "nominal") -> float | None:
    """Krippendorff's alpha of `{item_id: {annotator_id: value}}`; see `krippendorff_alpha`."""
    _, _, rows = reliability_table(labels)
    return krippendorff_alpha(rows, level)


def item_agreement_rate(labels: LabelsByItem) -> float | None:
    """Share of items with at least two labels on which every annotator gave the same label; None if no such item."""
    multi = [[value for value in by_annotator.values() if not _is_missing(value)] for by_annotator in labels.values()]
    multi = [values for values in multi if len(values) >= 2]
    if not multi:
        return None
    return sum(len(set(values)) == 1 for values in multi) / len(multi)


@dataclass(frozen=True)
class PairAgreement:
    annotator_a: Hashable
    annotator_b: Hashable
    shared_items: int
    agreement: float | None
    kappa: float | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def pairwise_agreement(labels: LabelsByItem) -> list[PairAgreement]:
    """Raw agreement and Cohen's kappa for every pair of annotators over the items both labelled."""
    _, annotators, _ = reliability_table(labels)
    pairs: list[PairAgreement] = []
    for first, second in itertools.combinations(annotators, 2):
        shared = [
            (by_annotator[first], by_annotator[second])
            for by_annotator in labels.values()
            if not _is_missing(by_annotator.get(first)) and not _is_missing(by_annotator.get(second))
        ]
        labels_a = [a for a, _ in shared]
        labels_b = [b for _, b in shared]
        pairs.append(
            PairAgreement(
                first, second, len(shared), raw_agreement(labels_a, labels_b), cohens_kappa(labels_a, labels_b)
            )
        )
    return pairs


@dataclass(frozen=True)
class AnnotatorStats:
    annotator_id: Hashable
    labels: int
    compared_with_final: int
    agreement_with_final: float | None
    median_seconds: float | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def annotator_stats(
    labels: Iterable[Mapping[str, Any]],
    finals: Mapping[Hashable, Any],
) -> dict[Hashable, AnnotatorStats]:
    """Per-annotator figures from label rows `{item_id, annotator_id, value, seconds?}` and `{item_id: final value}`.

    - labels: how many labels the annotator gave;
    - agreement_with_final: share of their labels equal to the final label, over items that have one
      (None when none of their items is resolved yet);
    - median_seconds: median time spent per labelled item, over the rows that carry `seconds`.
    """
    given: dict[Hashable, int] = defaultdict(int)
    matches: dict[Hashable, int] = defaultdict(int)
    compared: dict[Hashable, int] = defaultdict(int)
    seconds: dict[Hashable, list[float]] = defaultdict(list)
    for position, row in enumerate(labels, start=1):
        missing = [field for field in ("item_id", "annotator_id", "value") if field not in row]
        if missing:
            raise ValueError(f"label row {position}: missing field(s): {', '.join(missing)}")
        annotator = row["annotator_id"]
        given[annotator] += 1
        if row["item_id"] in finals and not _is_missing(finals[row["item_id"]]):
            compared[annotator] += 1
            matches[annotator] += row["value"] == finals[row["item_id"]]
        spent = row.get("seconds")
        if spent is not None:
            if isinstance(spent, bool) or not isinstance(spent, (int, float)) or spent < 0 or math.isnan(spent):
                raise ValueError(f"label row {position}: seconds must be a non-negative number, got {spent!r}")
            seconds[annotator].append(float(spent))
    return {
        annotator: AnnotatorStats(
            annotator_id=annotator,
            labels=given[annotator],
            compared_with_final=compared[annotator],
            agreement_with_final=matches[annotator] / compared[annotator] if compared[annotator] else None,
            median_seconds=statistics.median(seconds[annotator]) if seconds[annotator] else None,
        )
        for annotator in given
    }


def kappa_from_pair_counts(pair_counts: Mapping[tuple[Hashable, Hashable], int]) -> float | None:
    """Cohen's kappa from a contingency table `{(label_a, label_b): count}`; the same result as
    `cohens_kappa` on the expanded lists, without materialising them."""
    n = sum(pair_counts.values())
    if n == 0:
        return None
    observed = sum(count for (a, b), count in pair_counts.items() if a == b) / n
    margin_a: Counter = Counter()
    margin_b: Counter = Counter()
    for (a, b), count in pair_counts.items():
        margin_a[a] += count
        margin_b[b] += count
    expected = sum(margin_a[label] * margin_b[label] for label in margin_a) / (n * n)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)


def alpha_from_value_counts(
    unit_counts: Iterable[Mapping[Hashable, int]],
    level: Literal["nominal", "interval"] = "nominal",
) -> float | None:
    """Krippendorff's alpha from per-unit value counts (`{value: how many raters gave it}` per item).

    Alpha depends only on these counts, not on who gave which value, so large projects need no
    units x raters table. Units with fewer than two ratings are not pairable and are left out.
    Returns None where `krippendorff_alpha` would.
    """
    patterns: Counter = Counter(count_pattern(counts) for counts in unit_counts)
    return alpha_from_count_patterns(patterns, level)


def count_pattern(counts: Mapping[Hashable, int]) -> tuple:
    """A hashable form of one unit's value counts, so identical units can be counted instead of stored."""
    return tuple(sorted(((value, count) for value, count in counts.items() if count), key=lambda vc: repr(vc[0])))


def alpha_from_count_patterns(
    patterns: Mapping[tuple, int],
    level: Literal["nominal", "interval"] = "nominal",
) -> float | None:
    """Krippendorff's alpha from `{count_pattern(unit): how many units have it}`: time and memory grow with the
    number of distinct patterns (a handful for two or three raters), not with the number of items. Computed from
    the coincidence matrix (Krippendorff 2011); equals the `krippendorff` package on the expanded table."""
    if level not in ("nominal", "interval"):
        raise ValueError(f"level must be 'nominal' or 'interval', got {level!r}")
    pairable = {
        pattern: units for pattern, units in patterns.items() if units > 0 and sum(count for _, count in pattern) >= 2
    }
    domain = sorted({value for pattern in pairable for value, _ in pattern}, key=lambda v: (str(type(v)), v))
    if not pairable or len(domain) < 2:
        return None
    if level == "interval":
        for value in domain:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"interval ratings must be numbers, got {value!r}")
    column = {value: index for index, value in enumerate(domain)}
    # Coincidence matrix: each unit with m pairable values adds (n_c n_k - [c = k] n_c) / (m - 1) to o[c, k];
    # identical units add the same, so each pattern counts once, times how many units have it.
    coincidences = np.zeros((len(domain), len(domain)), dtype=np.float64)
    for pattern, units in pairable.items():
        counts = np.zeros(len(domain), dtype=np.float64)
        for value, count in pattern:
            counts[column[value]] = count
        total = counts.sum()
        coincidences += units * (np.outer(counts, counts) - np.diag(counts)) / (total - 1)
    if level == "interval":
        points = np.array([float(value) for value in domain])
        distance = (points[:, None] - points[None, :]) ** 2
    else:
        distance = 1.0 - np.eye(len(domain))
    margins = coincidences.sum(axis=1)
    pairable_values = margins.sum()
    expected = float((np.outer(margins, margins) * distance).sum())
    if expected == 0:
        return None
    observed = float((coincidences * distance).sum())
    return 1.0 - (pairable_values - 1) * observed / expected
