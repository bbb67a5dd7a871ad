"""Inputs built to escape the time limit. Every verdict must come back within the limit plus 0.5 s.

These are the only verifier tests that measure elapsed time, against that bound.
"""
import threading
import time

import pytest

from grading.answercheck import BatchItem, verify, verify_batch
from grading.answercheck.deadline import DeadlineExceeded, run_with_deadline
from grading.answercheck.extract import extract_final_answer

LIMIT = 2.0
SLACK = 0.5

_MATRIX = "\\\\".join("&".join(f"x_{{{row}{column}}}" for column in range(12)) for row in range(12))

ADVERSARIAL = {
    "7000 unclosed boxes": ("\\boxed{" * 7000, "1"),
    "unclosed boxes after prose": ("Let me think. " * 200 + "\\boxed{\\frac{" * 3000, "1"),
    "huge binomial": ("\\boxed{\\binom{1000000}{500000}}", "1"),
    "huge binomial with choose": ("\\boxed{{1000000 \\choose 500000}}", "1"),
    "700 nested braces": ("\\boxed{" + "{" * 700 + "1" + "}" * 700 + "}", "1"),
    "deeply nested fractions": ("\\boxed{" + "\\frac{1}{" * 150 + "2" + "}" * 150 + "}", "1"),
    "deeply nested roots": ("\\boxed{" + "\\sqrt{" * 200 + "2" + "}" * 200 + "}", "1"),
    "2000 nested parentheses": ("\\boxed{" + "(" * 2000 + "1" + ")" * 2000 + "}", "1"),
    "huge factorial": ("\\boxed{100000!}", "1"),
    "factorial of a power": ("\\boxed{(10^{5})!}", "1"),
    "double factorial": ("\\boxed{(100000)!!}", "1"),
    "power tower": ("\\boxed{2^{2^{2^{2^{2^{2}}}}}}", "1"),
    "power of a power": ("\\boxed{(2^{100})^{(3^{100})}}", "1"),
    "exponent product": ("\\boxed{2^{1000 \\cdot 1000 \\cdot 1000}}", "1"),
    "gamma of a million": ("\\boxed{\\Gamma(10^{6})}", "1"),
    "sum to a billion": ("\\boxed{\\sum_{k=1}^{10^{9}} k}", "1"),
    "symbolic 12x12 determinant": (f"\\boxed{{\\det\\begin{{pmatrix}}{_MATRIX}\\end{{pmatrix}}}}", "1"),
    "high power of a polynomial": ("\\boxed{(x+1)^{2000}}", "x^2+1"),
    "50k characters then a box": ("Let me think about this. " * 2000 + "\\boxed{5}", "5"),
    "50k characters, no marker": ("word 1.5, and $x$ then. " * 2100, "5"),
    "50k characters on one line with periods": ("The final answer is " + "1." * 25000, "1"),
    "50k dollar signs": ("$" * 50000, "1"),
    "5000 boxes": ("\\boxed{1} " * 5000, "1"),
    "10000 boxes without separators": ("\\boxed{7}" * 10000, "7"),
    "long reference": ("\\boxed{1}", "\\boxed{" * 5000),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_verify_returns_within_the_limit(name):
    completion, reference = ADVERSARIAL[name]
    started = time.perf_counter()
    verdict = verify(completion, reference, timeout=LIMIT)
    elapsed = time.perf_counter() - started
    assert elapsed <= LIMIT + SLACK, f"{name}: {elapsed:.2f} s"
    assert verdict.status in ("correct", "incorrect", "inconclusive")


@pytest.mark.parametrize("name", ["huge binomial", "700 nested braces", "symbolic 12x12 determinant", "high power of a polynomial"])
def test_expensive_answers_are_never_called_correct(name):
    completion, reference = ADVERSARIAL[name]
    assert verify(completion, reference, timeout=LIMIT).status != "correct"


def test_extraction_is_linear_in_the_length_of_the_text():
    for text in ("\\boxed{" * 20000, "$" * 100000, "The final answer is " + "1. " * 30000, "\\boxed{1} " * 20000):
        started = time.perf_counter()
        extract_final_answer(text)
        assert time.perf_counter() - started <= LIMIT + SLACK


def test_batch_items_each_return_within_the_limit():
    names = ["7000 unclosed boxes", "huge binomial", "700 nested braces", "5000 boxes", "symbolic 12x12 determinant"]
    items = [BatchItem(*ADVERSARIAL[name]) for name in names]
    started = time.perf_counter()
    verdicts = verify_batch(items, timeout=LIMIT)
    # Items run one after another here; each may take the whole limit.
    assert time.perf_counter() - started <= len(items) * (LIMIT + SLACK)
    assert [verdict.status for verdict in verdicts][:3] == ["inconclusive"] * 3


def test_verify_off_the_main_thread_returns_within_the_limit():
    outcome = {}

    def worker():
        started = time.perf_counter()
        outcome["status"] = verify(*ADVERSARIAL["symbolic 12x12 determinant"], timeout=LIMIT).status
        outcome["elapsed"] = time.perf_counter() - started

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(timeout=60)
    assert outcome["status"] != "correct"
    # A child process does the work off the main thread; its start-up is part of the first call.
    assert outcome["elapsed"] <= LIMIT + SLACK + 3


def _swallow_timeouts():
    while True:
        try:
            while True:
                pass
        except Exception:  # what a parser that retries on any failure does
            continue


def test_a_timeout_is_not_an_exception_that_parsers_catch():
    started = time.perf_counter()
    with pytest.raises(DeadlineExceeded):
        run_with_deadline(_swallow_timeouts, timeout=0.3)
    assert time.perf_counter() - started <= 0.3 + SLACK


def test_a_swallowed_timeout_fires_again_but_not_after_the_deadline_is_left():
    # The timer keeps firing until the deadline is left; code that swallows every exception still
    # spins, but the deadline must not leak into code that runs after it.
    with pytest.raises(DeadlineExceeded):
        run_with_deadline(_double_or_timeout, timeout=0.2)
    time.sleep(0.3)
    assert run_with_deadline(_double, 21, timeout=5) == 42


def _double(value):
    return 2 * value


def _double_or_timeout():
    while True:
        pass


def test_nested_deadlines_keep_the_earlier_end():
    started = time.perf_counter()
    with pytest.raises(DeadlineExceeded):
        run_with_deadline(_nested, timeout=0.3)
    assert time.perf_counter() - started <= 0.3 + SLACK


def _nested():
    return run_with_deadline(_double_or_timeout, timeout=10)
