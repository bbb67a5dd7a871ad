"""Figures from summed per-item tallies equal the figures computed from every label at once."""

import statistics
from collections import Counter, defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from core import labels
from core.metrics import agreement, tallies
from verifybench.label_rules import CorrectnessRules


class Scores(labels.ScoreRules):
    name = "test-score"


ANSWER_TYPES = st.sampled_from(["A1", "B3", ""])
STATES = st.sampled_from(["pending", "in_progress", "needs_tiebreak", "needs_adjudication", "resolved", "excluded"])


def project_strategy(values):
    label = st.tuples(
        st.integers(min_value=1, max_value=5),
        values,
        st.one_of(st.none(), st.integers(min_value=1, max_value=99).map(float)),
    )
    item = st.fixed_dictionaries(
        {
            "state": STATES,
            "answer_type": ANSWER_TYPES,
            "final": values,
            "is_gold": st.booleans(),
            "excluded": st.booleans(),
            "labels": st.lists(label, max_size=4, unique_by=lambda row: row[0]),
        }
    )
    return st.lists(item, min_size=1, max_size=30)


def as_facts(raw):
    item = tallies.ItemFacts(
        state=raw["state"],
        resolution="agreement" if raw["state"] == "resolved" else "",
        excluded=raw["excluded"],
        final_value=raw["final"],
        is_gold=raw["is_gold"],
        gold_value=raw["final"] if raw["is_gold"] else None,
        answer_type=raw["answer_type"],
    )
    item_labels = [
        tallies.LabelFacts(
            annotator, None if value == labels.UNSUITABLE else value, value == labels.UNSUITABLE, seconds
        )
        for annotator, value, seconds in raw["labels"]
    ]
    return item, item_labels


def summed(rules, threshold, items):
    return tallies.sum_tallies(tallies.item_tallies(rules, threshold, *as_facts(raw)) for raw in items)


def close(a, b):
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) < 1e-9)


NOMINAL = st.sampled_from([True, False, labels.UNSUITABLE])
SCORES = st.sampled_from([0.0, 1.0, 2.5, 7.0, labels.UNSUITABLE])


@settings(max_examples=150, deadline=None)
@given(items=project_strategy(NOMINAL))
def test_nominal_agreement_from_tallies_equals_the_full_computation(items):
    rules = CorrectnessRules()
    kept = summed(rules, 0.0, items)
    workflow_items = [raw for raw in items if not raw["is_gold"]]
    first, second = [], []
    table = {}
    for index, raw in enumerate(workflow_items):
        tokens = [value for _, value, _ in raw["labels"]]
        if len(tokens) >= 2:
            first.append(tokens[0])
            second.append(tokens[1])
        table[index] = {annotator: value for annotator, value, _ in raw["labels"]}
    figures = tallies.overall_agreement(rules, kept)
    assert figures["items_compared"] == len(first)
    assert close(figures["raw_agreement"], agreement.raw_agreement(first, second))
    assert close(figures["cohens_kappa"], agreement.cohens_kappa(first, second))
    assert close(figures["krippendorff_alpha"], agreement.alpha_from_labels(table, "nominal"))


@settings(max_examples=150, deadline=None)
@given(items=project_strategy(SCORES), threshold=st.sampled_from([0.0, 1.5]))
def test_interval_agreement_from_tallies_equals_the_full_computation(items, threshold):
    rules = Scores()
    kept = summed(rules, threshold, items)
    workflow_items = [raw for raw in items if not raw["is_gold"]]
    table, compared, agreeing = {}, 0, 0
    for index, raw in enumerate(workflow_items):
        tokens = [value for _, value, _ in raw["labels"]]
        if len(tokens) >= 2:
            compared += 1
            agreeing += rules.agree(tokens[:2], threshold)
        table[index] = {annotator: value for annotator, value, _ in raw["labels"] if value != labels.UNSUITABLE}
    figures = tallies.overall_agreement(rules, kept)
    assert figures["items_compared"] == compared and figures["cohens_kappa"] is None
    assert close(figures["raw_agreement"], agreeing / compared if compared else None)
    assert close(figures["krippendorff_alpha"], agreement.alpha_from_labels(table, "interval"))


