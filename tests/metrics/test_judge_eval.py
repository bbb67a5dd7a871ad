"""Judge meta-evaluation: confusion matrix with inconclusive verdicts, ratios, per-class and per-model tables."""

from __future__ import annotations

import pytest

from core.metrics.judge_eval import (
    agreement_cell,
    agreement_matrix,
    evaluate_verdicts,
    evaluation_from_counts,
    to_csv_rows,
)

# item, human_correct, verdict, answer_class, author model -> cell of the confusion matrix
ROWS = [
    (1, True, "correct", "A", "m1"),  # TP
    (2, True, "incorrect", "A", "m1"),  # FN
    (3, True, "inconclusive", "A", "m1"),  # FN: a correct completion not accepted
    (4, False, "incorrect", "B", "m1"),  # TN
    (5, False, "correct", "B", "m1"),  # FP
    (6, False, "inconclusive", "C", "m2"),  # FP: an incorrect completion not rejected
    (7, False, "incorrect", "C", "m2"),  # TN
    (8, True, "correct", "C", "m2"),  # TP
    (9, False, "Incorrect", "C", "m2"),  # TN (verdicts are case-insensitive)
]


def as_rows(rows):
    return [
        {"item_id": item, "human_correct": human, "verdict": verdict, "answer_class": letter, "model": model}
        for item, human, verdict, letter, model in rows
    ]


def test_overall_confusion_and_ratios():
    overall = evaluate_verdicts(as_rows(ROWS)).overall
    assert (overall.tp, overall.fp, overall.tn, overall.fn) == (2, 2, 3, 2)
    assert overall.n == 9
    assert overall.accuracy == pytest.approx(5 / 9)
    assert overall.inconclusive_rate == pytest.approx(2 / 9)
    assert overall.tpr == pytest.approx(2 / 4)
    assert overall.tnr == pytest.approx(3 / 5)
    assert overall.ppv == pytest.approx(2 / 4)
    assert overall.npv == pytest.approx(3 / 5)
    assert overall.f1_correct == pytest.approx(4 / 8)  # 2TP / (2TP + FP + FN)
    assert overall.f1_incorrect == pytest.approx(6 / 10)  # 2TN / (2TN + FN + FP)
    assert overall.macro_f1 == pytest.approx(0.55)


def test_accuracy_per_answer_class_and_unweighted_mean():
    evaluation = evaluate_verdicts(as_rows(ROWS))
    accuracies = {letter: report.accuracy for letter, report in evaluation.by_answer_class.items()}
    assert accuracies == pytest.approx({"A": 1 / 3, "B": 1 / 2, "C": 3 / 4})
    assert evaluation.mean_class_accuracy == pytest.approx((1 / 3 + 1 / 2 + 3 / 4) / 3)
    as_dict = evaluation.as_dict()
    assert as_dict["by_answer_class"]["C"] == {
        "n": 4,
        "accuracy": 0.75,
        "inconclusive_rate": 0.25,
        "decided": 3,
        "decided_coverage": 0.75,
        "decided_precision": 1.0,
        "macro_f1": pytest.approx((2 / 3 + 4 / 5) / 2),
    }


def test_calibrated_abstention_coverage_and_precision_of_decided_verdicts():
    evaluation = evaluate_verdicts(as_rows(ROWS))
    overall = evaluation.overall
    # 7 decided of 9; of those, TP 2 + TN 3 match the label, FN 1 (item 2) and FP 1 (item 5) do not.
    assert overall.decided == 7
    assert overall.decided_coverage == pytest.approx(7 / 9)
    assert overall.decided_precision == pytest.approx(5 / 7)
    by_class = evaluation.by_answer_class
    # A: one decided right (1), one decided wrong (2), one abstention (3).
    assert (by_class["A"].decided_coverage, by_class["A"].decided_precision) == pytest.approx((2 / 3, 1 / 2))
    assert (by_class["B"].decided_coverage, by_class["B"].decided_precision) == pytest.approx((1.0, 1 / 2))
    assert overall.as_dict()["decided_precision"] == pytest.approx(5 / 7)


