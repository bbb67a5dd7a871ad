"""Per-stage figures of the rules -> judge -> humans cascade, and the routing rules the cascade follows."""

from __future__ import annotations

from decimal import Decimal

import pytest

from core.metrics.cascade import cascade_report
from grading import cascade


def row(stage, status, rule, judge="", human=None, prompt=0, completion=0, cost="0"):
    return {
        "stage": stage,
        "status": status,
        "rule_status": rule,
        "judge_status": judge,
        "human_correct": human,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cost": Decimal(cost),
    }


ROWS = [
    row("rules", "correct", "correct", human=True),
    row("rules", "incorrect", "incorrect", human=True),  # a rule verdict humans overturned
    row("rules", "correct", "correct"),  # no label
    row("rules", "incorrect", "incorrect", "incorrect", human=False, prompt=100, completion=10, cost="0.001"),  # check
    row("judge", "correct", "inconclusive", "correct", human=True, prompt=120, completion=12, cost="0.002"),
    row("judge", "incorrect", "inconclusive", "incorrect", prompt=80, completion=8, cost="0.001"),
    row("human", "inconclusive", "inconclusive", "inconclusive", human=False, prompt=90, completion=9, cost="0.001"),
    row("human", "inconclusive", "correct", "incorrect", prompt=110, completion=11, cost="0.002"),  # disputed
]


def stages(report):
    return {figures["stage"]: figures for figures in report.as_dict()["stages"]}


def test_each_stage_reports_decided_items_coverage_and_precision_against_labels():
    by_stage = stages(cascade_report(ROWS))
    assert (by_stage["rules"]["decided"], by_stage["rules"]["coverage"]) == (4, 0.5)
    assert by_stage["rules"]["labeled"] == 3 and by_stage["rules"]["precision"] == pytest.approx(2 / 3)
    assert (by_stage["judge"]["decided"], by_stage["judge"]["coverage"]) == (2, 0.25)
    assert by_stage["judge"]["labeled"] == 1 and by_stage["judge"]["precision"] == 1.0
    human = by_stage["human"]
    assert (human["decided"], human["coverage"], human["undecided"], human["disputed"]) == (2, 0.25, 1, 1)
    assert human["precision"] is None and human["labeled"] == 1


def test_tokens_and_money_are_the_judge_calls_including_sampled_checks():
    report = cascade_report(ROWS).as_dict()
    by_stage = {figures["stage"]: figures for figures in report["stages"]}
    assert by_stage["rules"]["tokens"] == 0 and by_stage["rules"]["cost"] == 0
    assert by_stage["judge"]["calls"] == 5
    assert (by_stage["judge"]["prompt_tokens"], by_stage["judge"]["completion_tokens"]) == (500, 50)
    assert by_stage["judge"]["cost"] == pytest.approx(0.007) and report["cost"] == pytest.approx(0.007)
    assert report["tokens"] == 550
    assert report["cost_per_decided_item"] == pytest.approx(0.007 / 6)


def test_sampled_checks_disagreement_and_the_automatic_share():
    report = cascade_report(ROWS).as_dict()
    assert (report["sampled_checks"], report["disputed"]) == (2, 1)
    assert report["disagreement_rate"] == 0.5
    assert report["automatic"] == {"decided": 6, "coverage": 0.75, "labeled": 4, "precision": 0.75}


def test_grouped_rows_count_as_many_verdicts_as_they_stand_for():
    grouped = [
        {**row("rules", "correct", "correct", human=True), "n": 3},
        {
            **row(
                "judge", "incorrect", "inconclusive", "incorrect", human=None, prompt=300, completion=30, cost="0.003"
            ),
            "n": 3,
        },
        {**row("human", "inconclusive", "correct", "incorrect", prompt=200, completion=20, cost="0.002"), "n": 2},
    ]
    report = cascade_report(grouped).as_dict()
    by_stage = {figures["stage"]: figures for figures in report["stages"]}
    assert report["total"] == 8 and by_stage["rules"]["coverage"] == 3 / 8
    assert (by_stage["rules"]["labeled"], by_stage["rules"]["precision"]) == (3, 1.0)
    assert by_stage["judge"]["calls"] == 5 and report["tokens"] == 550
    assert (report["sampled_checks"], report["disputed"]) == (2, 2)
    with pytest.raises(ValueError, match="n must be a count"):
        cascade_report([{**row("rules", "correct", "correct"), "n": -1}])


def test_empty_and_invalid_rows():
    empty = cascade_report([]).as_dict()
    assert empty["total"] == 0 and empty["automatic"]["coverage"] is None and empty["cost_per_decided_item"] is None
    with pytest.raises(ValueError, match="row 1: stage"):
        cascade_report([row("", "correct", "correct")])
    with pytest.raises(ValueError, match="row 1: a verdict decided by judge"):
        cascade_report([row("judge", "inconclusive", "inconclusive", "inconclusive")])


def test_decide_follows_rules_then_judge_then_humans():
    assert cascade.decide("correct", None) == cascade.CascadeDecision("correct", cascade.RULES)
    assert cascade.decide("incorrect", "incorrect") == cascade.CascadeDecision("incorrect", cascade.RULES)
    assert cascade.decide("correct", "inconclusive") == cascade.CascadeDecision("correct", cascade.RULES)
    assert cascade.decide("correct", "incorrect") == cascade.CascadeDecision("inconclusive", "human", "disputed")
    assert cascade.decide("inconclusive", "incorrect") == cascade.CascadeDecision("incorrect", cascade.JUDGE)
    assert cascade.decide("inconclusive", "inconclusive") == cascade.CascadeDecision(
        "inconclusive", "human", "undecided"
    )
    with pytest.raises(ValueError):
        cascade.decide("inconclusive", None)
    assert cascade.route_of("human", "correct", "incorrect") == "disputed"
    assert cascade.route_of("human", "inconclusive", "inconclusive") == "undecided"
    assert cascade.route_of("rules", "correct", "") == ""


def test_sampling_is_deterministic_and_close_to_the_rate():
    assert not any(cascade.is_sampled(1, completion, 0.0) for completion in range(100))
    assert all(cascade.is_sampled(1, completion, 1.0) for completion in range(100))
    picked = [completion for completion in range(10_000) if cascade.is_sampled(7, completion, 0.2)]
    assert picked == [completion for completion in range(10_000) if cascade.is_sampled(7, completion, 0.2)]
    assert 1800 < len(picked) < 2200
    assert cascade.needs_judge("inconclusive", False) and cascade.needs_judge("correct", True)
    assert not cascade.needs_judge("incorrect", False)