@settings(max_examples=150, deadline=None)
@given(items=project_strategy(NOMINAL))
def test_per_type_figures_and_counts_equal_the_full_computation(items):
    rules = CorrectnessRules()
    kept = summed(rules, 0.0, items)
    workflow_items = [raw for raw in items if not raw["is_gold"]]
    counts = tallies.state_counts(kept)
    assert counts["items"] == len(workflow_items)
    assert counts["by_state"] == {
        state: sum(raw["state"] == state for raw in workflow_items) for state in counts["by_state"]
    }
    assert counts["excluded"] == sum(raw["excluded"] for raw in workflow_items)
    assert counts["labels"] == sum(len(raw["labels"]) for raw in workflow_items)
    assert counts["gold_items"] == len(items) - len(workflow_items)
    by_group = tallies.agreement_by_group(rules, kept)
    groups = {raw["answer_type"] or tallies.UNTYPED for raw in workflow_items if raw["labels"]}
    assert set(by_group) == groups
    for group in groups:
        mine = [raw for raw in workflow_items if (raw["answer_type"] or tallies.UNTYPED) == group]
        firsts = [[value for _, value, _ in raw["labels"]][:2] for raw in mine if len(raw["labels"]) >= 2]
        assert by_group[group]["items_compared"] == len(firsts)
        assert close(
            by_group[group]["cohens_kappa"], agreement.cohens_kappa([a for a, _ in firsts], [b for _, b in firsts])
        )


@settings(max_examples=150, deadline=None)
@given(items=project_strategy(NOMINAL))
def test_annotator_rows_equal_the_full_computation(items):
    rules = CorrectnessRules()
    rows = tallies.annotator_rows(summed(rules, 0.0, items))
    expected: dict = defaultdict(Counter)
    seconds: dict = defaultdict(list)
    for raw in items:
        for annotator, value, spent in raw["labels"]:
            row = expected[annotator]
            if raw["is_gold"]:
                row["gold_seen"] += 1
                row["gold_correct"] += value != labels.UNSUITABLE and value == raw["final"]
                continue
            row["labels"] += 1
            if spent is not None:
                seconds[annotator].append(spent)
            if raw["state"] == "resolved":
                final = labels.UNSUITABLE if raw["excluded"] else raw["final"]
                row["resolved"] += 1
                row["agree"] += value == final
    assert set(rows) == set(expected)
    for annotator, row in expected.items():
        assert rows[annotator]["labels"] == row["labels"]
        assert close(
            rows[annotator]["agreement_with_final"], row["agree"] / row["resolved"] if row["resolved"] else None
        )
        assert close(
            rows[annotator]["gold_accuracy"], row["gold_correct"] / row["gold_seen"] if row["gold_seen"] else None
        )
        assert close(
            rows[annotator]["median_seconds"], statistics.median(seconds[annotator]) if seconds[annotator] else None
        )


def test_difference_keeps_only_what_changed():
    assert tallies.difference({"a": 2, "b": 1, "c": 1}, {"a": 2, "b": 3, "d": 1}) == {"b": -2, "c": 1, "d": -1}


@given(values=st.lists(st.floats(min_value=0, max_value=9.9).map(lambda s: round(s, 1)), min_size=1, max_size=30))
def test_median_of_a_histogram_is_the_median(values):
    assert close(tallies.median_of_histogram(Counter(values)), statistics.median(values))


def test_long_times_are_kept_coarser():
    assert tallies.seconds_bucket(2.34) == 2.3
    assert tallies.seconds_bucket(12.34) == 12.0
    assert tallies.seconds_bucket(123.4) == 120.0
    assert tallies.seconds_bucket(1234.0) == 1200.0


def test_timeline_counts_labels_and_resolutions_per_day():
    rules = CorrectnessRules()
    item = tallies.ItemFacts(state="resolved", resolution="agreement", final_value=True, resolved_day="2026-01-02")
    kept = tallies.item_tallies(
        rules, 0.0, item, [tallies.LabelFacts(1, True, day="2026-01-01"), tallies.LabelFacts(2, True, day="2026-01-02")]
    )
    assert tallies.timeline(kept, "2026-01-01") == [
        {"day": "2026-01-01", "labels": 1, "resolved": 0},
        {"day": "2026-01-02", "labels": 1, "resolved": 1},
    ]
    assert tallies.timeline(kept, "2026-01-02") == [{"day": "2026-01-02", "labels": 1, "resolved": 1}]