def test_calibrated_abstention_per_fine_answer_type():
    rows = as_rows(ROWS)
    for row, code in zip(rows, ["A1", "A1", "A2", "B1", "B1", "C1", "C1", "C1", None]):
        row["answer_type"] = code
    by_type = evaluate_verdicts(rows).as_dict()["by_answer_type"]
    assert sorted(by_type) == ["A1", "A2", "B1", "C1"]  # a row without a type counts only elsewhere
    assert by_type["A1"] == {
        "n": 2,
        "decided": 2,
        "decided_coverage": 1.0,
        "decided_precision": 0.5,
        "macro_f1": pytest.approx((2 / 3 + 0) / 2),
    }
    assert (by_type["A2"]["decided_coverage"], by_type["A2"]["decided_precision"]) == (0.0, None)
    assert (by_type["C1"]["decided"], by_type["C1"]["decided_precision"]) == (2, 1.0)
    csv_scopes = [(row["scope"], row["name"]) for row in to_csv_rows(evaluate_verdicts(rows))]
    assert ("answer_type", "C1") in csv_scopes


def test_a_verifier_that_only_abstains_has_no_decided_precision_and_zero_coverage():
    overall = evaluate_verdicts(as_rows([(1, True, "inconclusive", "A", "m"), (2, False, "inconclusive", "A", "m")]))
    assert overall.overall.decided_coverage == 0.0 and overall.overall.decided_precision is None
    # Counted as wrong judgments, the abstentions give macro-F1 0 and a TNR of 0.
    assert overall.overall.macro_f1 == 0.0 and overall.overall.tnr == 0.0


def test_per_author_model():
    by_model = evaluate_verdicts(as_rows(ROWS)).by_model
    m2 = by_model["m2"]
    assert (m2.tp, m2.fp, m2.tn, m2.fn) == (1, 1, 2, 0)
    assert m2.tpr == 1.0
    assert m2.tnr == pytest.approx(2 / 3)
    assert m2.ppv == pytest.approx(1 / 2)
    assert m2.npv == 1.0
    assert m2.macro_f1 == pytest.approx((2 / 3 + 4 / 5) / 2)
    m1 = by_model["m1"]
    assert (m1.tp, m1.fp, m1.tn, m1.fn) == (1, 1, 1, 2)


def test_undefined_ratios_are_none():
    rows = as_rows([(1, True, "correct", "A", "m"), (2, True, "correct", "A", "m")])
    overall = evaluate_verdicts(rows).overall
    assert overall.tpr == 1.0 and overall.ppv == 1.0
    assert overall.tnr is None and overall.npv is None
    assert overall.f1_incorrect is None and overall.macro_f1 is None

    empty = evaluate_verdicts([])
    assert empty.overall.accuracy is None
    assert empty.mean_class_accuracy is None
    assert empty.as_dict()["overall"]["macro_f1"] is None


def test_all_inconclusive_is_all_wrong():
    overall = evaluate_verdicts(
        as_rows([(1, True, "inconclusive", "D", "m"), (2, False, "inconclusive", "D", "m")])
    ).overall
    assert (overall.tp, overall.fp, overall.tn, overall.fn) == (0, 1, 0, 1)
    assert overall.accuracy == 0.0
    assert overall.inconclusive_rate == 1.0
    assert overall.ppv == 0.0 and overall.npv == 0.0
    assert overall.macro_f1 == 0.0


