"""A project's figures from tallies: counters that one item at a time adds to or takes from.

Pure module, no Django imports. Every figure a researcher's page shows (items by state and resolution, raw
agreement, Cohen's kappa, Krippendorff's alpha per answer type, the per-annotator table, the daily timeline) is a
function of sums of per-item contributions. `item_tallies` gives one item's contribution as a Counter of string
keys; a project's tallies are the sum over its items. When an item changes, its contribution after minus its
contribution before is added to the stored tallies, in the same transaction as the change; `figures` turns the
tallies into what the pages show, in time that does not depend on how many items or labels the project has.

Keys (`|`-separated; JSON parts come last so they may contain anything):

- ``s|<state>``, ``r|<resolution>``, ``x``, ``l``, ``g``: non-gold items by state, resolved ones by resolution,
  excluded ones, non-gold labels, gold items;
- ``ai|<type>``: items of that answer type with a label; ``ap|<type>|[a, b]``: items whose first two labels are
  a and b (Cohen's kappa); ``aa|<type>``: of those, the ones whose two labels agree (raw agreement);
  ``au|<type>|<pattern>``: items with that multiset of label values (Krippendorff's alpha);
- ``n|<annotator>|<counter>``: labels, resolved (labels on resolved items), agree (with the final label),
  gold_seen, gold_correct; ``t|<annotator>|<seconds>``: how many of their labels took that long (rounded, see
  `seconds_bucket`), for the median;
- ``dl|<day>``, ``dr|<day>``: labels given and items resolved on that day (ISO date).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from core import labels

from . import agreement

UNTYPED = "?"  # the answer-type group of items without one
_STATES = ("pending", "in_progress", "needs_tiebreak", "needs_adjudication", "resolved", "excluded")
_RESOLUTIONS = ("agreement", "majority", "adjudication", "override", "model")


@dataclass(frozen=True)
class ItemFacts:
    """What of an item the tallies depend on."""

    state: str
    resolution: str = ""
    excluded: bool = False
    final_value: Any = None
    is_gold: bool = False
    gold_value: Any = None
    answer_type: str = ""
    resolved_day: str | None = None  # ISO date of resolved_at


@dataclass(frozen=True)
class LabelFacts:
    """What of a label the tallies depend on; an item's labels are given in the order they were created."""

    annotator_id: int
    value: Any
    unsuitable: bool = False
    seconds_spent: float | None = None
    day: str | None = None  # ISO date of created_at

    @property
    def token(self):
        return labels.UNSUITABLE if self.unsuitable else self.value


def seconds_bucket(seconds: float) -> float:
    """Time spent as the median is kept: to a tenth of a second under 10 s, to the second under 100 s, to ten
    seconds under 1,000 s, to a hundred beyond, so an annotator's histogram stays under about 300 rows."""
    if seconds < 10:
        return float(round(seconds, 1))
    if seconds < 100:
        return float(round(seconds))
    if seconds < 1000:
        return float(round(seconds, -1))
    return float(round(seconds, -2))


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def item_tallies(
    rules: labels.LabelRules, threshold: float, item: ItemFacts, item_labels: Sequence[LabelFacts]
) -> Counter:
    """One item's contribution to its project's tallies."""
    tally: Counter = Counter()
    if item.is_gold:
        tally["g"] += 1
        for label in item_labels:
            prefix = f"n|{label.annotator_id}|"
            tally[prefix + "gold_seen"] += 1
            tally[prefix + "gold_correct"] += int(
                not label.unsuitable and rules.agree([label.value, item.gold_value], threshold)
            )
        return tally
    tally[f"s|{item.state}"] += 1
    if item.state == "resolved":
        tally[f"r|{item.resolution}"] += 1
    if item.resolved_day:  # an item excluded after it was resolved still counts on the day it was resolved
        tally[f"dr|{item.resolved_day}"] += 1
    if item.excluded:
        tally["x"] += 1
    tally["l"] += len(item_labels)
    final = labels.UNSUITABLE if item.excluded else item.final_value
    for label in item_labels:
        prefix = f"n|{label.annotator_id}|"
        tally[prefix + "labels"] += 1
        if label.seconds_spent is not None:
            tally[f"t|{label.annotator_id}|{seconds_bucket(label.seconds_spent)!r}"] += 1
        if item.state == "resolved":
            tally[prefix + "resolved"] += 1
            tally[prefix + "agree"] += int(rules.agree([label.token, final], threshold))
        if label.day:
            tally[f"dl|{label.day}"] += 1
    if item_labels:
        group = item.answer_type or UNTYPED
        tally[f"ai|{group}"] += 1
        tokens = [label.token for label in item_labels]
        if len(tokens) >= 2:
            tally[f"ap|{group}|{_json([tokens[0], tokens[1]])}"] += 1
            tally[f"aa|{group}"] += int(rules.agree(tokens[:2], threshold))
        values = [token for token in tokens if not (rules.numeric and token == labels.UNSUITABLE)]
        if len(values) >= 2:
            tally[f"au|{group}|{_json([list(pair) for pair in agreement.count_pattern(Counter(values))])}"] += 1
    return tally


