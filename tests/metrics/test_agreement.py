"""Human agreement: raw agreement, Cohen's kappa, Krippendorff's alpha and per-annotator figures."""

from __future__ import annotations

import pytest

from core.metrics.agreement import (
    alpha_from_labels,
    annotator_stats,
    cohens_kappa,
    item_agreement_rate,
    krippendorff_alpha,
    pairwise_agreement,
    raw_agreement,
    reliability_table,
)


def test_cohens_kappa_textbook_example():
    # 50 items: both yes 20, A yes / B no 5, A no / B yes 10, both no 15 -> p_o = 0.7, p_e = 0.5, kappa = 0.4
    rater_a = ["yes"] * 25 + ["no"] * 25
    rater_b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert raw_agreement(rater_a, rater_b) == pytest.approx(0.7)
    assert cohens_kappa(rater_a, rater_b) == pytest.approx(0.4)


def test_cohens_kappa_edges():
    assert cohens_kappa([True, False], [True, False]) == 1.0
    assert cohens_kappa([True, False], [False, True]) == pytest.approx(-1.0)
    assert cohens_kappa(["a", "a"], ["a", "a"]) is None  # one category: chance agreement is certain
    assert cohens_kappa([], []) is None
    assert raw_agreement([], []) is None
    with pytest.raises(ValueError, match="same items"):
        cohens_kappa([1, 2], [1])


# The reliability data of the krippendorff package's documentation (3 coders x 15 units), as units x raters.
KRIPPENDORFF_EXAMPLE = [
    list(unit)
    for unit in zip(
        [None, None, None, None, None, 3, 4, 1, 2, 1, 1, 3, 3, None, 3],
        [1, None, 2, 1, 3, 3, 4, 3, None, None, None, None, None, None, None],
        [None, None, 2, 1, 3, 4, 4, None, 2, 1, 1, 3, 3, None, 4],
    )
]


def test_krippendorff_alpha_known_values():
    assert krippendorff_alpha(KRIPPENDORFF_EXAMPLE, "nominal") == pytest.approx(0.691358, abs=1e-6)
    assert krippendorff_alpha(KRIPPENDORFF_EXAMPLE, "interval") == pytest.approx(0.810845, abs=1e-6)


def test_krippendorff_alpha_hand_computed_nominal():
    # Units (a,a), (a,b), (b,b), (b,b): n = 8 pairable values, n_a = 3, n_b = 5, 2 disagreeing ordered pairs.
    # D_o = 2/8, D_e = 2*3*5 / (8*7) -> alpha = 1 - (2/8) / (30/56) = 8/15
    data = [["a", "a"], ["a", "b"], ["b", "b"], ["b", "b"]]
    assert krippendorff_alpha(data) == pytest.approx(8 / 15)
    assert krippendorff_alpha([[True, True], [False, False], [True, None]]) == 1.0
    assert krippendorff_alpha([[1, float("nan")], [2, 2], [3, 3]], "interval") == 1.0


def test_krippendorff_alpha_undefined_cases():
    assert krippendorff_alpha([["a", None], [None, "b"]]) is None  # no unit rated twice
    assert krippendorff_alpha([["a", "a"], ["a", "a"], ["b", None]]) is None  # one category among pairable values
    assert krippendorff_alpha([]) is None
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha([[1, 2]], "ordinal")
    with pytest.raises(ValueError, match="numbers"):
        krippendorff_alpha([["x", "y"], [1, 2]], "interval")


LABELS = {
    "item-1": {"ann-1": "correct", "ann-2": "correct"},
    "item-2": {"ann-1": "correct", "ann-2": "incorrect", "ann-3": "incorrect"},
    "item-3": {"ann-1": "incorrect", "ann-2": "incorrect"},
    "item-4": {"ann-3": "correct"},
}


def test_helpers_over_label_dicts():
    items, annotators, rows = reliability_table(LABELS)
    assert items == ["item-1", "item-2", "item-3", "item-4"]
    assert annotators == ["ann-1", "ann-2", "ann-3"]
    assert rows[3] == [None, None, "correct"]
    assert alpha_from_labels(LABELS) == pytest.approx(krippendorff_alpha(rows))
    assert item_agreement_rate(LABELS) == pytest.approx(2 / 3)
    assert item_agreement_rate({"x": {"a": 1}}) is None

    pairs = {(pair.annotator_a, pair.annotator_b): pair for pair in pairwise_agreement(LABELS)}
    first_second = pairs[("ann-1", "ann-2")]
    assert first_second.shared_items == 3
    assert first_second.agreement == pytest.approx(2 / 3)
    # ann-1: c, c, i; ann-2: c, i, i -> p_o = 2/3, p_e = (2*1 + 1*2) / 9 = 4/9, kappa = (2/3 - 4/9) / (5/9) = 2/5
    assert first_second.kappa == pytest.approx(0.4)
    assert pairs[("ann-1", "ann-3")].shared_items == 1
    assert pairs[("ann-1", "ann-3")].kappa == 0.0  # disagree on their one shared item: p_o = p_e = 0
    assert pairs[("ann-2", "ann-3")].agreement == 1.0
    assert pairs[("ann-2", "ann-3")].kappa is None  # agree on one item with one category: p_e = 1


def test_annotator_stats():
    labels = [
        {"item_id": 1, "annotator_id": "a", "value": True, "seconds": 30},
        {"item_id": 2, "annotator_id": "a", "value": False, "seconds": 90},
        {"item_id": 3, "annotator_id": "a", "value": True, "seconds": 60},
        {"item_id": 1, "annotator_id": "b", "value": False, "seconds": 10},
        {"item_id": 4, "annotator_id": "b", "value": True},
    ]
    stats = annotator_stats(labels, finals={1: True, 2: True, 3: True})
    assert stats["a"].labels == 3
    assert stats["a"].compared_with_final == 3
    assert stats["a"].agreement_with_final == pytest.approx(2 / 3)
    assert stats["a"].median_seconds == 60
    assert stats["b"].labels == 2
    assert stats["b"].compared_with_final == 1  # item 4 has no final label yet
    assert stats["b"].agreement_with_final == 0.0
    assert stats["b"].median_seconds == 10
    assert stats["a"].as_dict()["agreement_with_final"] == pytest.approx(2 / 3)
    assert annotator_stats([{"item_id": 9, "annotator_id": "c", "value": 1}], {})["c"].agreement_with_final is None
    with pytest.raises(ValueError, match="seconds"):
        annotator_stats([{"item_id": 1, "annotator_id": "a", "value": 1, "seconds": -1}], {})
    with pytest.raises(ValueError, match="missing"):
        annotator_stats([{"item_id": 1, "value": 1}], {})