def test_bad_rows_are_rejected_with_the_row():
    with pytest.raises(ValueError, match="row 1 .*verdict must be one of"):
        evaluate_verdicts([{"item_id": 1, "human_correct": True, "verdict": "maybe"}])
    with pytest.raises(ValueError, match="human_correct must be true or false"):
        evaluate_verdicts([{"item_id": 1, "human_correct": "yes", "verdict": "correct"}])
    with pytest.raises(ValueError, match="answer_class"):
        evaluate_verdicts([{"item_id": 1, "human_correct": True, "verdict": "correct", "answer_class": "E"}])
    with pytest.raises(ValueError, match="appears twice"):
        evaluate_verdicts(as_rows([(1, True, "correct", "A", "m"), (1, False, "correct", "A", "m")]))


def test_csv_rows():
    rows = to_csv_rows(evaluate_verdicts(as_rows(ROWS)))
    scopes = [(row["scope"], row["name"]) for row in rows]
    assert scopes == [
        ("overall", "all"),
        ("answer_class", "A"),
        ("answer_class", "B"),
        ("answer_class", "C"),
        ("answer_class", "mean"),
        ("model", "m1"),
        ("model", "m2"),
    ]
    assert rows[0]["macro_f1"] == pytest.approx(0.55)
    assert rows[4]["accuracy"] == pytest.approx((1 / 3 + 1 / 2 + 3 / 4) / 3)
    assert rows[4]["tp"] == ""  # not defined for the class mean
    assert len({tuple(row) for row in rows}) == 1  # every row has the same columns in the same order


def test_agreement_matrix_over_shared_items():
    matrix = agreement_matrix(
        {
            "judge-1": {1: "correct", 2: "incorrect", 3: "correct", 4: "incorrect"},
            "judge-2": {1: "correct", 2: "correct", 3: "correct", 4: "incorrect", 5: "inconclusive"},
        }
    )
    cell = matrix["judge-1"]["judge-2"]
    assert cell["shared_items"] == 4
    assert cell["agreement"] == pytest.approx(3 / 4)
    # p_o = 3/4; p_e = (2*3 + 2*1) / 16 = 1/2
    assert cell["kappa"] == pytest.approx(0.5)
    assert matrix["judge-2"]["judge-1"] == cell
    assert matrix["judge-2"]["judge-2"]["agreement"] == 1.0
    assert matrix["judge-1"]["judge-1"]["kappa"] == 1.0

    disjoint = agreement_matrix({"a": {1: "correct"}, "b": {2: "correct"}})
    assert disjoint["a"]["b"] == {"shared_items": 0, "agreement": None, "kappa": None}
    with pytest.raises(ValueError, match="judge 'a'"):
        agreement_matrix({"a": {1: "yes"}})


def test_evaluation_from_counts_equals_evaluation_from_rows():
    from collections import Counter

    from hypothesis import given, settings
    from hypothesis import strategies as st

    row = st.tuples(
        st.booleans(),
        st.sampled_from(["correct", "incorrect", "inconclusive"]),
        st.sampled_from(["A", "B", "D", None]),
        st.sampled_from(["A1", "B3", None]),
        st.sampled_from(["m1", "m2", None]),
    )

    @settings(max_examples=100, deadline=None)
    @given(rows=st.lists(row, max_size=40))
    def check(rows):
        from_rows = evaluate_verdicts(
            [
                {
                    "item_id": index,
                    "human_correct": human,
                    "verdict": verdict,
                    "answer_class": answer_class,
                    "answer_type": answer_type,
                    "model": model,
                }
                for index, (human, verdict, answer_class, answer_type, model) in enumerate(rows)
            ]
        )
        counted = Counter(rows)
        from_counts = evaluation_from_counts([(*key, times) for key, times in counted.items()])
        assert from_counts.as_dict() == from_rows.as_dict()
        by_item = {
            "first": {index: verdict for index, (_, verdict, _, _, _) in enumerate(rows)},
            "second": {index: verdict for index, (_, verdict, _, _, model) in enumerate(rows) if model},
        }
        matrix = agreement_matrix(by_item)
        pairs = Counter((by_item["first"][item], by_item["second"][item]) for item in by_item["second"])
        assert agreement_cell(pairs) == matrix["first"]["second"]

    check()