def difference(after: Mapping[str, int], before: Mapping[str, int]) -> dict[str, int]:
    """after - before, keeping only the keys that changed (negative counts included)."""
    keys = set(after) | set(before)
    return {key: after.get(key, 0) - before.get(key, 0) for key in keys if after.get(key, 0) != before.get(key, 0)}


def sum_tallies(contributions: Iterable[Mapping[str, int]]) -> Counter:
    total: Counter = Counter()
    for contribution in contributions:
        total.update(contribution)
    return total


# ---------------------------------------------------------------- figures from tallies


def state_counts(tallies: Mapping[str, int]) -> dict:
    by_state = {state: tallies.get(f"s|{state}", 0) for state in _STATES}
    return {
        "items": sum(by_state.values()),
        "by_state": by_state,
        "by_resolution": {resolution: tallies.get(f"r|{resolution}", 0) for resolution in _RESOLUTIONS},
        "excluded": tallies.get("x", 0),
        "labels": tallies.get("l", 0),
        "gold_items": tallies.get("g", 0),
    }


def _agreement_of(rules: labels.LabelRules, pair_counts: Counter, agreeing: int, patterns: Counter) -> dict:
    compared = sum(pair_counts.values())
    level: Literal["nominal", "interval"] = "interval" if rules.numeric else "nominal"
    return {
        "items_compared": compared,
        "raw_agreement": agreeing / compared if compared else None,
        "cohens_kappa": None if rules.numeric else agreement.kappa_from_pair_counts(pair_counts),
        "krippendorff_alpha": agreement.alpha_from_count_patterns(patterns, level=level),
        "alpha_level": level,
    }


def _split(key: str, parts: int) -> list[str]:
    return key.split("|", parts - 1)


def agreement_by_group(rules: labels.LabelRules, tallies: Mapping[str, int]) -> dict[str, dict]:
    """Agreement figures per answer-type group ("?" for items without one), for every group with a label."""
    groups: dict[str, tuple[Counter, list[int], Counter]] = {}

    def group(name: str):
        return groups.setdefault(name, (Counter(), [0], Counter()))

    for key, count in tallies.items():
        if not count:
            continue
        if key.startswith("ai|"):
            group(key[3:])
        elif key.startswith("ap|"):
            _, name, pair = _split(key, 3)
            first, second = json.loads(pair)
            group(name)[0][(_hashable(first), _hashable(second))] += count
        elif key.startswith("aa|"):
            group(key[3:])[1][0] += count
        elif key.startswith("au|"):
            _, name, pattern = _split(key, 3)
            group(name)[2][tuple((_hashable(value), n) for value, n in json.loads(pattern))] += count
    return {
        name: _agreement_of(rules, pairs, agreeing[0], patterns)
        for name, (pairs, agreeing, patterns) in sorted(groups.items())
    }


