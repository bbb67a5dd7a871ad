"""Inputs built to escape the time limit: each returns a verdict, never a false "correct", and the
deadline fires instead of a parser's retry. How long each takes against the limit is measured by
bench/verify_adversarial.py, not here; the timeout marks only stop a hang from stalling the run."""

import threading

import pytest

from grading.answercheck import BatchItem, verify, verify_batch
from grading.answercheck.adversarial import ADVERSARIAL, EXTRACTION_TEXTS
from grading.answercheck.deadline import DeadlineExceeded, run_with_deadline
from grading.answercheck.extract import extract_final_answer

LIMIT = 2.0
HANG_GUARD = 120  # seconds; far above any limit, only so a hang fails instead of stalling


@pytest.mark.timeout(HANG_GUARD, method="thread")
@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_every_adversarial_input_gets_a_verdict(name):
    completion, reference = ADVERSARIAL[name]
    verdict = verify(completion, reference, timeout=LIMIT)
    assert verdict.status in ("correct", "incorrect", "inconclusive")


@pytest.mark.timeout(HANG_GUARD, method="thread")
@pytest.mark.parametrize(
    "name",
    [
        "huge binomial",
        "huge binomial with choose",
        "700 nested braces",
        "symbolic 12x12 determinant",
        "two symbolic 12x12 determinants",
        "high power of a polynomial",
        "7000 unclosed boxes",
        "unclosed boxes after prose",
        "huge factorial",
        "gamma of a million",
        "long reference",
        "hedge words around 5000 candidates",
    ],
)
def test_expensive_or_broken_answers_are_never_called_correct(name):
    completion, reference = ADVERSARIAL[name]
    assert verify(completion, reference, timeout=LIMIT).status != "correct"


@pytest.mark.timeout(HANG_GUARD, method="thread")
def test_a_comparison_that_runs_too_long_is_stopped_by_the_deadline():
    verdict = verify(*ADVERSARIAL["two symbolic 12x12 determinants"], timeout=LIMIT)
    assert verdict.status == "inconclusive"
    assert "timed out" in verdict.explanation


@pytest.mark.timeout(HANG_GUARD, method="thread")
def test_answers_whose_cost_is_in_c_are_refused_before_evaluation():
    for name in ("huge binomial", "700 nested braces", "huge factorial"):
        verdict = verify(*ADVERSARIAL[name], timeout=LIMIT)
        assert verdict.status == "inconclusive"
        assert "timed out" not in verdict.explanation, name


@pytest.mark.timeout(HANG_GUARD, method="thread")
def test_extraction_reads_long_adversarial_texts():
    assert extract_final_answer(EXTRACTION_TEXTS["20000 unclosed boxes"]) is None
    assert extract_final_answer(EXTRACTION_TEXTS["20000 boxes"]) == "1"
    assert extract_final_answer(EXTRACTION_TEXTS["100000 dollar signs"]) is None
    assert extract_final_answer(EXTRACTION_TEXTS["answer phrase then 30000 periods"]) == "1"
    assert extract_final_answer(EXTRACTION_TEXTS["20000 corrections"]) is not None


@pytest.mark.timeout(HANG_GUARD, method="thread")
def test_batch_items_each_get_a_verdict():
    names = [
        "7000 unclosed boxes",
        "huge binomial",
        "700 nested braces",
        "5000 boxes",
        "two symbolic 12x12 determinants",
    ]
    verdicts = verify_batch([BatchItem(*ADVERSARIAL[name]) for name in names], timeout=LIMIT)
    assert [verdict.status for verdict in verdicts] == [
        "inconclusive",
        "inconclusive",
        "inconclusive",
        "correct",
        "inconclusive",
    ]


@pytest.mark.timeout(HANG_GUARD, method="thread")
def test_verify_off_the_main_thread_is_stopped_by_the_deadline():
    outcome = {}

    def worker():
        outcome["verdict"] = verify(*ADVERSARIAL["two symbolic 12x12 determinants"], timeout=LIMIT)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert outcome["verdict"].status == "inconclusive"
    assert "timed out" in outcome["verdict"].explanation


def _swallow_timeouts():
    while True:
        try:
            while True:
                pass
        except Exception:  # what a parser that retries on any failure does
            continue


@pytest.mark.timeout(HANG_GUARD, method="thread")
def test_a_timeout_is_not_an_exception_that_parsers_catch():
    with pytest.raises(DeadlineExceeded):
        run_with_deadline(_swallow_timeouts, timeout=0.3)


def _double(value):
    return 2 * value


def _spin():
    while True:
        pass


@pytest.mark.timeout(HANG_GUARD, method="thread")
def test_the_deadline_does_not_leak_into_code_after_it():
    with pytest.raises(DeadlineExceeded):
        run_with_deadline(_spin, timeout=0.2)
    assert run_with_deadline(_double, 21, timeout=5) == 42


def _nested():
    return run_with_deadline(_spin, timeout=3600)


@pytest.mark.timeout(HANG_GUARD, method="thread")
def test_nested_deadlines_keep_the_earlier_end():
    # The inner hour-long deadline would hang the test; the outer one must end it.
    with pytest.raises(DeadlineExceeded):
        run_with_deadline(_nested, timeout=0.3)