def overall_agreement(rules: labels.LabelRules, tallies: Mapping[str, int]) -> dict:
    pairs: Counter = Counter()
    patterns: Counter = Counter()
    agreeing = 0
    for key, count in tallies.items():
        if not count:
            continue
        if key.startswith("ap|"):
            first, second = json.loads(_split(key, 3)[2])
            pairs[(_hashable(first), _hashable(second))] += count
        elif key.startswith("aa|"):
            agreeing += count
        elif key.startswith("au|"):
            patterns[tuple((_hashable(value), n) for value, n in json.loads(_split(key, 3)[2]))] += count
    return _agreement_of(rules, pairs, agreeing, patterns)


def _hashable(value: Any) -> Any:
    """JSON gives lists and dicts back for composite values; make them usable as counter keys."""
    if isinstance(value, list):
        return tuple(_hashable(part) for part in value)
    if isinstance(value, dict):
        return tuple(sorted((key, _hashable(part)) for key, part in value.items()))
    return value


def median_of_histogram(histogram: Mapping[float, int]) -> float | None:
    """The median of values given as {value: how many times}."""
    total = sum(count for count in histogram.values() if count > 0)
    if not total:
        return None
    ordered = sorted((value, count) for value, count in histogram.items() if count > 0)
    wanted = [(total - 1) // 2, total // 2]  # positions of the middle value(s), 0-based
    found: list[float] = []
    seen = 0
    for value, count in ordered:
        while wanted and wanted[0] < seen + count:
            found.append(value)
            wanted.pop(0)
        seen += count
    return statistics.fmean(found)


def annotator_rows(tallies: Mapping[str, int]) -> dict[int, dict]:
    """{annotator id: labels, agree_with_final, resolved_labeled, agreement_with_final, median_seconds, gold_seen,
    gold_correct, gold_accuracy} for everyone with a label (gold included)."""
    counters: dict[int, Counter] = {}
    histograms: dict[int, dict[float, int]] = {}
    for key, count in tallies.items():
        if key.startswith("n|"):
            _, who, name = _split(key, 3)
            counters.setdefault(int(who), Counter())[name] += count
        elif key.startswith("t|") and count:
            _, who, seconds = _split(key, 3)
            histograms.setdefault(int(who), {})[float(seconds)] = count
    rows: dict[int, dict] = {}
    for annotator, counter in counters.items():
        if not (counter["labels"] or counter["gold_seen"]):
            continue
        rows[annotator] = {
            "labels": counter["labels"],
            "agree_with_final": counter["agree"],
            "resolved_labeled": counter["resolved"],
            "gold_seen": counter["gold_seen"],
            "gold_correct": counter["gold_correct"],
            "agreement_with_final": counter["agree"] / counter["resolved"] if counter["resolved"] else None,
            "median_seconds": median_of_histogram(histograms.get(annotator, {})),
            "gold_accuracy": counter["gold_correct"] / counter["gold_seen"] if counter["gold_seen"] else None,
        }
    return rows


def timeline(tallies: Mapping[str, int], since_day: str) -> list[dict]:
    """Labels given and items resolved per day from since_day on, for the days that have any."""
    labels_by_day: Counter = Counter()
    resolved_by_day: Counter = Counter()
    for key, count in tallies.items():
        if key.startswith("dl|") and key[3:] >= since_day:
            labels_by_day[key[3:]] += count
        elif key.startswith("dr|") and key[3:] >= since_day:
            resolved_by_day[key[3:]] += count
    days = sorted(
        day for day in set(labels_by_day) | set(resolved_by_day) if labels_by_day[day] or resolved_by_day[day]
    )
    return [{"day": day, "labels": labels_by_day[day], "resolved": resolved_by_day[day]} for day in days]


# ---------------------------------------------------------------- vectors per group and the moments of a series
#
# A contributor may count per group (a question) a vector of cells: key ``w|<[series, group, cell] as JSON>``.
# The stored vector of each (series, group) is kept as text (`vector_text`); each change of a vector also moves the
# moments of its series: ``wn|<series>`` (groups with a non-zero vector), ``ws|<i>|<series>`` (sum of cell i) and
# ``wm|<i>|<j>|<series>`` (sum of the products of cells i and j, i <= j).

VECTOR_PREFIX = "w|"
MOMENT_PREFIXES = ("wn|", "ws|", "wm|")


def vector_key(series: str, group: str, cell: int) -> str:
    return VECTOR_PREFIX + json.dumps([series, group, cell])


def vector_deltas(tally: Mapping[str, int]) -> dict[tuple[str, str], dict[int, int]]:
    """The `w|` keys of a tally as {(series, group): {cell: count}}."""
    found: dict[tuple[str, str], dict[int, int]] = {}
    for key, count in tally.items():
        if count and key.startswith(VECTOR_PREFIX):
            series, group, cell = json.loads(key[len(VECTOR_PREFIX) :])
            cells = found.setdefault((series, group), {})
            cells[cell] = cells.get(cell, 0) + count
    return found


def parse_vector(text: str) -> list[int]:
    return [int(part) for part in text.split(",")] if text else []


def vector_text(cells: Sequence[int]) -> str:
    """A vector as comma-separated integers without trailing zeros; "" for the zero vector."""
    values = list(cells)
    while values and values[-1] == 0:
        values.pop()
    return ",".join(str(value) for value in values)


def add_cells(vector: Sequence[int], delta: Mapping[int, int]) -> list[int]:
    width = max([len(vector), *(cell + 1 for cell in delta)])
    result = list(vector) + [0] * (width - len(vector))
    for cell, count in delta.items():
        result[cell] += count
    return result


def moments_of(series: str, vector: Sequence[int]) -> Counter:
    """What one group's vector adds to the moments of its series."""
    tally: Counter = Counter()
    cells = [(index, value) for index, value in enumerate(vector) if value]
    if not cells:
        return tally
    tally[f"wn|{series}"] += 1
    for position, (i, value) in enumerate(cells):
        tally[f"ws|{i}|{series}"] += value
        for j, other in cells[position:]:
            tally[f"wm|{i}|{j}|{series}"] += value * other
    return tally


def moment_change(series: str, before: Sequence[int], after: Sequence[int]) -> dict[str, int]:
    """How the moments of a series move when one of its vectors goes from `before` to `after`."""
    return difference(moments_of(series, after), moments_of(series, before))


def vector_moments(tally: Mapping[str, int]) -> Counter:
    """The moments of every series of a tally's `w|` keys (the groups' vectors as the tally sums them)."""
    total: Counter = Counter()
    for (series, _), cells in vector_deltas(tally).items():
        total.update(moments_of(series, add_cells([], cells)))
    return total


def series_moments(
    kept: Mapping[str, int],
) -> dict[str, tuple[int, dict[int, int], dict[tuple[int, int], int]]]:
    """Stored moment keys as {series: (groups, {i: sum}, {(i, j): sum of products})}."""
    found: dict[str, tuple[int, dict[int, int], dict[tuple[int, int], int]]] = {}
    for key, count in kept.items():
        kind, _, rest = key.partition("|")
        if kind == "wn":
            groups, sums, products = found.get(rest, (0, {}, {}))
            found[rest] = (groups + count, sums, products)
        elif kind == "ws":
            index, _, series = rest.partition("|")
            found.setdefault(series, (0, {}, {}))[1][int(index)] = count
        elif kind == "wm":
            first, second, series = rest.split("|", 2)
            found.setdefault(series, (0, {}, {}))[2][(int(first), int(second))] = count
    return found
